import Foundation
import LanpushLWS

/// Which names address the gateway, and which pages may talk to it — the defences against a web page that a LAN
/// browser visits.
///
/// - **DNS rebinding**: a page on `evil.example` can make its own name resolve to the gateway's address and then
///   read the answers as same-origin. The browser still sends `Host: evil.example`, so only known names are served:
///   IP literals, `localhost`, `*.local` (mDNS), this host's own names and `http.allowed_hosts`.
/// - **Cross-site requests**: a page on any origin can post to the gateway without a preflight. The browser marks
///   such requests with `Origin`; an HTTP request with an `Origin` other than the gateway's own pages' is refused,
///   and a WebSocket handshake's `Origin` must name an allowed host (an HA dashboard on `homeassistant.local` may
///   connect). Clients that send no `Origin` (the client libraries, HA, curl, the Scripting app) are not affected.
struct HostAllowList {
    /// Lower case; an entry `*.example.net` allows every subdomain of `example.net`.
    let configured: [String]
    let localNames: () -> [String]

    /// The host part of a `Host` header or of an origin's authority (`name`, `name:port`, `[v6]:port`), lower case,
    /// brackets kept for IPv6.
    static func hostPart(_ authority: String) -> String {
        let a = authority.lowercased()
        if a.hasPrefix("["), let end = a.firstIndex(of: "]") { return String(a[...end]) }
        if let colon = a.lastIndex(of: ":"), a.firstIndex(of: ":") == colon { return String(a[..<colon]) }
        return a
    }

    /// Whether a host name (no port) addresses this gateway.
    func allows(host raw: String) -> Bool {
        var host = raw.lowercased()
        if host.hasSuffix(".") { host.removeLast() }  // the absolute form of a name
        guard !host.isEmpty else { return false }
        if AddressClass.isIPLiteral(host) || host == "localhost" || host.hasSuffix(".local") { return true }
        if localNames().contains(host) { return true }
        return configured.contains { entry in
            entry.hasPrefix("*.") ? host.hasSuffix(entry.dropFirst()) && host.count > entry.count - 1 : entry == host
        }
    }

    /// `nil` when an HTTP request may be served; otherwise why not (field, message).
    func refusal(host: String?, origin: String?) -> (field: String, message: String)? {
        guard let host, !host.isEmpty, allows(host: Self.hostPart(host)) else {
            return ("host", "Host '\(host ?? "")' does not name this gateway (use its address, a .local name, or add it to http.allowed_hosts)")
        }
        if let origin {
            // A page's own requests carry its origin; the gateway serves its pages on the same port for http and
            // https, so the scheme is not compared.
            guard let authority = Self.authority(ofOrigin: origin), authority == host.lowercased() else {
                return ("origin", "requests from another site's pages are refused (Origin '\(origin)')")
            }
        }
        return nil
    }

    /// `nil` when a WebSocket handshake may proceed; otherwise why not.
    func webSocketRefusal(host: String?, origin: String?) -> (field: String, message: String)? {
        guard let host, !host.isEmpty, allows(host: Self.hostPart(host)) else {
            return ("host", "Host '\(host ?? "")' does not name this gateway (use its address, a .local name, or add it to http.allowed_hosts)")
        }
        if let origin {
            guard let authority = Self.authority(ofOrigin: origin), allows(host: Self.hostPart(authority)) else {
                return ("origin", "WebSocket sessions from pages on '\(origin)' are refused (add its host to http.allowed_hosts)")
            }
        }
        return nil
    }

    /// The adapter's answer to a refused WebSocket handshake: 403 naming the field and the rule.
    static func rejection(_ refused: (field: String, message: String)) -> HTTPRejection {
        HTTPRejection(status: 403, message: refused.message, field: refused.field,
                      rule: refused.field == "host" ? "allowed_hosts" : "origin")
    }

    /// `host[:port]` of a serialized origin (`http://192.168.1.5:8765`), lower case, the default port left out as
    /// browsers leave it out of `Host`; `nil` for `null` or anything not `http(s)://authority`.
    static func authority(ofOrigin origin: String) -> String? {
        guard let url = URLComponents(string: origin), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", var host = url.host, !host.isEmpty,
              url.path.isEmpty || url.path == "/", url.query == nil, url.user == nil
        else { return nil }
        host = host.lowercased()
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        guard let port = url.port, port != (scheme == "https" ? 443 : 80) else { return host }
        return "\(host):\(port)"
    }
}
