/// A JSON document as the gateway sees it: payloads, states, patches and frames are all made of these.
///
/// Numbers are kept as `Double` (what every JSON producer on the path — HA's Python, JavaScript clients —
/// can represent); integral values serialize without a fraction so `900` stays `900` on the wire.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var numberValue: Double? {
        if case .number(let n) = self { return n }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON type name used in error messages ("expected a string, got number").
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// Parses UTF-8 JSON text. Throws `JSONSyntaxError` with the byte offset of the problem.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        let parsed = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONSyntaxError) -> JSONValue in try parse(buffer: buffer) }
        }
        if let parsed { return try parsed.get() }
        return try parse(Array(bytes))
    }

    /// The common case, without the generic detour (request bodies and frames arrive as `[UInt8]`).
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> JSONValue in try parse(buffer: buffer) }
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(buffer)
        return try parser.parseDocument()
    }

    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Compact JSON text with object keys sorted, so equal values always serialize to equal bytes.
    public func serialized() -> String {
        var out = [UInt8]()
        out.reserveCapacity(128)
        JSONWriter.write(self, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `serializedBytes().count`, computed without serializing.
    public var serializedCount: Int { JSONWriter.count(self) }

    public func serializedBytes() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(128)
        JSONWriter.write(self, into: &out)
        return out
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { serialized() }
}
