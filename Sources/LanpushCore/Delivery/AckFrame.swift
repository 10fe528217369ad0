/// The one client frame every delivered frame brings back, `{"type":"ack","seq":N}`, read without building a JSON
/// object: a general parse makes a dictionary, two strings and a number of it and looks both keys up again —
/// ~3,600 instructions an ack, as much as the rest of the ack's work — where this reads ~30 bytes once.
///
/// It answers only for the plain form: an object with exactly the members `type` = `"ack"` and `seq` = a JSON
/// integer from 0 to 2^53 without sign, fraction or exponent, in either order, with any JSON whitespace between
/// tokens and no escapes in the keys or the value. Everything else — other members, a duplicate, `2.0`, an
/// escaped key, anything malformed — gets `nil` and goes to the general parser, which gives it the same meaning
/// (or the same error) it always had; so this decides nothing the general path would decide otherwise.
public enum AckFrame {
    /// The acknowledged seq of a plain ack frame, or `nil` for any other frame.
    public static func seq(_ bytes: [UInt8]) -> UInt64? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer)
            return reader.ack()
        }
    }

    /// 2^53: the largest seq a client may send (what a JSON number holds exactly).
    static let largest: UInt64 = 9_007_199_254_740_992

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        mutating func ack() -> UInt64? {
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return nil }
            var sawType = false
            var seq: UInt64?
            for member in 0..<2 {
                if member == 1 {
                    guard take(UInt8(ascii: ",")) else { return nil }
                }
                skipSpace()
                if take(literal: #""type""#) {
                    guard !sawType, colon(), take(literal: #""ack""#) else { return nil }
                    sawType = true
                } else if take(literal: #""seq""#) {
                    guard seq == nil, colon(), let n = integer() else { return nil }
                    seq = n
                } else {
                    return nil
                }
                skipSpace()
            }
            guard sawType, let seq, take(UInt8(ascii: "}")) else { return nil }
            skipSpace()
            return at == bytes.count ? seq : nil
        }

        /// `:` with the whitespace around it.
        private mutating func colon() -> Bool {
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipSpace()
            return true
        }

        /// A JSON integer without sign, fraction or exponent, at most 2^53; the next byte must end the number.
        private mutating func integer() -> UInt64? {
            let start = at
            var value: UInt64 = 0
            while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") {
                guard at - start < 16 else { return nil }  // 2^53 has 16 digits
                value = value * 10 + UInt64(bytes[at] - UInt8(ascii: "0"))
                at += 1
            }
            let digits = at - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0"), value <= AckFrame.largest else { return nil }
            if at < bytes.count, bytes[at] == UInt8(ascii: ".") || bytes[at] | 0x20 == UInt8(ascii: "e") { return nil }
            return value
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        private mutating func take(literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - at >= count else { return false }
            let text = literal.utf8Start
            for i in 0..<count where bytes[at + i] != text[i] { return false }
            at += count
            return true
        }

        /// JSON's whitespace: space, tab, line feed, carriage return.
        private mutating func skipSpace() {
            while at < bytes.count {
                switch bytes[at] {
                case 0x20, 0x09, 0x0A, 0x0D: at += 1
                default: return
                }
            }
        }
    }
}
