import Foundation
import GRDB
import GRDBSQLite

/// Commits on the calling thread — the event loop — and folds the WAL into the main file on a thread of its own.
/// (SQLite's automatic checkpoint is off on the store's connections: `StateStore(checkpointsInCommits: false)`.)
///
/// With `synchronous` normal or off a WAL commit writes to the page cache and does not fsync: tens of microseconds,
/// less than handing the ops to a writer thread and being woken with its answer. That hand-off — two sleeps and two
/// wake-ups per commit when updates arrive one at a time, as they do from Home Assistant — was most of what a durable
/// update cost beyond an in-memory one. What does wait on the disk is the checkpoint (it fsyncs the database file):
/// it runs on the `lanpush-checkpoint` thread, on a connection of its own, in SQLite's PASSIVE mode, which never
/// takes the writer's lock, so a commit never waits for one. It comes when SQLite's own would: each time the WAL
/// has grown by `checkpointEvery` pages, as every commit reports (`sqlite3_wal_hook`). A commit made on another
/// thread of the store (`GroupCommitWriter`'s, in a burst) checkpoints right there instead, as SQLite's automatic
/// checkpoint does: that thread is not the loop, and a checkpoint between its own commits always catches up.
///
/// A PASSIVE checkpoint copies the frames committed before it started; the WAL starts over from its beginning only
/// once a checkpoint has caught up with every commit. When commits never pause for as long as a checkpoint takes
/// (its fsyncs), that never happens and the WAL would grow without end: past `restartAbove` frames the thread runs
/// one RESTART checkpoint instead, which holds new commits back while it copies what is left and syncs — the same
/// wait SQLite's own automatic checkpoint puts on a writer, once per that many frames instead of every 1,000 pages.
///
/// With `synchronous = full` every commit fsyncs; that stays with `GroupCommitWriter`.
public final class DirectCommitter: @unchecked Sendable {
    private let store: StateStore
    private let onError: @Sendable (Error) -> Void
    /// WAL pages between two checkpoints: SQLite's own default for its automatic checkpoint.
    private let checkpointEvery: Int32
    /// WAL frames (pages) past which a checkpoint is followed by a RESTART one: 16 MiB of 4 KiB pages.
    private let restartAbove: Int
    /// Committed transactions (the caller's thread only), for metrics and benchmarks.
    public private(set) var transactions: UInt64 = 0

    private let worker = StoreThread()
    private var condition: NSCondition { worker.condition }
    private var requested = false
    private var checkpointCount = 0
    private var restartCount = 0
    /// The WAL size (frames) at which the next checkpoint is asked for; set back when the WAL starts over.
    private var nextCheckpointAt: Int32
    private var lastWALFrames: Int32 = 0
    /// A `commit` (the caller's thread) is under way: its checkpoints go to the checkpoint thread.
    private var committingHere = false

    public init(
        store: StateStore, checkpointEvery: Int = 1000, restartAbove: Int = 4096, onError: @escaping @Sendable (Error) -> Void
    ) throws {
        precondition(!store.checkpointsInCommits, "open the store with checkpointsInCommits: false")
        self.store = store
        self.checkpointEvery = Int32(max(1, checkpointEvery))
        self.restartAbove = restartAbove
        self.onError = onError
        nextCheckpointAt = self.checkpointEvery
        store.onWALCommit(Unmanaged.passUnretained(self).toOpaque()) { context, db, name, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<DirectCommitter>.fromOpaque(context).takeUnretainedValue().walCommitted(db, name, frames: frames)
            return SQLITE_OK
        }
    }

    deinit {
        store.onWALCommit(nil, nil)
    }

    /// Checkpoints run so far, and how many of them were RESTART ones (any thread).
    public var checkpoints: (all: Int, restarts: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (checkpointCount, restartCount)
    }

    public func start() {
        worker.start(name: "lanpush-checkpoint") { [weak self] in self?.checkpointLoop() }
    }

    /// Writes `ops` in one transaction on the calling thread; `false` when it failed (reported through `onError`).
    public func commit(_ ops: [StoreOp]) -> Bool {
        condition.lock()
        committingHere = true
        condition.unlock()
        defer {
            condition.lock()
            committingHere = false
            condition.unlock()
        }
        do {
            try store.write(ops)
        } catch {
            onError(error)
            return false
        }
        transactions += 1
        return true
    }

    /// After every commit on the store's writer connection, on the thread that committed: the WAL's size in frames.
    private func walCommitted(_ db: OpaquePointer?, _ name: UnsafePointer<CChar>?, frames: Int32) {
        condition.lock()
        if frames < lastWALFrames { nextCheckpointAt = checkpointEvery }
        lastWALFrames = frames
        let due = frames >= nextCheckpointAt
        let inPlace = due && !committingHere
        if due { nextCheckpointAt = frames + checkpointEvery }
        // Past the RESTART bound, every commit of the caller's thread asks again: a RESTART needs the writer's lock
        // between two commits, and when commits follow each other closely (or the checkpoint thread got no CPU for a
        // while) one that found no gap would otherwise wait `checkpointEvery` more frames for its next try.
        if committingHere && (due || Int(frames) > restartAbove) {
            requested = true
            condition.signal()
        }
        condition.unlock()
        guard inPlace else { return }
        // The writer's thread, between two of its transactions: what SQLite's automatic checkpoint would do here.
        if sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK {
            condition.lock()
            checkpointCount += 1
            condition.unlock()
        }
    }

    /// Stops the checkpoint thread (a checkpoint under way finishes first). Commits stay possible after it; the
    /// caller folds the WAL in itself at a clean stop (`StateStore.checkpoint`).
    public func stop() {
        worker.stop()
    }

    private func checkpointLoop() {
        var connection: DatabaseQueue?
        while true {
            condition.lock()
            while !requested && !worker.stopping { condition.wait() }
            let stop = worker.stopping
            requested = false
            condition.unlock()
            if stop { break }
            do {
                if connection == nil { connection = try store.checkpointConnection() }
                let restarted = try connection?.inDatabase { db in
                    let wal = try db.checkpoint(.passive)
                    // Its counts are the WAL as it stood when it began: commits since then are past them, so even
                    // a PASSIVE checkpoint that copied all it saw leaves the WAL growing while they never pause.
                    guard wal.walFrameCount > restartAbove else { return false }
                    try db.checkpoint(.restart)
                    return true
                } ?? false
                condition.lock()
                checkpointCount += 1
                if restarted { restartCount += 1 }
                condition.unlock()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                // The writer's thread is checkpointing in place right now (one checkpointer at a time): nothing lost.
            } catch {
                onError(CheckpointFailed(underlying: error))
            }
        }
        connection = nil
    }
}

/// A checkpoint (folding the WAL into the database file) failed: nothing committed is lost, but the WAL keeps
/// growing until one succeeds. Told apart from a failed commit, which loses what it held.
public struct CheckpointFailed: Error, CustomStringConvertible {
    public let underlying: any Error
    public var description: String { "\(underlying)" }
}
