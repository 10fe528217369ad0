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
    public let headers: [String: String]
    public let body: [UInt8]
    /// The peer's IP address as text (IPv4-mapped IPv6 addresses are shown as lws prints them).
    public let remoteAddress: String

    public init(
        method: HTTPMethod, path: String, queryItems: [(name: String, value: String)] = [],
        headers: [String: String] = [:], body: [UInt8] = [], remoteAddress: String = ""
    ) {
        var h: [String: String] = [:]
        h.reserveCapacity(headers.count)
        for (k, v) in headers { h[k.lowercased()] = v }
        self.init(
            method: method, path: path, queryItems: queryItems, lowercasedHeaders: h, body: body,
            remoteAddress: remoteAddress)
    }

    /// The adapter's own path: header names are lower case already (no rebuilt dictionary per request).
    init(
        method: HTTPMethod, path: String, queryItems: [(name: String, value: String)],
        lowercasedHeaders headers: [String: String], body: [UInt8], remoteAddress: String
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
        headers[name.lowercased()]
    }
}

/// An HTTP answer the adapter produced itself, before the delegate saw the request
/// (411 no Content-Length, 413 body too large, 405 method, 400 bad Content-Length, 404 WebSocket path,
/// 503 stopping). The delegate may render the body (``LWSServerDelegate/rejectHTTP(_:)``).
public struct HTTPRejection: Sendable, Equatable {
    public let status: Int
    public let message: String
    public let field: String
    public let rule: String

    public init(status: Int, message: String, field: String, rule: String) {
        self.status = status
        self.message = message
        self.field = field
        self.rule = rule
    }

    /// `{"message":"...","field":"...","rule":"..."}`
    public var defaultJSON: [UInt8] {
        JSONText.object([("message", message), ("field", field), ("rule", rule)])
    }
}

/// The handle through which the delegate answers one HTTP request — at once or later (e.g. after a disk
/// commit), always on the loop thread.
///
/// The first `respond` wins; later calls are ignored. If the client has gone away (or the request was
/// already answered) `respond` is a no-op: the handle never touches a dead connection.
public final class HTTPResponse {
    weak var server: LWSServer?
    let transactionID: UInt64
    public let method: HTTPMethod
    public private(set) var hasResponded = false

    init(server: LWSServer, transactionID: UInt64, method: HTTPMethod) {
        self.server = server
        self.transactionID = transactionID
        self.method = method
    }

    /// Whether the connection still waits for this answer. Loop thread only.
    public var isPending: Bool {
        !hasResponded && (server?.httpTransactionAlive(transactionID) ?? false)
    }

    /// Queues the answer; it is written when the socket is writable, then the connection is ready for
    /// the next keep-alive request. `headers` are extra headers (`Content-Type` and `Content-Length` are
    /// set by the adapter). For HEAD requests only the headers go out. Loop thread only.
    public func respond(
        status: Int, headers: [(String, String)] = [], body: [UInt8],
        contentType: String = "application/json"
    ) {
        guard !hasResponded else { return }
        hasResponded = true
        server?.queueHTTPResponse(
            transactionID: transactionID,
            PendingHTTPResponse(
                status: status, contentType: contentType, headers: headers, body: body,
                closeAfter: false))
    }

    /// Convenience: a JSON body given as a `String`.
    public func respond(status: Int, headers: [(String, String)] = [], json: String) {
        respond(status: status, headers: headers, body: Array(json.utf8))
    }
}

struct PendingHTTPResponse {
    var status: Int
    var contentType: String
    var headers: [(String, String)]
    var body: [UInt8]
    var closeAfter: Bool
    var headersSent = false
    var bodyOffset = 0
}

/// Minimal JSON string rendering for the adapter's own error bodies.
enum JSONText {
    static func escape(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): out.append(contentsOf: [92, 92])
            case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    static func object(_ pairs: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, (k, v)) in pairs.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            escape(k, into: &out)
            out.append(UInt8(ascii: ":"))
            escape(v, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
