import CLibWebSockets

/// One lws context on its event loop, with what every owner of one needs around it: the timers, the cross-thread
/// wake, the loop thread's record and the C memory lws points into. ``LWSServer`` and ``WSClientLoop`` each own
/// one.
///
/// Teardown has an order lws depends on (``destroy(willDestroy:didDestroy:)``): no more wakes or timers, then
/// `lws_context_destroy` (connections get their last callbacks inside it), then the event loop finishes closing
/// lws's handles, and only then is the memory lws pointed into freed. Across those two steps lws (on libuv) closes
/// its cancel pipe twice; ``PipeCloseGuard`` keeps the second close off other threads' descriptors.
///
/// Loop thread only, except ``waker``.
final class LoopContext {
    let memory = LWSMemory()
    let timers = LoopTimers()
    let waker = LoopWaker()
    let thread = LoopThread()
    private let loop = EventLoop()
    /// `nil` before creation and from the start of the teardown.
    private(set) var context: OpaquePointer?
    /// From the start of the teardown: nothing new is scheduled or connected.
    private(set) var tearingDown = false
    /// While the context is destroyed: takes back the number lws closes twice (PipeCloseGuard.swift).
    private var pipeGuard: PipeCloseGuard?
    /// Tests: runs after `lws_context_destroy` returns and before the loop runs lws's close callbacks, where a
    /// descriptor another thread opens would meet lws's second close of its pipe.
    var afterContextDestroyed: (() -> Void)?
    /// The number of lws's pipe when the last teardown began (tests).
    private(set) var pipeDescriptorAtTeardown: Int32?

    /// The event loop actually in use.
    var kind: LWSEventLoopKind { loop.kind }

    init() {}

    deinit { destroy() }

    /// Creates the context on the wanted loop (or the next one down, EventLoop.swift); `info` must describe a
    /// single-threaded context. With an fd budget the soft RLIMIT_NOFILE equals it while lws sizes its tables
    /// (FileLimit.swift).
    func create(_ info: inout lws_context_creation_info, want: LWSEventLoopKind, fdBudget: Int) -> OpaquePointer? {
        guard let ctx = loop.createContext(&info, want: want, fdBudget: fdBudget) else {
            tearingDown = true
            return nil
        }
        context = ctx
        timers.context = ctx
        timers.evLoop = loop.libevLoop
        return ctx
    }

    /// Wakes from other threads reach the loop from now on.
    func acceptWakes() {
        if let context { waker.attach(context) }
    }

    /// One turn of the loop; `false` on a fatal lws service error (poll loop only).
    func runOnce() -> Bool {
        guard let context else { return false }
        return loop.runOnce(context)
    }

    func schedule(after seconds: Double, _ body: @escaping () -> Void) -> LWSTimer {
        tearingDown ? .inert : timers.schedule(after: seconds, body)
    }

    /// Destroys the context: `willDestroy` runs first (mark connections closing), `didDestroy` once lws and the
    /// loop are done with every connection (report what is left, free per-connection memory). Idempotent.
    func destroy(willDestroy: () -> Void = {}, didDestroy: () -> Void = {}) {
        guard let ctx = context else {
            memory.release()
            return
        }
        waker.attach(nil)
        tearingDown = true
        timers.cancelAll()
        willDestroy()
        pipeDescriptorAtTeardown = loop.eventPipeDescriptor()
        pipeGuard = pipeDescriptorAtTeardown.flatMap { PipeCloseGuard(descriptor: $0) }
        lws_context_destroy(ctx)
        context = nil
        pipeGuard?.tryHold()
        afterContextDestroyed?()
        loop.destroy()
        pipeGuard?.release()
        pipeGuard = nil
        didDestroy()
        memory.release()
    }

    /// At every lws callback while the context is destroyed: lws closes its pipe before the connections, so the
    /// first connection's callback is the earliest moment the guard can take the number back.
    @inline(__always)
    func duringTeardown() {
        pipeGuard?.tryHold()
    }
}
