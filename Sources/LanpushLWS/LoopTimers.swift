import CLibWebSockets

/// The timers of one lws context: a min-heap of deadlines behind a single lws sorted-usec-list entry, so any
/// number of `schedule(after:)` calls cost one lws timer. Shared by the server and the standalone client loop.
/// Loop thread only (or the creating thread before the loop runs).
final class LoopTimers {
    private var heap = TimerHeap()
    private var seq: UInt64 = 0
    /// lws keeps a pointer to this until it is cancelled or the context is destroyed: allocated once.
    private let sul: UnsafeMutablePointer<lanpush_lws_timer_t>
    /// The context timers arm on; `nil` before it exists and from the start of its teardown (then nothing is
    /// scheduled and nothing more runs).
    var context: OpaquePointer?

    init() {
        sul = .allocate(capacity: 1)
        sul.initialize(to: lanpush_lws_timer_t())
        sul.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        sul.deinitialize(count: 1)
        sul.deallocate()
    }

    func schedule(after seconds: Double, _ body: @escaping () -> Void) -> LWSTimer {
        let t = LWSTimer(body)
        guard context != nil else {
            t.body = nil
            return t
        }
        let deadline = lws_now_usecs() + Int64(max(0, seconds) * 1_000_000)
        seq &+= 1
        let wasFirst = heap.peek().map { deadline < $0.deadline } ?? true
        heap.push(TimerEntry(deadline: deadline, seq: seq, timer: t))
        if wasFirst { arm() }
        return t
    }

    /// Before the context is destroyed: drops every timer and detaches from lws.
    func cancelAll() {
        context = nil
        lws_sul_cancel(lanpush_lws_timer_sul(sul))
        heap.removeAll()
    }

    private func arm() {
        guard let ctx = context else { return }
        guard let top = heap.peek() else {
            lws_sul_cancel(lanpush_lws_timer_sul(sul))
            return
        }
        let delay = max(0, top.deadline - lws_now_usecs())
        lws_sul_schedule(ctx, 0, lanpush_lws_timer_sul(sul), lanpushLoopTimersFired, delay)
    }

    fileprivate func fired() {
        let now = lws_now_usecs()
        while let top = heap.peek(), top.deadline <= now + 200 {
            _ = heap.pop()
            guard let body = top.timer.body else { continue }
            top.timer.body = nil
            body()
            if context == nil { return }  // the body started a teardown
        }
        arm()
    }
}

private func lanpushLoopTimersFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let me = lanpush_lws_timer_owner(sul) else { return }
    Unmanaged<LoopTimers>.fromOpaque(me).takeUnretainedValue().fired()
}
