/// Request methods the adapter accepts; anything else is answered 405 before the delegate sees it.
public enum HTTPMethod: String, Sendable, CaseIterable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
    case delete = "DELETE"
    case patch = "PATCH"
    case options = "OPTIONS"
    case head = "HEAD"
}

/// A complete HTTP request (headers and the whole body), or the handshake request of a WebSocket.
///
/// Everything is copied out of lws before the delegate sees it, so the value stays valid after the
/// connection is gone.
public struct HTTPRequest: Sendable {
    public let method: HTTPMethod
    /// The path without the query, as lws delivers it: percent-decoded, `..` segments resolved.
    public let path: String
    /// The query's `name=value` pairs in order, as lws delivers them: percent-decoded (and `+` as space).
    public let queryItems: [(name: String, value: String)]
    /// `queryItems` as a dictionary; a repeated name keeps its first value.
    public let query: [String: String]
    /// The query rebuilt from the decoded pairs, joined by `&` (lws keeps no undecoded copy).
    public let rawQuery: String
    /// Captured request headers, names in lower case.
    public let headers: HTTPHeaderFields
    public let body: [UInt8]
    /// The peer's IP address as text (IPv4-mapped IPv6 addresses are shown as lws prints them).
    public let remoteAddress: String

    public init(
        method: HTTPMethod, path: String, queryItems: [(name: String, value: String)] = [],
        headers: [String: String] = [:], body: [UInt8] = [], remoteAddress: String = ""
    ) {
        self.init(
            method: method, path: path, queryItems: queryItems, lowercasedHeaders: HTTPHeaderFields(headers), body: body,
            remoteAddress: remoteAddress)
    }

    /// The adapter's own path: header names are lower case already (no rebuilt dictionary per request).
    init(
        method: HTTPMethod, path: String, queryItems: [(name: String, value: String)],
        lowercasedHeaders headers: HTTPHeaderFields, body: [UInt8], remoteAddress: String
    ) {
        self.method = method
        self.path = path
        self.queryItems = queryItems
        if queryItems.isEmpty {
            self.query = [:]
            self.rawQuery = ""
        } else {
            var q: [String: String] = [:]
            for item in queryItems where q[item.name] == nil { q[item.name] = item.value }
            self.query = q
            self.rawQuery = queryItems.map { $0.value.isEmpty ? $0.name : "\($0.name)=\($0.value)" }
                .joined(separator: "&")
        }
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// A captured header by (case-insensitive) name: `authorization`, `content-type`, `content-length`,
    /// `host`, `user-agent`, `accept`, `origin`, `x-forwarded-for`, ... plus any of
    /// ``LWSServerOptions/extraHeaderNames``.
    public func header(_ name: String) -> String? {
        // The gateway asks in lower case: no lowered copy of the name for it.
        headers[name] ?? (name.utf8.contains { $0 >= 65 && $0 <= 90 } ? headers[name.lowercased()] : nil)
    }
}
