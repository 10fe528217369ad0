/// Minimal JSON string rendering for the adapter's own error bodies.
enum JSONText {
    static func escape(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): out.append(contentsOf: [92, 92])
            case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    static func object(_ pairs: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, (k, v)) in pairs.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            escape(k, into: &out)
            out.append(UInt8(ascii: ":"))
            escape(v, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
