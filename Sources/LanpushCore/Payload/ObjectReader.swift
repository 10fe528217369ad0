/// Field access on one JSON object with the path of each field at hand, so every rule reports where it broke.
///
/// A `null` member counts as absent: HA templates render "nothing" as null, and states never hold nulls.
struct ObjectReader {
    let path: FieldPath
    let members: [String: JSONValue]
    private let keys: Dictionary<String, JSONValue>.Keys
    /// A bit per member, from its key's length and end bytes (``presenceBit(_:)``). Most lookups on the ingest path
    /// are of keys the payload does not have — a live update's mapping asks for ~25 optional fields, a payload holds a
    /// handful — and a clear bit answers those without hashing the key.
    private let presence: UInt64

    init(_ object: [String: JSONValue], at path: FieldPath) {
        self.path = path
        // Rebuilt only when there is a null to drop: most payloads have none, and every reader is on the ingest path.
        let members = object.values.contains(where: \.isNull) ? object.filter { !$0.value.isNull } : object
        self.members = members
        self.keys = object.keys
        self.presence = members.keys.reduce(0) { $0 | Self.presenceBit($1) }
    }

    /// One of 64 bits for a key; keys of a member always have theirs set in ``presence``.
    @inline(__always)
    static func presenceBit(_ key: String) -> UInt64 {
        let utf8 = key.utf8
        guard let first = utf8.first, let last = utf8.last else { return 1 }
        return 1 &<< UInt64(truncatingIfNeeded: (utf8.count &* 31 &+ Int(first) &+ Int(last) &* 7) & 63)
    }

    @inline(__always)
    private func member(_ key: String) -> JSONValue? {
        presence & Self.presenceBit(key) == 0 ? nil : members[key]
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
        guard let value = member(key) else { return nil }
        return try rule(value, path.key(key))
    }

    @discardableResult
    func required<T>(
        _ key: String, _ rule: (JSONValue, FieldPath) throws(FieldError) -> T
    ) throws(FieldError) -> T {
        guard let value = member(key) else {
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
