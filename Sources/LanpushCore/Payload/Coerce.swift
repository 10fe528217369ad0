/// Reads scalar fields of a notify payload the way HA's templates render them: a value meant as a number may
/// arrive as `"45"`, a flag as `"true"`, a text as `45` (docs/PROTOCOL.md, "Leniency"). Anything beyond these
/// well-known renderings is refused, so a real mistake is still reported.
enum Coerce {
    /// Strings as given; numbers and booleans in their JSON spelling (`45`, `45.5`, `true`).
    static func text(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> String {
        switch value {
        case .string(let s): return s
        case .number, .bool: return value.serialized()
        default: throw path.error("type", "expected a string, got \(value.typeName).")
        }
    }

    /// A JSON string and nothing else: for identifiers and URLs, where a number is surely a mistake.
    static func string(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> String {
        guard case .string(let s) = value else {
            throw path.error("type", "expected a string, got \(value.typeName).")
        }
        return s
    }

    /// An object as given (null members included: plain notifications pass `data` through untouched).
    static func object(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> [String: JSONValue] {
        guard case .object(let o) = value else {
            throw path.error("type", "expected an object, got \(value.typeName).")
        }
        return o
    }

    /// Booleans, plus the strings `true` / `false` in any case (Python renders `True`).
    static func bool(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Bool {
        switch value {
        case .bool(let b): return b
        case .string(let s):
            switch trimmed(s).lowercased() {
            case "true": return true
            case "false": return false
            default: break
            }
        default: break
        }
        throw path.error("type", "expected a boolean, got \(describe(value)).")
    }

    /// Finite numbers, plus decimal numeric strings such as `"45"`, `" 45.6 "` or `"1e3"`.
    static func number(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Double {
        switch value {
        case .number(let n) where n.isFinite:
            return n
        case .string(let s):
            let t = trimmed(s)
            if isDecimal(t), let n = Double(t), n.isFinite { return n }
        default: break
        }
        throw path.error("type", "expected a number, got \(describe(value)).")
    }

    /// `number`, rounded half away from zero. Bounded to integers a Double holds exactly, so the value
    /// survives every JSON hop unchanged.
    static func integer(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Int {
        let rounded = try number(value, at: path).rounded()
        guard abs(rounded) <= maxExactInteger else {
            throw path.error("range", "\(rounded) is too large; expected an integer within ±2^53.")
        }
        return Int(rounded)
    }

    static let maxExactInteger: Double = 9_007_199_254_740_992

    /// For messages: shows the offending string itself, which is what a template author needs to see.
    static func describe(_ value: JSONValue) -> String {
        if case .string = value { return "the string \(value.serialized())" }
        return value.typeName
    }

    private static func trimmed(_ s: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = s.firstIndex(where: { !isSpace($0) }), let last = s.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return s[first...last]
    }

    /// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?` — Swift's `Double(_:)` alone would also
    /// take `nan`, `inf` and hex floats, which no template means as a number.
    private static func isDecimal(_ s: Substring) -> Bool {
        var bytes = s.utf8[...]
        func digits() -> Int {
            var count = 0
            while let b = bytes.first, b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") {
                bytes.removeFirst()
                count += 1
            }
            return count
        }
        func take(_ options: String) -> Bool {
            guard let b = bytes.first, options.utf8.contains(b) else { return false }
            bytes.removeFirst()
            return true
        }
        _ = take("+-")
        var mantissa = digits()
        if take(".") { mantissa += digits() }
        guard mantissa > 0 else { return false }
        if take("eE") {
            _ = take("+-")
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
