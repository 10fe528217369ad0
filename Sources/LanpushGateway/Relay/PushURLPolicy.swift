import Foundation

/// Which `push_url` a client may register: where lanpush will POST that device's notifications (one-time codes and
/// door alerts among them) while it is gone. A LAN device must not be able to point that at an arbitrary host, at
/// services on the gateway's own machine or network segment, or back at the gateway itself (a relay loop).
///
/// Never the gateway itself. Otherwise allowed: an `https://` URL whose host is a name or a public address — not
/// loopback, link-local or private (`AddressClass.isInternal`) — or any URL under an entry of `relay.allowed_push_urls` (a relay on the LAN, a test's fake
/// relay) or the configured `relay.upstream`, matched by scheme, host, port and path prefix. Only literal addresses are judged here; names are
/// judged again, as resolved, when a request leaves (`HTTPClientLoop`'s address check).
struct PushURLPolicy {
    /// A URL's scheme, host, port (explicit or the scheme's default) and path.
    struct Origin: Equatable {
        var scheme: String
        var host: String
        var port: Int
        var path: String

        init?(_ text: String) {
            guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", let host = url.host?.lowercased(), !host.isEmpty,
                  url.user == nil, url.password == nil
            else { return nil }
            self.scheme = scheme
            self.host = AddressClass.unbracketed(host)
            self.port = url.port ?? (scheme == "https" ? 443 : 80)
            self.path = url.path
        }

        /// `other` lies under this entry: same scheme, host and port, and its path starts with this path at a
        /// segment boundary (`/relay` covers `/relay/api/...`, not `/relayer`).
        func covers(_ other: Origin) -> Bool {
            guard scheme == other.scheme, port == other.port,
                  host == other.host || AddressClass.sameAddress(host, other.host)
            else { return false }
            let prefix = path.hasSuffix("/") ? String(path.dropLast()) : path
            return prefix.isEmpty || other.path == prefix || other.path.hasPrefix(prefix + "/")
        }
    }

    let allowed: [Origin]
    /// The gateway's own addresses and names, and the port it listens on.
    let localAddresses: () -> [String]
    let localNames: () -> [String]
    let port: () -> Int

    init(allowed: [String], localAddresses: @escaping () -> [String], localNames: @escaping () -> [String],
         port: @escaping () -> Int) {
        self.allowed = allowed.compactMap(Origin.init)
        self.localAddresses = localAddresses
        self.localNames = localNames
        self.port = port
    }

    /// `nil` when `url` may be registered; otherwise the rule it breaks and why.
    func refusal(_ url: String) -> (rule: String, message: String)? {
        guard let origin = Origin(url) else {
            return ("url", "push_url: must be an https:// URL with a host")
        }
        // Before the list: a listed address that is the gateway's own listener still loops.
        if pointsAtGateway(origin) {
            return ("loop", "push_url: points at this gateway itself (\(origin.host):\(origin.port)); that would loop")
        }
        if allowed.contains(where: { $0.covers(origin) }) { return nil }
        guard origin.scheme == "https" else {
            return ("https", "push_url: must be https:// (or under relay.allowed_push_urls)")
        }
        if AddressClass.isInternal(origin.host) {
            return ("address", "push_url: a loopback, link-local or private address is allowed only under relay.allowed_push_urls")
        }
        return nil
    }

    /// The gateway's own listener: one of its addresses (or names, or loopback) with the port it listens on.
    func pointsAtGateway(_ origin: Origin) -> Bool {
        guard origin.port == port() else { return false }
        if AddressClass.isLoopback(origin.host) { return true }
        if localNames().contains(origin.host) { return true }
        return localAddresses().contains { AddressClass.sameAddress($0, origin.host) }
    }
}
