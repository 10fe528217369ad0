/// The clock of one publisher's run, the same for every publisher (HTTP, the publisher stream, MQTT): when the run
/// ends, which update is due next at a fixed rate, whether the update limit is reached, and which sends count into
/// the measured window.
struct Pacing {
    let start: UInt64
    let end: UInt64
    /// Nanoseconds between updates at a fixed rate; 0 as fast as possible.
    let interval: UInt64
    let window: (UInt64, UInt64)
    let limit: Int?
    let firstIndex: Int
    /// When the next update is due (fixed rate).
    var nextDue: UInt64

    init(mode: PublishMode, start: UInt64, duration: Double, window: (UInt64, UInt64), limit: Int?, firstIndex: Int) {
        self.start = start
        end = start + UInt64(duration * 1e9)
        if case .rate(let r) = mode { interval = UInt64(1e9 / r) } else { interval = 0 }
        self.window = window
        self.limit = limit
        self.firstIndex = firstIndex
        nextDue = start
    }

    /// A result that starts at the run's start.
    func newResult() -> PublishResult {
        var result = PublishResult()
        result.startNanos = start
        return result
    }

    /// `n` updates (counted from `firstIndex`) are as many as the run may send.
    func limitReached(_ n: Int) -> Bool { limit.map { n - firstIndex >= $0 } ?? false }

    /// No update is to be sent any more: the duration is over or the limit reached.
    func isOver(now: UInt64, n: Int) -> Bool { now >= end || limitReached(n) }

    func inWindow(_ t: UInt64) -> Bool { t >= window.0 && t < window.1 }

    /// An update sent at `now`.
    func count(sentAt now: UInt64, into result: inout PublishResult) {
        result.sent += 1
        if inWindow(now) { result.sentInWindow += 1 }
    }
}
