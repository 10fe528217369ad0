/// A parsed `ws://` / `wss://` URL.
public struct WebSocketURL: Sendable, Equatable {
    public let secure: Bool
    /// Host name or address as connected to (IPv6 without brackets).
    public let host: String
    public let port: Int
    /// Path and query, at least "/".
    public let path: String

    /// Accepts `ws`, `wss`, and `http` / `https` as their aliases. Userinfo and fragments are dropped.
    public init(_ text: String) throws(WSClientError) {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else {
            throw .invalidURL("'\(text)' has no scheme")
        }
        let scheme = text[..<colon].lowercased()
        switch scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: throw .invalidURL("scheme '\(scheme)' (use ws:// or wss://)")
        }
        var rest = text[text.index(colon, offsetBy: 3)...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        var pathPart = String(rest[authorityEnd...])
        if pathPart.isEmpty { pathPart = "/" } else if pathPart.first == "?" { pathPart = "/" + pathPart }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var hostPart: Substring
        var portPart: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL("unclosed '[' in '\(text)'") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw .invalidURL("junk after ']' in '\(text)'") }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        } else {
            hostPart = authority
        }
        guard !hostPart.isEmpty else { throw .invalidURL("no host in '\(text)'") }
        guard !hostPart.unicodeScalars.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" || $0 == "/" }) else {
            throw .invalidURL("bad host in '\(text)'")
        }
        host = String(hostPart)
        if let portPart {
            guard let p = Int(portPart), (1...65535).contains(p) else {
                throw .invalidURL("bad port '\(portPart)' in '\(text)'")
            }
            port = p
        } else {
            port = secure ? 443 : 80
        }
        guard !pathPart.unicodeScalars.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw .invalidURL("spaces in the path of '\(text)'")
        }
        path = pathPart
    }

    /// The `Host:` header value: brackets around IPv6, the port unless it is the scheme's default.
    public var hostHeader: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? h : "\(h):\(port)"
    }

    public var description: String { "\(secure ? "wss" : "ws")://\(hostHeader)\(path)" }
}
