import CLibWebSockets

/// The thread-safe edge of an lws loop: `lws_cancel_service` is the only lws call other threads may make.
/// Wakes and stop requests from any thread go through here; the loop's `EVENT_WAIT_CANCELLED` then drains.
/// Shared by ``LWSServer`` and ``WSClientLoop``.
final class LoopWaker: @unchecked Sendable {
    private let lock = PThreadLock()
    private var context: OpaquePointer?
    private var stopFlag = false

    /// The context to wake, once created; `nil` from the start of its teardown (wakes become no-ops).
    func attach(_ context: OpaquePointer?) { lock.withLock { self.context = context } }

    /// Any thread. Wakes may merge.
    func wake() {
        lock.withLock {
            if let c = context { lws_cancel_service(c) }
        }
    }

    /// Any thread: records the request and wakes the loop.
    func requestStop() {
        lock.withLock {
            stopFlag = true
            if let c = context { lws_cancel_service(c) }
        }
    }

    var stopRequested: Bool { lock.withLock { stopFlag } }
}
