import Foundation

/// The `host:port` entries a pairing URL offers a client, built only from the gateway's own addresses: the listen
/// address, or this host's LAN addresses (IPv4 first). The `Host` the admin reached the gateway by only puts one of
/// those first — a name or address the request made up (a page's, a rebinding attacker's) is never offered.
enum PairingAddresses {
    static func list(listenHost: String, port: Int, requestHost: String?, local: LocalHost.Snapshot) -> [String] {
        var out = [String]()
        func add(_ entry: String) { if !out.contains(entry) { out.append(entry) } }
        func entry(_ address: String) -> String { address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)" }
        let wildcard = listenHost.isEmpty || listenHost == "0.0.0.0" || listenHost == "::" || listenHost == "*"
        var own: [String]
        if !wildcard {
            own = AddressClass.isLoopback(listenHost) ? [] : [listenHost]
        } else {
            let usable = local.addresses.filter { !AddressClass.isLoopback($0) && !AddressClass.isLinkLocal($0) }
            own = usable.filter { !$0.contains(":") } + usable.filter { $0.contains(":") }
        }
        if let requestHost, !requestHost.isEmpty {
            let asked = AddressClass.unbracketed(HostAllowList.hostPart(requestHost))
            if let match = own.first(where: { AddressClass.sameAddress($0, asked) }) {
                add(entry(match))
            } else if wildcard, !AddressClass.isLoopback(asked), local.names.contains(asked), asked.hasSuffix(".local") {
                add(entry(asked))  // this host's own mDNS name, as the admin used it
            }
        }
        for address in own { add(entry(address)) }
        if out.isEmpty { add(entry(wildcard || listenHost.contains(":") ? "127.0.0.1" : listenHost)) }
        return out
    }
}
