/// The tag rule of HA's Live Activity docs: letters, digits, `-` and `_`, 1–64 characters. It names an activity on
/// every device and path and ends up in URLs (`/v1/activities/{tag}`), so it holds for live updates. The tag of a
/// plain notification — and of a `clear_notification` for one — is an opaque identifier on both platforms and is
/// taken as sent.
public enum ActivityTag {
    public static let maxLength = 64

    public static func isValid(_ tag: String) -> Bool {
        let bytes = tag.utf8
        guard (1...maxLength).contains(bytes.count) else { return false }
        return bytes.allSatisfy { b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "-")
                || b == UInt8(ascii: "_")
        }
    }

    static func validate(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> String {
        let tag = try Coerce.string(value, at: path)
        guard isValid(tag) else {
            throw path.error(
                "pattern", "a live update's tag is 1–\(maxLength) letters, digits, '-' or '_'; got \(value.serialized()).")
        }
        return tag
    }
}
