/// Computes a session's merge patch once per distinct pair of states: one update fanned out to many devices asks every
/// session for the same patch (each client held the same state, each device's ledger holds the same new one: the
/// states of one request share their storage across devices), so the last pair and its patch are kept.
///
/// A hit is decided by identity — the same storage — so a miss (a session of its own, states that only compare
/// equal) costs two word comparisons before the diff, never a walk of the states. Keeping the pair alive keeps its
/// storage from being freed and reused for another dictionary, so the same storage means the same contents.
/// Not thread-safe: one per loop, like ``FrameEncoder``.
public final class PatchMemo {
    private var last: (from: ContentState, to: ContentState, patch: [String: JSONValue])?
    /// Patches answered from the memo (for tests and benchmarks).
    public private(set) var reused = 0

    public init() {}

    public func diff(from: ContentState, to: ContentState) -> [String: JSONValue] {
        if let last, Self.sameStorage(last.from, from), Self.sameStorage(last.to, to) {
            reused += 1
            return last.patch
        }
        let patch = MergePatch.diff(from: from, to: to)
        last = (from, to, patch)
        return patch
    }

    /// Whether two dictionaries are one storage. A native dictionary is one reference to its storage (one word;
    /// where it is not, this says no and the memo only misses).
    @inline(__always)
    static func sameStorage(_ a: ContentState, _ b: ContentState) -> Bool {
        guard MemoryLayout<ContentState>.size == MemoryLayout<UInt>.size else { return false }
        return withUnsafeBytes(of: a) { x in withUnsafeBytes(of: b) { y in x.load(as: UInt.self) == y.load(as: UInt.self) } }
    }
}
