import Foundation
import Histogram
import LanpushCore

#if canImport(Glibc)
import Glibc
#endif

extension ScenarioRunner {
    /// One session that processes (applies + acks) one frame every 100 ms while updates flow on one tag.
    func slow(_ kind: ServerKind) throws -> [Metric] {
        let s = try setUp(kind, devices: 1, sessions: 1)
        defer { tearDown(s) }
        s.hub.sync { s.hub.trackState = true }
        s.hub.startSlowTicks(interval: 0.1)
        let lead = 2 * scale.lead
        let start = nowNanos() + 50_000_000
        let total = scale.slowSeconds + lead
        let window = (start + UInt64(lead * 1e9), start + UInt64(total * 1e9))
        s.hub.sync { s.hub.window = window; s.hub.stats = ClientStats() }
        let last = LastSent()
        let r = try publish(s, mode: .rate(scale.slowRate), start: start, duration: total, window: window, connections: 8) { i, stamp in
            last.set(i + 1, stamp)
            return LanpushUpdate(device: 0, tag: 0, progress: i + 1, stamp: stamp)
        }
        let (lastProgress, lastStamp) = last.get()
        let st = s.hub.sync { s.hub.stats }
        let frames = Double(st.framesInWindow) / scale.slowSeconds
        // Final state: the reader keeps reading at 10/s; lanpush should converge within its window's worth of frames.
        let key = kind.isLanpush ? "t0" : "b/d0/t0"
        let t0 = nowNanos()
        let exact = wait(s.hub, timeout: scale.convergeTimeout) {
            guard let state = s.hub.sessions.first?.states[key]?.objectValue else { return false }
            return state["progress"] == .number(Double(lastProgress)) && state["message"] == .string("@\(lastStamp)")
        }
        let converge = Double(nowNanos() - t0) / 1e9
        let backlog = s.hub.sync { s.hub.sessions.first?.backlog.count ?? 0 }
        var m = [
            Metric(key: "slow.frames", label: "frames delivered to the slow session per second", unit: "/s", value: frames, better: .lower),
            Metric(key: "slow.exact", label: "final state exact (within \(Int(scale.convergeTimeout)) s after the last update)", unit: "%",
                   value: exact ? 100 : 0, better: .higher),
            Metric(key: "slow.backlog", label: "frames still waiting in the reader at the end", unit: "", value: Double(backlog), better: .lower),
            Metric(key: "slow.updates", label: "updates sent per second", unit: "/s", value: Double(r.sentInWindow) / scale.slowSeconds, better: .none),
        ]
        if exact { m.append(Metric(key: "slow.converge", label: "time to the final state after the last update", unit: "s", value: converge, better: .lower)) }
        return m
    }
}

final class LastSent: @unchecked Sendable {
    private let lock = Lock()
    private var n = 0
    private var stamp: UInt64 = 0
    func set(_ n: Int, _ s: UInt64) { lock.withLock { self.n = n; stamp = s } }
    func get() -> (Int, UInt64) { lock.withLock { (n, stamp) } }
}
