import Testing

@testable import LanpushCore

/// The reader answers a lookup of an absent key from its presence bits, without the dictionary: what it answers must
/// still be exactly what the object holds.
struct ObjectReaderTests {
    private static let memberKeys = [
        "a", "tag", "message", "progress", "progress_max", "critical_text", "notification_icon_color", "when",
        "when_relative", "content_state", "live_update", "x", "é", "a key with spaces and a long tail of bytes",
    ]

    private func reader() -> ObjectReader {
        var object: [String: JSONValue] = [:]
        for (i, key) in Self.memberKeys.enumerated() { object[key] = .number(Double(i)) }
        object["nulled"] = .null
        return ObjectReader(object, at: .root)
    }

    @Test func everyMemberIsFoundWithItsValue() throws {
        let r = reader()
        for (i, key) in Self.memberKeys.enumerated() {
            #expect(try r.optional(key) { v, _ in v } == .number(Double(i)), "\(key)")
            #expect(try r.required(key) { v, _ in v } == .number(Double(i)), "\(key)")
        }
    }

    @Test func absentAndNullKeysAreAbsent() throws {
        let r = reader()
        // Keys of every length up to 40, including many that share a presence bit with a member.
        var absent = ["nulled", "", "b", "Tag", "message ", "progressmax", "color", "icon", "silent", "alert"]
        for n in 1...40 { absent.append(String(repeating: "z", count: n)) }
        for n in 1...40 { absent.append("a" + String(repeating: "-", count: n) + "x") }
        let memberBits = Self.memberKeys.reduce(UInt64(0)) { $0 | ObjectReader.presenceBit($1) }
        #expect(absent.contains { memberBits & ObjectReader.presenceBit($0) != 0 }, "no absent key shares a member's bit")
        for key in absent {
            let found: JSONValue? = try r.optional(key) { v, _ in v }
            #expect(found == nil, "\(key)")
            #expect(throws: FieldError.self, "\(key)") { try r.required(key) { v, _ in v } }
        }
    }
}
