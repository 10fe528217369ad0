extension Sequence<UInt8> {
    /// The bytes as lowercase hex, two digits each: how token hashes and certificate fingerprints are written.
    /// Built by hand because `String(format: "%02x")` per byte goes through Foundation's formatter every time, and
    /// every authentication hashes a token (it was the largest cost of an in-process session's set-up).
    var lowercaseHex: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
