import Testing

@testable import LanpushCore

@Suite struct JSONValueTests {
    @Test(arguments: [
        #"{"a":1,"b":[true,false,null],"c":"x\"y\\z\n","d":-1.5,"e":{}}"#,
        #"[]"#, #""é ✓ \u00e9""#, #"1e3"#, #"{"k":"\ud83d\ude00"}"#,
    ])
    func parsesAndRoundTrips(_ text: String) throws {
        let value = try JSONValue.parse(text)
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    @Test func integralNumbersHaveNoFraction() throws {
        #expect(JSONValue.number(900).serialized() == "900")
        #expect(JSONValue.number(0.65).serialized() == "0.65")
        #expect(try JSONValue.parse("3600.0") == .number(3600))
    }

    @Test func keysAreSortedSoEqualValuesSerializeEqually() {
        let value: JSONValue = ["z": 1, "a": 2, "m": ["y": 1, "b": 2]]
        #expect(value.serialized() == #"{"a":2,"m":{"b":2,"y":1},"z":1}"#)
    }

    @Test(arguments: ["", "{", #"{"a":}"#, "[1,]", "01", "1.", "tru", #""\x""#, #"{"a":1} x"#, "\"\u{01}\"", #""\udc00""#])
    func rejectsMalformed(_ text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(text) }
    }

    /// `{"data":[],"data":{}}` was read as an object (the last key won) and relayed on as it came: a parser that
    /// keeps the first would see a list. A repeated key is refused, at every depth.
    @Test(arguments: [#"{"data":[],"data":{}}"#, #"{"a":{"x":1,"x":1}}"#, #"[{"k":1,"k":2}]"#])
    func rejectsARepeatedKey(_ text: String) throws {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(text) }
        #expect(try JSONValue.parse(#"{"a":{"x":1},"b":{"x":1}}"#) == ["a": ["x": 1], "b": ["x": 1]])
    }

    @Test func rejectsDeepNesting() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(deep) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse([0x22, 0xFF, 0x22]) }
    }
}
