import CLibWebSockets

/// A pending ``LWSServer/schedule(after:_:)`` (or ``WSClientLoop/schedule(after:_:)``) call. Loop thread only.
public final class LWSTimer {
    var body: (() -> Void)?
    init(_ body: (() -> Void)?) { self.body = body }
    /// A timer that never runs (scheduled during a teardown).
    static var inert: LWSTimer { LWSTimer(nil) }
    /// Prevents the body from running (no-op if it already ran).
    public func cancel() { body = nil }
    /// `true` until the body ran or the timer was cancelled.
    public var isPending: Bool { body != nil }
}

/// The timers of one lws context: a min-heap of deadlines behind a single lws sorted-usec-list entry (a libev timer
/// of the adapter's own on libev), so any number of `schedule(after:)` calls cost one timer of the loop.
///
/// Why not one lws timer each: lws 4.1 keeps its timers in one sorted list and inserts with a linear walk, already
/// a visible cost with its own per-connection timers (docs/BENCHMARKS.md); a heap insert is logarithmic.
///
/// Loop thread only (or the creating thread before the loop runs).
final class LoopTimers {
    private var heap = TimerHeap()
    private var seq: UInt64 = 0
    /// lws keeps a pointer to this until it is cancelled or the context is destroyed: allocated once.
    private let sul: UnsafeMutablePointer<lanpush_lws_timer_t>
    /// The context timers arm on; `nil` before it exists and from the start of its teardown (then nothing is
    /// scheduled and nothing more runs).
    var context: OpaquePointer?
    /// On lws's libev plugin: the loop the timers arm on directly, since lws 4.1's libev glue ignores an lws timer
    /// earlier than the one it has armed (EventLoop.swift). `nil` on the other loops: one lws timer.
    var evLoop: UnsafeMutableRawPointer?
    private var evTimer: UnsafeMutablePointer<lanpush_ev_timer_t>?

    init() {
        sul = .allocate(capacity: 1)
        sul.initialize(to: lanpush_lws_timer_t())
        sul.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        lanpush_ev_timer_free(evLoop, evTimer)
        sul.deinitialize(count: 1)
        sul.deallocate()
    }

    func schedule(after seconds: Double, _ body: @escaping () -> Void) -> LWSTimer {
        guard context != nil else { return .inert }
        let t = LWSTimer(body)
        let deadline = lws_now_usecs() + Int64(max(0, seconds) * 1_000_000)
        seq &+= 1
        let wasFirst = heap.peek().map { deadline < $0.deadline } ?? true
        heap.push(TimerHeap.Entry(deadline: deadline, seq: seq, timer: t))
        if wasFirst { arm() }
        return t
    }

    /// Before the context is destroyed: drops every timer and detaches from lws.
    func cancelAll() {
        context = nil
        lws_sul_cancel(lanpush_lws_timer_sul(sul))
        lanpush_ev_timer_free(evLoop, evTimer)
        evTimer = nil
        evLoop = nil
        heap.removeAll()
    }

    private func arm() {
        guard let ctx = context else { return }
        let delay = heap.peek().map { max(0, $0.deadline - lws_now_usecs()) }
        if let evLoop {
            armOnLibev(evLoop, delay: delay)
        } else if let delay {
            lws_sul_schedule(ctx, 0, lanpush_lws_timer_sul(sul), lanpushLoopTimersFired, delay)
        } else {
            lws_sul_cancel(lanpush_lws_timer_sul(sul))
        }
    }

    private func armOnLibev(_ loop: UnsafeMutableRawPointer, delay: Int64?) {
        if evTimer == nil {
            evTimer = lanpush_ev_timer_new(lanpushLoopTimersFiredOnLibev, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let evTimer else { return }
        if let delay {
            lanpush_ev_timer_arm(loop, evTimer, Double(delay) / 1e6, 0)
        } else {
            lanpush_ev_timer_stop(loop, evTimer)
        }
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

private func lanpushLoopTimersFiredOnLibev(_ owner: UnsafeMutableRawPointer?) {
    guard let owner else { return }
    Unmanaged<LoopTimers>.fromOpaque(owner).takeUnretainedValue().fired()
}

/// Binary min-heap on (deadline, seq): equal deadlines run in scheduling order.
struct TimerHeap {
    struct Entry {
        let deadline: Int64
        let seq: UInt64
        let timer: LWSTimer

        func before(_ o: Entry) -> Bool { deadline != o.deadline ? deadline < o.deadline : seq < o.seq }
    }

    private var items: [Entry] = []

    func peek() -> Entry? { items.first }
    mutating func removeAll() { items.removeAll() }

    mutating func push(_ e: Entry) {
        items.append(e)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].before(items[parent]) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> Entry? {
        guard !items.isEmpty else { return nil }
        let top = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < items.count && items[l].before(items[m]) { m = l }
                if r < items.count && items[r].before(items[m]) { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}
