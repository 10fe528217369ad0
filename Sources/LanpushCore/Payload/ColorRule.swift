/// Which color spellings a client must be able to render: `#RGB`, `#RRGGBB`, `#AARRGGBB`,
/// the CSS named colors, and inside Aivi templates also Aivi's SwiftUI color identifiers (Aivi's template docs).
/// Colors travel as given; clients do the parsing, the gateway only guarantees they can.
public enum ColorRule {
    /// Aivi's identifiers (the newer list, with `gray2`…`gray6`).
    public static let aiviNames: Set<String> = [
        "red", "orange", "yellow", "green", "mint", "teal", "cyan", "blue", "indigo", "purple", "pink", "brown",
        "gray", "gray2", "gray3", "gray4", "gray5", "gray6",
    ]

    public static func isValid(_ color: String, allowAiviNames: Bool = false) -> Bool {
        if color.hasPrefix("#") { return isHex(color.utf8.dropFirst()) }
        let name = color.lowercased()
        return CSSColorNames.all.contains(name) || (allowAiviNames && aiviNames.contains(name))
    }

    private static func isHex(_ digits: Substring.UTF8View) -> Bool {
        [3, 6, 8].contains(digits.count)
            && digits.allSatisfy { b in
                (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "f"))
                    || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "F"))
            }
    }

    static func validate(_ value: JSONValue, at path: FieldPath, allowAiviNames: Bool = false) throws(FieldError)
        -> String
    {
        let color = try Coerce.string(value, at: path)
        guard isValid(color, allowAiviNames: allowAiviNames) else {
            let names = allowAiviNames ? "a CSS or Aivi color name" : "a CSS color name"
            throw path.error("color", "expected #RGB, #RRGGBB, #AARRGGBB or \(names), got \(value.serialized()).")
        }
        return color
    }
}
