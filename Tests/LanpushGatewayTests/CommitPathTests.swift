import Foundation
import LanpushStore
import Logging
import Testing

@testable import LanpushGateway
@testable import LanpushLWS

/// Where a turn's commit runs: on the loop while commits are spaced out, on the writer's thread for a burst, and
/// after the writer until its completions are back, so answers keep the order of their commits.
@Suite struct CommitPathTests {
    /// The loop as the test plays it: posted completions wait until the test runs them.
    final class TestLoop: LoopPoster, LoopConfined, @unchecked Sendable {
        let loopThread = LoopThread()
        private let lock = NSLock()
        private var jobs: [() -> Void] = []

        func post(_ job: @escaping () -> Void) { lock.withLock { jobs.append(job) } }
        func bound<T>(_ value: T) -> LoopBound<T> { LoopBound(value, on: self) }

        /// Waits (up to 10 s) until `count` completions were posted, then runs them in order.
        func run(_ count: Int) throws {
            let deadline = Date().addingTimeInterval(10)
            while lock.withLock({ jobs.count }) < count {
                guard Date() < deadline else { throw CancellationError() }
                usleep(1000)
            }
            let batch = lock.withLock { defer { jobs.removeAll() }; return jobs }
            for job in batch { job() }
        }
    }

    final class Clock: @unchecked Sendable {
        var now: UInt64 = 1_000_000_000
        func advance(ms: Double) { now += UInt64(ms * 1_000_000) }
    }

    /// A started path over a store in a fresh folder (removed with the fixture), as the gateway opens both.
    final class Fixture {
        let dir: String
        let store: StateStore
        let clock = Clock()
        let loop = TestLoop()
        let path: CommitPath

        init(synchronous: String) throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("lanpush-commitpath-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            store = try StateStore(
                directory: dir, synchronous: synchronous,
                checkpointsInCommits: !CommitPath.commitsOnLoop(synchronous: synchronous))
            let clock = self.clock
            path = try CommitPath(store: store, logger: Logger(label: "test"), clock: { clock.now })
            path.start()
        }

        deinit { try? FileManager.default.removeItem(atPath: dir) }
    }

    @Test func spacedCommitsRunOnTheLoopABurstGoesToTheWriterAndOrderIsKept() throws {
        let f = try Fixture(synchronous: "normal")
        let (store, clock, loop, path) = (f.store, f.clock, f.loop, f.path)
        let persist = path.persist(inbox: loop)
        var answered: [String] = []
        func commit(_ name: String) { persist([.meta(key: name, value: "1")]) { ok in answered.append(ok ? name : "failed \(name)") } }

        commit("a")
        #expect(answered == ["a"], "a spaced commit is done (and answered) before persist returns")
        #expect(try store.load().meta["a"] == "1")

        clock.advance(ms: 0.1)
        commit("b")  // 0.1 ms after the last: a burst, to the writer
        clock.advance(ms: 5)
        commit("c")  // spaced, but b is still on the writer: c follows it there
        #expect(answered == ["a"], "neither is answered before its completion reaches the loop")
        try loop.run(2)
        #expect(answered == ["a", "b", "c"], "answers in commit order")
        #expect(try store.load().meta["c"] == "1")

        clock.advance(ms: 5)
        commit("d")
        #expect(answered == ["a", "b", "c", "d"], "back on the loop once the writer has nothing in flight")
        path.finish(with: [.meta(key: "running", value: "0")])
        #expect(try store.load().meta == ["a": "1", "b": "1", "c": "1", "d": "1", "running": "0"])
    }

    @Test func aBigTurnGoesToTheWriterEvenWhenSpaced() throws {
        let f = try Fixture(synchronous: "normal")
        let (loop, path) = (f.loop, f.path)
        var done = false
        path.persist(inbox: loop)((0...CommitPath.opsOnLoop).map { .meta(key: "k\($0)", value: "v") }) { done = $0 }
        #expect(!done)
        try loop.run(1)
        #expect(done)
        path.finish(with: [])
    }

    @Test func synchronousFullNeverCommitsOnTheLoop() throws {
        let f = try Fixture(synchronous: "full")
        let (clock, loop, path) = (f.clock, f.loop, f.path)
        let persist = path.persist(inbox: loop)
        var answered = 0
        for i in 0..<3 {
            clock.advance(ms: 100)
            persist([.meta(key: "k\(i)", value: "v")]) { ok in if ok { answered += 1 } }
            #expect(answered == i, "an fsyncing commit never runs on the loop")
            try loop.run(1)
            #expect(answered == i + 1)
        }
        path.finish(with: [])
    }
}
