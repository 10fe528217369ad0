import FuzzSupport
import LanpushCore

/// The strict JSON parser (every body, every client frame and every stored row goes through it): no crash, no
/// hang on any bytes; what it accepts survives the writer and comes back equal; and an object with a repeated key
/// is refused however the key is spelled, so a relayed body cannot mean something else to a parser that keeps the
/// first of two members. The ack fast path (`AckFrame`) reads only what the parser reads as the same ack.
@main
struct FuzzJSON {
    static func main() {
        runFuzzer { bytes in
            if let seq = AckFrame.seq(bytes) {
                let parsed = (try? JSONValue.parse(bytes))?.objectValue
                Fuzz.require(
                    parsed?.count == 2 && parsed?["type"] == .string("ack") && parsed?["seq"] == .number(Double(seq)),
                    "the ack fast path read seq \(seq) where the parser reads \(String(describing: parsed))")
            }
            guard let value = try? JSONValue.parse(bytes) else { return }
            let text = value.serializedBytes()
            guard let again = try? JSONValue.parse(text) else {
                return Fuzz.require(false, "the writer's output does not parse: \(String(decoding: text, as: UTF8.self))")
            }
            Fuzz.require(again == value, "round trip changed the value: \(String(decoding: text, as: UTF8.self))")
            Fuzz.require(again.serializedBytes() == text, "writing is not deterministic")
            guard case .object(let object) = value, let (key, member) = object.first else { return }
            // The same key again, once as written and once with every scalar escaped as \uXXXX.
            let plain = JSONValue.string(key).serialized()
            let escaped = "\"" + key.unicodeScalars.map(escape).joined() + "\""
            for spelling in [plain, escaped] {
                let doubled = "{" + spelling + ":" + member.serialized() + "," + String(decoding: text.dropFirst(), as: UTF8.self)
                Fuzz.require((try? JSONValue.parse(doubled)) == nil, "a repeated key was accepted: \(doubled)")
            }
        }
    }

    static func escape(_ scalar: Unicode.Scalar) -> String {
        func hex(_ v: UInt32) -> String {
            let s = String(v, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - s.count) + s
        }
        let v = scalar.value
        guard v >= 0x10000 else { return hex(v) }
        let u = v - 0x10000
        return hex(0xD800 + (u >> 10)) + hex(0xDC00 + (u & 0x3FF))
    }
}
