/// Computes a session's merge patch once per distinct pair of states: one update fanned out to many devices asks every
/// session for the same patch (each client held the same state, each device's ledger holds the same new one: the
/// states of one request share their storage across devices), so the pairs and their patches are kept.
///
/// Several pairs, not the last one: at saturation a session is written many tags in one turn and the next session
/// the same tags in the same order, so one remembered pair missed at every frame. At most ``capacity`` pairs are
/// kept; past it the memo starts again empty.
///
/// A hit is decided by identity — the same storage (``StorageIdentity``) — so a miss (a session of its own, states
/// that only compare equal) costs a hash of two words before the diff, never a walk of the states. Keeping a pair
/// alive keeps its storage from being freed and reused for another dictionary, so the same storage means the same
/// contents. Not thread-safe: one per loop, like ``FrameEncoder``.
public final class PatchMemo {
    /// A pair and its patch. A class: read from the table through one reference, where a struct would be copied out
    /// of the dictionary (its three dictionaries retained and released) at each frame.
    private final class Entry {
        let from: ContentState
        let to: ContentState
        let patch: [String: JSONValue]

        init(from: ContentState, to: ContentState, patch: [String: JSONValue]) {
            self.from = from
            self.to = to
            self.patch = patch
        }
    }

    public static let capacity = 128
    private var entries: [StoragePair: Entry] = [:]
    /// Patches answered from the memo (for tests and benchmarks).
    public private(set) var reused = 0

    public init() {}

    public func diff(from: ContentState, to: ContentState) -> [String: JSONValue] {
        guard let a = StorageIdentity.word(from), let b = StorageIdentity.word(to) else {
            return MergePatch.diff(from: from, to: to)
        }
        let key = StoragePair(first: a, second: b)
        if let patch = entries[key]?.patch {
            reused += 1
            return patch
        }
        let patch = MergePatch.diff(from: from, to: to)
        if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
        entries[key] = Entry(from: from, to: to, patch: patch)
        return patch
    }
}
