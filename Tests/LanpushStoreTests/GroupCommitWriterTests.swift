import Foundation
import LanpushCore
import Synchronization
import Testing

@testable import LanpushStore

/// The writer thread: batches in submission order, completions after the data is on disk, a stop that writes what
/// is queued first.
@Suite struct GroupCommitWriterTests {
    let dir: String

    init() throws {
        dir = try StoreTestSupport.directory("writer")
    }

    func row(_ seq: UInt64) -> StoreOp { StoreTestSupport.deviceRow(seq) }

    @Test func laterSubmissionsWinAndCompletionsSeeTheirDataOnDisk() throws {
        let store = try StateStore(directory: dir)
        let writer = GroupCommitWriter(store: store) { _ in }
        let committed = Mutex<UInt64>(0)
        writer.onCommitted = { committed.withLock { $0 += 1 } }
        writer.start()
        let seen = Mutex<[UInt64]>([])
        for seq in 1...200 as ClosedRange<UInt64> {
            writer.submit([row(seq)]) { error in
                #expect(error == nil)
                // What this completion confirms is readable by then (it may be a later seq of the same group).
                let stored = (try? store.load().devices["phone"]?.seq) ?? 0
                seen.withLock { $0.append(stored) }
                #expect(stored >= seq)
            }
        }
        writer.stop()
        #expect(try store.load().devices["phone"]?.seq == 200)
        let order = seen.withLock { $0 }
        #expect(order.count == 200 && order == order.sorted())
        #expect(writer.transactions >= 1 && writer.transactions <= 200)
        // Told once per transaction, not per submission (the commits metric counts these).
        #expect(committed.withLock { $0 } == writer.transactions)
    }

    /// A store quiet for a while hands SQLite's page cache back, once, whichever thread committed last (the loop's
    /// direct commits too); a store that keeps committing keeps it.
    @Test func aQuietStoreGivesItsPageCacheBackOnce() throws {
        let store = try StateStore(directory: dir)
        let writer = GroupCommitWriter(store: store, quietAfter: 0.5) { _ in }
        writer.start()
        defer { writer.stop() }
        func releases(reaching n: Int) -> Int {
            let deadline = Date().addingTimeInterval(5)
            while writer.memoryReleases < n, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            return writer.memoryReleases
        }
        // Committed on this thread, as the loop commits, not through the writer's queue.
        for seq in 1...300 as ClosedRange<UInt64> { try store.write([row(seq)]) }
        let filled = store.writerCacheBytes()
        #expect(filled > 0)
        #expect(releases(reaching: 1) == 1)
        #expect(store.writerCacheBytes() < filled)
        // Idle since: nothing more to give back.
        Thread.sleep(forTimeInterval: 1.2)
        #expect(writer.memoryReleases == 1)
        // Commits closer together than the quiet time: the cache stays.
        for seq in 301...320 as ClosedRange<UInt64> {
            try store.write([row(seq)])
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(writer.memoryReleases == 1)
        #expect(releases(reaching: 2) == 2)
    }

    @Test func stopWritesWhatIsQueuedBeforeReturning() throws {
        let store = try StateStore(directory: dir)
        let writer = GroupCommitWriter(store: store) { _ in }
        writer.start()
        writer.submit((1...1000).map { row($0) })
        writer.stop()
        #expect(try StateStore(directory: dir).load().devices["phone"]?.seq == 1000)
    }
}
