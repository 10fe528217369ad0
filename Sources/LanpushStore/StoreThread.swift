import Foundation

/// A thread of the store's that sleeps on `condition` until it has work or is asked to stop. Its owner keeps its own
/// state (a queue, a request) under the same lock and waits on the same condition; `stop()` returns once the body
/// has seen `stopping` and returned.
final class StoreThread: @unchecked Sendable {
    let condition = NSCondition()
    /// Set by `stop()`; read under `condition`.
    private(set) var stopping = false
    private var running = false

    /// Runs `body` on a new thread named `name`.
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        condition.lock()
        running = true
        condition.unlock()
        let thread = Thread { [self] in
            body()
            condition.lock()
            running = false
            condition.broadcast()
            condition.unlock()
        }
        thread.name = name
        thread.start()
    }

    /// Asks the body to finish and waits until it has (at once when it never started).
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }
}
