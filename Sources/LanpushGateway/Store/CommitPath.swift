import Foundation
import LanpushStore
import Logging

/// Where the journal's turns are committed: on the loop itself when that is cheaper, else on the writer's thread.
///
/// - `store.synchronous` `normal` / `off`: a commit writes the WAL without an fsync, tens of microseconds. While
///   commits are spaced out — updates arriving one at a time, as Home Assistant sends them, up to ~2,000 a second —
///   each is committed on the loop (`DirectCommitter`) and its HTTP answers leave in the same turn: no hand-off to a
///   thread and no wake-up back, two sleeps and two wake-ups per update that cost more than the commit. When they
///   come back to back (a burst, a publisher stream at full speed) the loop itself is the bottleneck: they go to
///   `GroupCommitWriter`'s thread, which commits on the other core while the loop reads on, many turns in one
///   transaction; everything after follows it there until its completions are back, so commits and answers keep
///   their order.
/// - `full`: every commit fsyncs, which the loop must not wait for: always the writer's thread.
///
/// Either way an HTTP 2xx, a publisher's accept or an HA confirm is sent only after its commit. Loop thread only.
final class CommitPath {
    /// The largest turn committed on the loop (an activity or a notification per update and device).
    static let opsOnLoop = 64
    /// Commits closer together than this (from the end of one to the next) go to the writer's thread.
    static let spacingOnLoop: UInt64 = 500_000  // ns

    private let direct: DirectCommitter?
    private let writer: GroupCommitWriter
    /// Submissions to the writer whose completion has not come back to the loop yet.
    private var onWriter = 0
    /// When the last commit was done, as the loop saw it (monotonic ns).
    private var lastDone: UInt64 = 0
    /// Set once the core (which owns the series) exists, before `start`.
    var metrics: GatewayMetrics? {
        didSet {
            // The writer counts its own transactions: one of them may hold many turns.
            let counter = metrics?.commitsOnWriter
            writer.onCommitted = { counter?.increment() }
        }
    }
    /// Monotonic nanoseconds (injected by tests).
    private let clock: () -> UInt64

    /// Whether commits may run on the loop: the store then leaves checkpoints out of them (`DirectCommitter` runs them).
    static func commitsOnLoop(synchronous: String) -> Bool { synchronous != "full" }

    init(
        store: StateStore, logger: Logger, clock: @escaping () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
    ) throws {
        self.clock = clock
        let onError: @Sendable (Error) -> Void = { error in
            if error is CheckpointFailed {
                logger.error("store checkpoint failed: the write-ahead log grows until one succeeds", metadata: ["error": "\(error)"])
            } else {
                logger.error("store write failed", metadata: ["error": "\(error)"])
            }
        }
        writer = GroupCommitWriter(store: store, onError: onError)
        direct = store.checkpointsInCommits ? nil : try DirectCommitter(store: store, onError: onError)
    }

    /// What the journal calls at each turn's end; `then` runs on the loop once the ops are committed (or failed).
    func persist(inbox: some LoopPoster) -> Journal.Persist {
        guard let direct else {
            return { [self] ops, then in
                guard let then else { return writer.submit(ops) }
                let callback = inbox.bound(then)
                writer.submit(ops) { error in inbox.post { callback.value(error == nil) } }
            }
        }
        return { [self] ops, then in
            let now = clock()
            if onWriter == 0 && ops.count <= Self.opsOnLoop && now &- lastDone >= Self.spacingOnLoop {
                let committed = direct.commit(ops)
                lastDone = clock()
                metrics?.commitsOnLoop.increment()
                then?(committed)
                return
            }
            onWriter += 1
            let back = inbox.bound((path: self, then: then))
            writer.submit(ops) { error in
                inbox.post {
                    let b = back.value
                    b.path.onWriter -= 1
                    b.path.lastDone = b.path.clock()
                    b.then?(error == nil)
                }
            }
        }
    }

    func start() {
        writer.start()
        direct?.start()
    }

    /// After the loop's last turn: `ops` (the clean-stop mark) committed, and everything on disk when it returns.
    func finish(with ops: [StoreOp]) {
        writer.submit(ops)
        writer.stop()
        direct?.stop()
    }
}
