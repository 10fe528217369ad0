import Foundation
import LanpushPlatform

/// What the gateway knows of the machine it runs on: its addresses and its names. They decide what a pairing URL
/// offers, which `Host` names address the gateway (DNS rebinding), and which `push_url`s would loop back into it.
/// Read from the system at most every `refresh` seconds (addresses change with DHCP and Wi-Fi).
package final class LocalHost {
    package struct Snapshot: Equatable {
        /// Interface addresses as text (`192.168.1.5`, `fe80::1`), loopback included.
        package var addresses: [String]
        /// The host name, its first label and that label under `.local` (mDNS), lower case.
        package var names: [String]

        package init(addresses: [String], names: [String]) {
            self.addresses = addresses
            self.names = names
        }
    }

    private let read: () -> Snapshot
    private let refresh: Double
    private var cached: (at: Double, value: Snapshot)?

    package init(refresh: Double = 30, read: @escaping () -> Snapshot = LocalHost.system) {
        self.read = read
        self.refresh = refresh
    }

    package func current(now: Double) -> Snapshot {
        if let cached, now - cached.at < refresh, now >= cached.at { return cached.value }
        let value = read()
        cached = (now, value)
        return value
    }

    /// A fixed host, for tests.
    package static func fixed(addresses: [String], names: [String]) -> LocalHost {
        LocalHost { Snapshot(addresses: addresses, names: names) }
    }

    package static func system() -> Snapshot {
        let full = ProcessInfo.processInfo.hostName.lowercased()
        let label = full.split(separator: ".").first.map(String.init) ?? full
        var names = [full]
        if !label.isEmpty, label != full { names.append(label) }
        if !label.isEmpty { names.append("\(label).local") }
        // Foundation reads the interfaces (getifaddrs); IPv6 addresses may carry a zone ("fe80::1%eth0").
        let addresses = Host.current().addresses.map { $0.split(separator: "%").first.map(String.init) ?? $0 }
        return Snapshot(addresses: addresses, names: names)
    }
}

/// Address classes that never name a relay on the Internet, read from the address's bytes.
enum AddressClass {
    /// `127.0.0.0/8`, `::1`, `0.0.0.0`, `::` (and their IPv4-mapped forms), `localhost` and its subdomains.
    static func isLoopback(_ host: String) -> Bool {
        let h = unbracketed(host).lowercased()
        if h == "localhost" || h.hasSuffix(".localhost") { return true }
        guard let bytes = v4Mapped(Platform.ipAddressBytes(h)) else { return false }
        if bytes.count == 4 { return bytes[0] == 127 || bytes == [0, 0, 0, 0] }
        return bytes == [UInt8](repeating: 0, count: 15) + [1] || bytes == [UInt8](repeating: 0, count: 16)
    }

    /// `169.254.0.0/16` and `fe80::/10`.
    static func isLinkLocal(_ host: String) -> Bool {
        guard let bytes = v4Mapped(Platform.ipAddressBytes(unbracketed(host))) else { return false }
        if bytes.count == 4 { return bytes[0] == 169 && bytes[1] == 254 }
        return bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80
    }

    /// An address no relay on the Internet has: loopback, link-local, the private ranges (`10/8`, `172.16/12`,
    /// `192.168/16`, `100.64/10` shared address space, `fc00::/7` unique local), `0/8` and multicast. A client's
    /// push_url must not make the gateway post to the machines of its own network.
    static func isInternal(_ host: String) -> Bool {
        if isLoopback(host) || isLinkLocal(host) { return true }
        guard let b = v4Mapped(Platform.ipAddressBytes(unbracketed(host))) else { return false }
        if b.count == 4 {
            return b[0] == 10 || b[0] == 0 || (b[0] == 172 && b[1] & 0xF0 == 16) || (b[0] == 192 && b[1] == 168)
                || (b[0] == 100 && b[1] & 0xC0 == 64) || b[0] >= 224
        }
        return b[0] & 0xFE == 0xFC || b[0] == 0xFF
    }

    /// A literal IPv4 or IPv6 address (IPv6 in brackets or not) rather than a name.
    static func isIPLiteral(_ host: String) -> Bool {
        Platform.isIPAddress(unbracketed(host))
    }

    /// Whether two address literals are the same address (`::ffff:10.0.0.1` is `10.0.0.1`).
    static func sameAddress(_ a: String, _ b: String) -> Bool {
        guard let x = v4Mapped(Platform.ipAddressBytes(unbracketed(a))),
              let y = v4Mapped(Platform.ipAddressBytes(unbracketed(b)))
        else { return false }
        return x == y
    }

    static func unbracketed(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// An IPv4-mapped IPv6 address as its four IPv4 bytes.
    private static func v4Mapped(_ bytes: [UInt8]?) -> [UInt8]? {
        guard let bytes, bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF
        else { return bytes }
        return Array(bytes[12...])
    }
}
