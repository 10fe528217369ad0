import Foundation
import Histogram
import LanpushCore

#if canImport(Glibc)
import Glibc
#endif

extension ScenarioRunner {
    /// N sessions, fixed rate, each update to one device (round-robin), device d's tag = d mod T.
    func latency(_ kind: ServerKind) throws -> [Metric] {
        let n = scale.latencySessions
        let tags = scale.tags
        let s = try setUp(kind, devices: n, sessions: n)
        defer { tearDown(s) }
        try warmUp(s, count: n, sessions: n) { i in LanpushUpdate(device: i % n, tag: (i % n) % tags, progress: 0, stamp: 0) }
        let lead = scale.lead
        let start = nowNanos() + 50_000_000
        let window = (start + UInt64(lead * 1e9), start + UInt64((lead + scale.measure) * 1e9))
        s.hub.sync { s.hub.window = window; s.hub.stats = ClientStats() }
        let cpu0 = s.server.cpuSeconds
        let wall0 = nowNanos()
        let r = try publish(s, mode: .rate(scale.latencyRate), start: start, duration: lead + scale.measure + 0.5, window: window,
                            connections: 8) { i, stamp in
            LanpushUpdate(device: i % n, tag: (i % n) % tags, progress: i + 1, stamp: stamp)
        }
        let cpu = cpuPercent(s.server, from: cpu0, since: wall0)
        wait(s.hub, timeout: 5) { s.hub.stats.latency.totalCount >= UInt64(r.sentInWindow) }
        let st = s.hub.sync { s.hub.stats }
        var m = latencyMetrics(st.latency, prefix: "latency", label: "ingest→delivery")
        m.append(Metric(key: "latency.delivered", label: "updates delivered (of sent in window)", unit: "%",
                        value: r.sentInWindow > 0 ? Double(st.latency.totalCount) / Double(r.sentInWindow) * 100 : 0, better: .higher))
        m.append(Metric(key: "latency.cpu", label: "server CPU", unit: "% of a core", value: cpu, better: .lower))
        if kind.isLanpush {
            m += latencyMetrics(r.answerLatency, prefix: "latency.http", label: "HTTP answer")
        }
        if r.lateStarts > 0 { env.log("\(kind.rawValue): \(r.lateStarts) requests started > 2 ms late (publisher busy)") }
        return m
    }
}
