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

    /// The byte count the memory bounds use is exactly the length of the encoding, for every kind of value:
    /// escapes, multi-byte characters, control characters, negative, fractional, huge and non-finite numbers.
    @Test(arguments: [
        #"{"a":1,"b":[true,false,null],"c":"x\"y\\z\n\r\t","d":-1.5,"e":{},"f":[]}"#,
        #""é ✓ \u00e9 \ud83d\ude00""#, #""\u0001\u001f""#, "0", "-0", "-7", "10", "9007199254740991",
        "9007199254740993", "1e300", "-2.5e-8", "0.1", #"[[],[{}],[1,[2,[3]]]]"#,
        #"{"z":{"y":{"x":"w"}},"a":[1.25,-3,"\"quoted\""]}"#,
    ])
    func serializedCountIsTheEncodedLength(_ text: String) throws {
        let value = try JSONValue.parse(text)
        #expect(value.serializedCount == value.serializedBytes().count)
    }

    @Test func serializedCountOfNonFiniteNumbersIsNull() {
        for n in [Double.nan, .infinity, -.infinity] {
            #expect(JSONValue.number(n).serializedCount == JSONValue.number(n).serializedBytes().count)
        }
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

    /// Objects of every size on both sides of the small-object path come out in key order (Swift's `String` order,
    /// as before), with the marked member's value where it is written.
    @Test func everySizeOfObjectIsWrittenInKeyOrder() {
        let names = ["seq", "type", "a", "ab", "A", "é", "z", "tag", "\"q", "", "0", "patch", "state", "zz",
                     "phase", "b", "c", "d", "ü", "seqs", "se"]
        var generator = SystemRandomNumberGenerator()
        for size in 0...names.count {
            for _ in 0..<5 {
                let keys = Array(names.shuffled(using: &generator).prefix(size))
                var object = [String: JSONValue]()
                for (i, key) in keys.enumerated() { object[key] = i % 2 == 0 ? .number(Double(i)) : ["n": .string(key)] }
                var expected = "{"
                for (i, key) in keys.sorted().enumerated() {
                    if i > 0 { expected += "," }
                    expected += JSONValue.string(key).serialized() + ":" + object[key]!.serialized()
                }
                expected += "}"
                #expect(JSONValue.object(object).serialized() == expected, "\(keys)")
                var out = [UInt8]()
                let range = JSONWriter.write(.object(object), into: &out, marking: "seq")
                #expect(range.map { Array(out[$0]) } == object["seq"].map { Array($0.serialized().utf8) })
            }
        }
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
