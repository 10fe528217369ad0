/// Value rules inside templates. Stricter than the top-level `data` fields: a template is written as JSON for
/// Aivi's schema, not rendered by HA field by field, so numbers are JSON numbers and texts JSON strings.
enum TemplateRules {
    static func string(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> String {
        try Coerce.string(value, at: path)
    }

    /// A float in [0, 1]: bar fills and segment shares.
    static func unitFloat(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Double {
        guard case .number(let n) = value, n.isFinite else {
            throw path.error("type", "expected a number in [0, 1], got \(Coerce.describe(value)).")
        }
        guard (0...1).contains(n) else {
            throw path.error("range", "expected a number in [0, 1], got \(value.serialized()).")
        }
        return n
    }

    static func nonNegativeInteger(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Int {
        guard case .number(let n) = value, n.isFinite, n == n.rounded(), abs(n) <= Coerce.maxExactInteger else {
            throw path.error("type", "expected an integer, got \(Coerce.describe(value)).")
        }
        guard n >= 0 else {
            throw path.error("non_negative", "expected an integer >= 0, got \(value.serialized()).")
        }
        return Int(n)
    }

    static func color(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> String {
        try ColorRule.validate(value, at: path, allowAiviNames: true)
    }

    static func oneOf(_ options: [String]) -> (JSONValue, FieldPath) throws(FieldError) -> String {
        { (value, path) throws(FieldError) in
            let name = try Coerce.string(value, at: path)
            guard options.contains(name) else {
                throw path.error(
                    "enum", "expected one of \(options.joined(separator: ", ")); got \(value.serialized()).")
            }
            return name
        }
    }
}
