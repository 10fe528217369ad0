/// `notification_icon`: a Material Design Icons slug such as `mdi:washing-machine` (HA's Live Activity docs).
public enum MDIIcon {
    public static func isValid(_ icon: String) -> Bool {
        guard icon.hasPrefix("mdi:") else { return false }
        let name = icon.utf8.dropFirst(4)
        return !name.isEmpty
            && name.allSatisfy { b in
                (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
                    || b == UInt8(ascii: "-")
            }
    }

    static func validate(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> String {
        let icon = try Coerce.string(value, at: path)
        guard isValid(icon) else {
            throw path.error(
                "pattern",
                "expected a Material Design Icons slug like \"mdi:washing-machine\", got \(value.serialized()).")
        }
        return icon
    }
}
