import Foundation
import Histogram
import LanpushCore

#if canImport(Glibc)
import Glibc
#endif

extension ScenarioRunner {
    /// `sessions` sessions, publisher as fast as possible. `allTargets`: every update goes to every session (lanpush
    /// `targets: "all"`, MQTT topic `all/tK` that every subscriber has); otherwise round-robin, one session each.
    func fast(_ kind: ServerKind, sessions: Int, allTargets: Bool, key: String, stream: Bool = false) throws -> [Metric] {
        let tags = scale.tags
        let s = try setUp(kind, devices: sessions, sessions: sessions, extraFilters: allTargets ? ["all/#"] : [])
        defer { tearDown(s) }
        let target: (Int) -> Int? = allTargets ? { _ in nil } : { $0 % sessions }
        // Warm-up: one start per (device, tag) slot.
        let slots = allTargets ? tags : sessions * tags
        let before = s.hub.sync { s.hub.stats.deliveries }
        try publish(s, mode: .max, duration: 60, window: (0, 0), limit: slots, connections: 4) { i, _ in
            LanpushUpdate(device: target(i), tag: allTargets ? i % tags : (i / sessions) % tags, progress: 0, stamp: 0)
        }
        let expectWarm = before + (allTargets ? slots * sessions : slots)
        wait(s.hub, timeout: 30) { s.hub.stats.deliveries >= expectWarm }

        let lead = scale.lead
        let start = nowNanos() + 50_000_000
        let window = (start + UInt64(lead * 1e9), start + UInt64((lead + scale.fastSeconds) * 1e9))
        // A session sees every update of a tag (all targets) or every lcm(sessions, tags)-th index of it (round-robin).
        let step = allTargets ? tags : sessions / gcd(sessions, tags) * tags
        s.hub.sync { s.hub.window = window; s.hub.stats = ClientStats(); s.hub.progressCount = (tags, step) }
        let cpu0 = s.server.cpuSeconds
        let wall0 = nowNanos()
        let tool0 = Sys.cpuSeconds(pid: getpid())
        let r = try publish(s, mode: .max, start: start, duration: lead + scale.fastSeconds + 0.3, window: window,
                            connections: scale.fastConnections, stream: stream) { i, stamp in
            LanpushUpdate(device: target(i), tag: i % tags, progress: i + 1, stamp: stamp)
        }
        let cpu = cpuPercent(s.server, from: cpu0, since: wall0)
        usleep(300_000)
        let st = s.hub.sync { s.hub.stats }
        let secs = scale.fastSeconds
        var m: [Metric] = [
            Metric(key: "\(key).deliveries", label: "deliveries/s (frames received)", unit: "/s",
                   value: Double(st.framesInWindow) / secs, better: .higher),
            // What the frames carried: lanpush merges what a tag receives while its session's socket is busy (within
            // one loop turn, or beyond the session's window) into one frame with the newest state; mosquitto delivers
            // every PUBLISH, so the two counts are equal for it (unless its queue overflows and drops some).
            Metric(key: "\(key).covered", label: "updates reaching the sessions/s (in a frame of their own or merged into a later one)",
                   unit: "/s", value: Double(st.coveredInWindow) / secs, better: .higher),
            // HTTP: answered 2xx inside the window (the stream: accepted). MQTT QoS 0 has no answer: PUBLISHes written
            // per second over the whole run (the publisher blocks once mosquitto's input is full).
            Metric(key: "\(key).updates", label: "updates accepted/s (MQTT: published/s)", unit: "/s",
                   value: kind.isLanpush ? Double(r.answeredInWindow) / secs : Double(r.sent) / max(0.001, r.seconds), better: .higher),
        ]
        m += latencyMetrics(st.latency, prefix: "\(key).latency", label: "ingest→delivery at saturation").filter { !$0.key.hasSuffix("p999") }
        m.append(Metric(key: "\(key).bytes", label: "bytes on the wire per delivery (both directions)", unit: "B",
                        value: st.framesInWindow > 0 ? Double(st.bytesInWindow + st.bytesOutWindow) / Double(st.framesInWindow) : 0, better: .lower))
        m.append(Metric(key: "\(key).cpu", label: "server CPU", unit: "% of a core", value: cpu, better: .none))
        m.append(Metric(key: "\(key).toolcpu", label: "load tool CPU (publisher + clients)", unit: "% of a core",
                        value: cpuPercent(ToolProcess(), from: tool0, since: wall0), better: .none))
        m += rssMetrics(s.server, key: key)
        if kind.isLanpush {
            m += latencyMetrics(r.answerLatency, prefix: "\(key).http", label: stream ? "accepted after" : "HTTP answer")
                .filter { !$0.key.hasSuffix("p999") }
            let bad = r.statusCounts.filter { $0.key != 202 }.values.reduce(0, +)
            if bad > 0 { env.log("\(kind.rawValue): answers other than accepted: \(r.statusCounts)") }
        }
        return m
    }

    /// `manySessions` sessions, plain notifications at `latencyRate` per second, each to one device (round-robin): what
    /// an update costs the server. lanpush queues each until acknowledged (stored and deleted again when durable);
    /// mosquitto gets the closest thing, QoS 1 (not retained, PUBACKed by every subscriber, none stored). `stream`:
    /// lanpush's publisher is one publisher stream instead of 8 HTTP connections (what a script or Node-RED would use;
    /// HA speaks HTTP), paced the same.
    func notify(_ kind: ServerKind, key: String = "notify", stream: Bool = false) throws -> [Metric] {
        let n = scale.manySessions
        let s = try setUp(kind, devices: n, sessions: n, qos: 1)
        defer { tearDown(s) }
        let lead = scale.lead
        let start = nowNanos() + 50_000_000
        let window = (start + UInt64(lead * 1e9), start + UInt64((lead + scale.measure) * 1e9))
        s.hub.sync { s.hub.window = window; s.hub.stats = ClientStats() }
        let cpu0 = s.server.cpuSeconds
        let wall0 = nowNanos()
        let r = try publish(s, mode: .rate(scale.latencyRate), start: start, duration: lead + scale.measure, window: window,
                            connections: 8, stream: stream, qos: 1) { i, stamp in
            LanpushUpdate(device: i % n, tag: 0, progress: 0, stamp: stamp, plain: true)
        }
        wait(s.hub, timeout: 5) { s.hub.stats.deliveries >= r.sent }
        let cpuSeconds = (s.server.cpuSeconds ?? 0) - (cpu0 ?? 0)
        let cpu = cpuPercent(s.server, from: cpu0, since: wall0)
        let st = s.hub.sync { s.hub.stats }
        var m = [
            Metric(key: "\(key).cpuper", label: "server CPU per update", unit: "µs", value: cpuSeconds / Double(max(1, r.sent)) * 1e6,
                   better: .lower),
            Metric(key: "\(key).cpu", label: "server CPU", unit: "% of a core", value: cpu, better: .lower),
            Metric(key: "\(key).delivered", label: "updates delivered (of sent in window)", unit: "%",
                   value: r.sentInWindow > 0 ? Double(st.latency.totalCount) / Double(r.sentInWindow) * 100 : 0, better: .higher),
        ]
        m += latencyMetrics(st.latency, prefix: "\(key).latency", label: "ingest→delivery").filter { !$0.key.hasSuffix("p999") }
        m += rssMetrics(s.server, key: key)
        return m
    }

    /// The server's RSS right after a run and, with `--settle`, once it has sat idle that long.
    func rssMetrics(_ server: BenchServer, key: String) -> [Metric] {
        guard let rss = server.rssKiB else { return [] }
        var m = [Metric(key: "\(key).rss", label: "server RSS after the run", unit: "MiB", value: Double(rss) / 1024, better: .lower)]
        if scale.settleSeconds > 0 {
            Thread.sleep(forTimeInterval: scale.settleSeconds)
            if let settled = server.rssKiB {
                m.append(Metric(key: "\(key).rss.settled", label: "server RSS \(String(format: "%g", scale.settleSeconds)) s after the run", unit: "MiB",
                                value: Double(settled) / 1024, better: .lower))
            }
        }
        return m
    }
}

private func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
