/// A request's captured header fields: names in lower case, each at most once, found by a linear scan.
///
/// A request carries a handful of the headers the adapter captures (five or six from Home Assistant), and each is
/// read once or twice: a scan of that few short names costs less than hashing each name into a dictionary and
/// hashing it again at every lookup (a dictionary here was ~3 % of an HTTP request's instructions).
public struct HTTPHeaderFields: Sendable, Sequence {
    private var fields: [(name: String, value: String)] = []

    public init() {}

    /// From names in any case; a name given twice in two cases keeps one of its values.
    public init(_ headers: [String: String]) {
        for (name, value) in headers { self[name.lowercased()] = value }
    }

    /// The value under `name` (lower case).
    public subscript(name: String) -> String? {
        get {
            for field in fields where field.name == name { return field.value }
            return nil
        }
        set {
            let at = fields.firstIndex { $0.name == name }
            switch (at, newValue) {
            case (let i?, let value?): fields[i].value = value
            case (let i?, nil): fields.remove(at: i)
            case (nil, let value?): fields.append((name, value))
            case (nil, nil): break
            }
        }
    }

    /// Appends a field the caller knows is not there yet (the capture: each name once).
    mutating func appendNew(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    mutating func reserveCapacity(_ n: Int) { fields.reserveCapacity(n) }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> some IteratorProtocol<(name: String, value: String)> { fields.makeIterator() }
}
