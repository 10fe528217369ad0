import Foundation

/// The `host:port` entries a pairing URL offers a client: the address the admin reached the gateway at (unless it
/// was loopback: a phone cannot use that), then the listen address or this host's LAN addresses (IPv4 first).
enum PairingAddresses {
    static func list(listenHost: String, port: Int, requestHost: String?, hostAddresses: () -> [String] = { Host.current().addresses }) -> [String] {
        var out = [String]()
        func add(_ entry: String) { if !out.contains(entry) { out.append(entry) } }
        if let requestHost, !requestHost.isEmpty, !isLoopback(host(of: requestHost)) {
            add(requestHost.contains(":") && !requestHost.hasPrefix("[") && requestHost.split(separator: ":").count > 2
                ? "[\(requestHost)]:\(port)" : (requestHost.contains(":") ? requestHost : "\(requestHost):\(port)"))
        }
        let wildcard = listenHost.isEmpty || listenHost == "0.0.0.0" || listenHost == "::" || listenHost == "*"
        if !wildcard {
            if !isLoopback(listenHost) { add(listenHost.contains(":") ? "[\(listenHost)]:\(port)" : "\(listenHost):\(port)") }
        } else {
            let usable = hostAddresses().filter { !isLoopback($0) && !$0.lowercased().hasPrefix("fe80") && !$0.hasPrefix("169.254.") }
            for a in usable where !a.contains(":") { add("\(a):\(port)") }
            for a in usable where a.contains(":") { add("[\(a)]:\(port)") }
        }
        if out.isEmpty { add("\(wildcard || listenHost.contains(":") ? "127.0.0.1" : listenHost):\(port)") }
        return out
    }

    /// The host part of a `Host` header (`name`, `name:port`, `[v6]:port`).
    static func host(of header: String) -> String {
        if header.hasPrefix("["), let end = header.firstIndex(of: "]") { return String(header[header.index(after: header.startIndex)..<end]) }
        return header.split(separator: ":").count == 2 ? String(header.split(separator: ":")[0]) : header
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasPrefix("127.") || host == "::1"
    }
}
