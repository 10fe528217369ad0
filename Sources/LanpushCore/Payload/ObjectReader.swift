/// Field access on one JSON object with the path of each field at hand, so every rule reports where it broke.
///
/// A `null` member counts as absent: HA templates render "nothing" as null, and states never hold nulls.
struct ObjectReader {
    let path: FieldPath
    let members: [String: JSONValue]
    private let keys: Dictionary<String, JSONValue>.Keys

    init(_ object: [String: JSONValue], at path: FieldPath) {
        self.path = path
        // Rebuilt only when there is a null to drop: most payloads have none, and every reader is on the ingest path.
        self.members = object.values.contains(where: \.isNull) ? object.filter { !$0.value.isNull } : object
        self.keys = object.keys
    }

    init(_ value: JSONValue, at path: FieldPath) throws(FieldError) {
        guard case .object(let object) = value else {
            throw path.error("type", "expected an object, got \(value.typeName).")
        }
        self.init(object, at: path)
    }

    @discardableResult
    func optional<T>(
        _ key: String, _ rule: (JSONValue, FieldPath) throws(FieldError) -> T
    ) throws(FieldError) -> T? {
        guard let value = members[key] else { return nil }
        return try rule(value, path.key(key))
    }

    @discardableResult
    func required<T>(
        _ key: String, _ rule: (JSONValue, FieldPath) throws(FieldError) -> T
    ) throws(FieldError) -> T {
        guard let value = members[key] else {
            throw path.key(key).error("required", "this field is required.")
        }
        return try rule(value, path.key(key))
    }

    /// Refuses keys outside `allowed`, reporting the first in sorted order so the answer is deterministic.
    func rejectUnknownKeys(_ allowed: Set<String>) throws(FieldError) {
        // Null members count too: a misspelt key is a mistake whatever its value.
        guard let unknown = keys.filter({ !allowed.contains($0) }).min() else { return }
        throw path.key(unknown).error(
            "unknown_key", "unknown key; expected one of \(allowed.sorted().joined(separator: ", ")).")
    }
}
