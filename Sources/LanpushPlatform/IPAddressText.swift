#if canImport(Glibc)
    import Glibc
#endif

/// Whether a string is an IP address literal, as the C library reads one (`inet_pton`): the gateway tells a `Host`
/// header or a `push_url` that names an address from one that names a host, and never resolves either to decide.
extension Platform {
    /// `192.168.1.5`, `::1`, `fe80::1` (no brackets, no zone): true. Names, and IPv4 forms `inet_pton` refuses
    /// (`010.1.1.1`, `1.2.3`), false.
    public static func isIPAddress(_ text: String) -> Bool {
        var storage = [UInt8](repeating: 0, count: 16)
        return text.withCString { s in
            inet_pton(AF_INET, s, &storage) == 1 || inet_pton(AF_INET6, s, &storage) == 1
        }
    }

    /// The 16 bytes of an IPv6 address, or the 4 of an IPv4 one; `nil` for anything else.
    public static func ipAddressBytes(_ text: String) -> [UInt8]? {
        var v4 = [UInt8](repeating: 0, count: 4)
        var v6 = [UInt8](repeating: 0, count: 16)
        return text.withCString { s in
            if inet_pton(AF_INET, s, &v4) == 1 { return v4 }
            if inet_pton(AF_INET6, s, &v6) == 1 { return v6 }
            return nil
        }
    }
}
