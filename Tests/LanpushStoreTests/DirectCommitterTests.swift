import Foundation
import LanpushCore
import Testing

@testable import LanpushStore

/// Commits on the caller's thread, checkpoints on the committer's: what a commit wrote is readable when it returns,
/// and the WAL stays bounded while commits never pause.
@Suite struct DirectCommitterTests {
    let dir: String

    init() throws {
        dir = try StoreTestSupport.directory("direct")
    }

    func row(_ seq: UInt64) -> StoreOp { StoreTestSupport.deviceRow(seq) }

    func notification(_ seq: UInt64) -> StoreOp {
        .insertNotification(deviceId: "phone", QueuedNotification(seq: seq, body: .clear(tag: "t\(seq)"), acceptedAt: 0))
    }

    func walBytes(_ directory: String) -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + StateStore.fileName + "-wal")
        return (attributes?[.size] as? Int) ?? 0
    }

    @Test func aCommitIsReadableWhenItReturns() throws {
        let store = try StateStore(directory: dir, checkpointsInCommits: false)
        let committer = try DirectCommitter(store: store) { _ in }
        committer.start()
        for seq in 1...40 as ClosedRange<UInt64> {
            #expect(committer.commit([row(seq), notification(seq)]))
            #expect(try store.load().devices["phone"]?.seq == seq)
        }
        committer.stop()
        #expect(committer.transactions == 40)
        #expect(try store.load().notifications["phone"]?.count == 40)
    }

    /// SQLite's own checkpoints are off on this connection: without the committer's thread the WAL only grows; with
    /// it, commits that never pause still leave it bounded (PASSIVE checkpoints, then a RESTART one when they
    /// cannot catch up).
    ///
    /// The WAL file keeps the size it reached before its last RESTART, and how far it gets depends on the machine:
    /// commits go on while a checkpoint runs (~20,000 a second here), and on a loaded machine a checkpoint (its
    /// copy, its fsync, its thread's turn on a core) has been held up long enough to let 1,000-4,000 frames of 4 KiB
    /// by — a fixed 8 MiB bound failed 1 run in 3 there. So no fixed bound: 30,000 commits with the checkpoint thread
    /// must leave a WAL smaller than a third of them (10,000) leave without it. A WAL that grew with the commits
    /// would be three times that.
    @Test func theWALStaysBoundedWhileCommitsNeverPause() throws {
        let control = dir + "/control"
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true)
        let unchecked = try DirectCommitter(store: try StateStore(directory: control, checkpointsInCommits: false)) { _ in }
        for seq in 1...10000 as ClosedRange<UInt64> { _ = unchecked.commit([notification(seq)]) }
        let bound = walBytes(control)
        #expect(bound > 16 << 20, "the control grew its WAL to \(bound) bytes only")

        let store = try StateStore(directory: dir, checkpointsInCommits: false)
        let committer = try DirectCommitter(store: store, checkpointEvery: 50, restartAbove: 400) { _ in }
        committer.start()
        for seq in 1...30000 as ClosedRange<UInt64> { #expect(committer.commit([notification(seq)])) }
        committer.stop()
        #expect(committer.checkpoints.all > 0)
        #expect(walBytes(dir) < bound, "WAL at \(walBytes(dir)) bytes after \(committer.checkpoints) checkpoints")
        #expect(try store.load().notifications["phone"]?.count == 30000)
    }

    /// A commit of the writer's thread (a burst) checkpoints where it runs, as SQLite's automatic checkpoint would:
    /// here the checkpoint thread is never started, and the WAL still starts over.
    @Test func theWriterThreadsCommitsCheckpointWhereTheyRun() throws {
        let store = try StateStore(directory: dir, checkpointsInCommits: false)
        let committer = try DirectCommitter(store: store, checkpointEvery: 50) { _ in }
        let writer = GroupCommitWriter(store: store) { _ in }
        writer.start()
        for seq in 1...1000 as ClosedRange<UInt64> {
            let done = DispatchSemaphore(value: 0)
            writer.submit([notification(seq)]) { _ in done.signal() }
            done.wait()
        }
        writer.stop()
        #expect(committer.checkpoints.all > 0)
        // 1,000 commits without a checkpoint leave more than 2.7 MiB (the control above).
        #expect(walBytes(dir) < 1 << 20, "WAL at \(walBytes(dir)) bytes")
        #expect(try store.load().notifications["phone"]?.count == 1000)
    }
}
