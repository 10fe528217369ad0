/// Computes a session's merge patch once per distinct pair of states: one update fanned out to many devices asks every
/// session for the same patch (each client held the same state, each device's ledger holds the same new one), so the
/// pairs and their patches are kept.
///
/// A state is known by the id its request stamped on it (`LiveUpdate.stateID`, carried by `Activity` and
/// `ClientView`): ids come from one counter and a changed state loses its id, so one id is one state's contents, and
/// a lookup hashes two integers, never the states. A state without an id (restored from the store) is diffed afresh.
///
/// Several pairs, not the last one: at saturation a session is written many tags in one turn and the next session
/// the same tags in the same order, so one remembered pair missed at every frame. At most ``capacity`` pairs are
/// kept; past it the memo starts again empty. Not thread-safe: one per loop, like ``FrameEncoder``.
public final class PatchMemo {
    private struct Pair: Hashable {
        let from: UInt64
        let to: UInt64
    }

    public static let capacity = 128
    private var patches: [Pair: [String: JSONValue]] = [:]
    /// Patches answered from the memo (for tests and benchmarks).
    public private(set) var reused = 0

    public init() {}

    /// The patch that takes a client from `from` to `to` (`MergePatch.diff` of their states).
    public func diff(from: ClientView, to: ClientView) -> [String: JSONValue] {
        guard from.stateID != 0, to.stateID != 0 else { return MergePatch.diff(from: from.state, to: to.state) }
        let key = Pair(from: from.stateID, to: to.stateID)
        if let patch = patches[key] {
            reused += 1
            return patch
        }
        let patch = MergePatch.diff(from: from.state, to: to.state)
        if patches.count >= Self.capacity { patches.removeAll(keepingCapacity: true) }
        patches[key] = patch
        return patch
    }
}
