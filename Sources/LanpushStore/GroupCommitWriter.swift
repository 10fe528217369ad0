import Foundation

/// Writes store ops on its own thread, many requests per transaction, so the lws loop never waits on disk.
///
/// `submit` (any thread, in practice the loop) queues a batch of ops and an optional completion; the
/// writer takes everything queued since its last transaction, commits it in one, then runs the
/// completions through `deliver` (the gateway posts them back to the loop). An accepted update's HTTP
/// answer is one of those completions: accepted = committed.
public final class GroupCommitWriter: @unchecked Sendable {
    public typealias Completion = @Sendable (Error?) -> Void

    private let store: StateStore
    private let worker = StoreThread()
    private var condition: NSCondition { worker.condition }
    private var queue: [StoreOp] = []
    private var completions: [Completion] = []
    private let onError: @Sendable (Error) -> Void
    /// Transactions and ops written, for metrics and benchmarks.
    public private(set) var transactions: UInt64 = 0
    /// Called on the writer's thread after each committed transaction (one for many submissions). Set before
    /// `start`.
    public var onCommitted: (@Sendable () -> Void)?

    /// Seconds without a commit (on any thread) after which this thread gives SQLite's page caches back.
    private let quietAfter: Double
    /// Times it did (any thread).
    public var memoryReleases: Int {
        condition.lock()
        defer { condition.unlock() }
        return releases
    }
    private var releases = 0

    public init(store: StateStore, quietAfter: Double = 5, onError: @escaping @Sendable (Error) -> Void) {
        self.store = store
        self.quietAfter = quietAfter
        self.onError = onError
    }

    public func start() {
        worker.start(name: "lanpush-store") { [weak self] in self?.loop() }
    }

    public func submit(_ ops: [StoreOp], completion: Completion? = nil) {
        condition.lock()
        queue.append(contentsOf: ops)
        if let completion { completions.append(completion) }
        condition.signal()
        condition.unlock()
    }

    /// Writes what is queued, stops the thread, and returns once everything is on disk.
    public func stop() {
        worker.stop()
    }

    private func loop() {
        var releasedAt = store.commits  // nothing cached to give back before the first commit
        while true {
            condition.lock()
            while queue.isEmpty && completions.isEmpty && !worker.stopping {
                let seen = store.commits
                guard !condition.wait(until: Date(timeIntervalSinceNow: quietAfter)) else { continue }
                // A quiet store: no commit here or on the loop for `quietAfter`, and some since the last release. A burst
                // fills the caches (256 KiB a connection by default) and a home then goes quiet for hours; the periodic
                // heap trim then finds their pages free.
                if store.commits == seen, seen != releasedAt, queue.isEmpty, !worker.stopping {
                    releasedAt = seen
                    releases += 1
                    condition.unlock()
                    store.releaseMemory()
                    condition.lock()
                }
            }
            // Handed on, not emptied in place: `removeAll(keepingCapacity:)` on a buffer `ops` shares allocates a new
            // one as large as the largest batch ever, which stayed: over a megabyte of this thread's heap after a burst.
            let ops = queue
            let done = completions
            queue = []
            completions = []
            let finished = worker.stopping && ops.isEmpty && done.isEmpty
            condition.unlock()
            if finished { break }
            var failure: Error?
            if !ops.isEmpty {
                do {
                    try store.write(ops)
                    transactions += 1
                    onCommitted?()
                } catch {
                    failure = error
                    onError(error)
                }
            }
            for completion in done { completion(failure) }
        }
    }
}
