extension Sequence<UInt8> {
    /// The bytes as lowercase hex, two digits each: how token hashes and certificate fingerprints are written.
    /// Built by hand because `String(format: "%02x")` per byte goes through Foundation's formatter every time, and
    /// every authentication hashes a token (it was the largest cost of an in-process session's set-up).
    var lowercaseHex: String {
        var out: [UInt8] = []
        out.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            out.append(Self.digit(byte >> 4))
            out.append(Self.digit(byte & 0x0f))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `0`-`9` then `a`-`f` in ASCII.
    private static func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x61 - 10 + nibble }
}
