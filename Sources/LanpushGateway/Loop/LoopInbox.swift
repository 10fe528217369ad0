import Foundation
import LanpushLWS

/// What a component needs to hand completions back to the loop: `post` from any thread, `bound` to carry a
/// loop-thread value through another thread. `LoopInbox` in the daemon; tests run the posted jobs themselves.
protocol LoopPoster: Sendable {
    func post(_ job: @escaping () -> Void)
    func bound<T>(_ value: T) -> LoopBound<T>
}

/// How other threads (the store's writer, relay requests, the HA channel) hand work to the lws loop:
/// enqueue under a lock, wake the loop with `lws_cancel_service`; the loop drains in `loopWoken()`.
final class LoopInbox: LoopPoster, @unchecked Sendable {
    private let lock = NSLock()
    private var jobs: [() -> Void] = []
    private weak var server: LWSServer?

    func attach(_ server: LWSServer) {
        lock.lock()
        self.server = server
        let pending = !jobs.isEmpty
        lock.unlock()
        if pending { server.wake() }
    }

    /// Any thread. `job` runs later on the loop thread. Only the post that finds the queue empty wakes the
    /// loop (a pipe write each): the drain takes everything, so a group commit's many completions cost one wake.
    func post(_ job: @escaping () -> Void) {
        lock.lock()
        let wasEmpty = jobs.isEmpty
        jobs.append(job)
        let server = wasEmpty ? self.server : nil
        lock.unlock()
        server?.wake()
    }

    /// Boxes a loop-thread value for a trip through another thread (a completion posted back here): every access
    /// checks, in debug builds, that it is back on the loop.
    func bound<T>(_ value: T) -> LoopBound<T> {
        lock.lock()
        let server = self.server
        lock.unlock()
        guard let server else { preconditionFailure("LoopInbox.bound before the server is attached") }
        return LoopBound(value, on: server)
    }

    /// Loop thread: runs everything posted so far (wakes may merge, so always drain).
    func drain() {
        lock.lock()
        let batch = jobs
        jobs.removeAll(keepingCapacity: true)
        lock.unlock()
        for job in batch { job() }
    }
}
