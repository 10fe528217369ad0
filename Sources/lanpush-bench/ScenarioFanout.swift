import Foundation
import Histogram
import LanpushCore

#if canImport(Glibc)
import Glibc
#endif

extension ScenarioRunner {
    /// N sessions: idle RSS per session, then one update fanned out to all of them (`fanRepeats` times).
    func fanout(_ kind: ServerKind) throws -> [Metric] {
        let n = scale.fanSessions
        // The server's baseline before any session (lanpush: with its N devices configured).
        let s0 = try setUp(kind, devices: n, sessions: 0, capacity: n)
        sleepSeconds(min(0.5, 5 * scale.lead))
        let base = s0.server.rssKiB ?? 0
        let t0 = nowNanos()
        let kinds: [SessionKind]
        let url: String
        let proto: String
        if let l = s0.lanpush {
            kinds = (0..<n).map { .lanpush(token: l.tokens[$0]) }
            url = "ws://127.0.0.1:\(l.port)/v1/stream"
            proto = scale.lanpushProtocol
        } else {
            kinds = (0..<n).map { .mqtt(clientId: "bench-\($0)", filters: ["fan/#"]) }
            url = "ws://127.0.0.1:\(s0.server.wsPort)/mqtt"
            proto = "mqtt"
        }
        let ready = s0.hub.connect(url: url, subprotocol: proto, kinds: kinds, parallel: scale.connectParallel, timeout: 300)
        let connectSeconds = Double(nowNanos() - t0) / 1e9
        defer { tearDown(s0) }
        guard ready == n else {
            throw BenchError("\(kind.rawValue): only \(ready) of \(n) sessions came up (\(s0.hub.sync { s0.hub.stats.lastFailure }))")
        }
        env.log("\(kind.rawValue): \(n) sessions in \(String(format: "%.1f", connectSeconds)) s")
        sleepSeconds(min(2, max(0.5, Double(n) / 5000)))
        let idle = s0.server.rssKiB ?? 0
        var m: [Metric] = [
            Metric(key: "fan.rss", label: "RSS per idle session", unit: "KiB", value: Double(idle - base) / Double(n), better: .lower),
            Metric(key: "fan.connect", label: "sessions opened per second", unit: "/s", value: Double(n) / connectSeconds, better: .higher),
        ]
        // Fan-out: a start first (untimed), then `fanRepeats` timed updates.
        let fan: (UInt64, Int) -> LanpushUpdate = { stamp, i in LanpushUpdate(device: nil, tag: 0, progress: i, stamp: stamp) }
        func publishOne(_ i: Int, stamp: UInt64) throws -> PublishResult {
            if let l = s0.lanpush {
                let load = try HTTPLoad(port: l.port, path: "/v1/push", token: l.adminToken, connections: 1)
                defer { load.close() }
                return load.run(mode: .max, start: nowNanos(), duration: 60, window: (0, UInt64.max), limit: 1, firstIndex: i) { _, _, out in
                    fan(stamp, i).write(into: &out)
                }
            }
            let pub = try MQTTPublisher(port: s0.mosquitto!.mqttPort)
            defer { pub.close() }
            return pub.run(mode: .max, start: nowNanos(), duration: 60, window: (0, UInt64.max), limit: 1, firstIndex: i, batch: 1) { _, _, topic, payload in
                var u = fan(stamp, i)
                u.device = nil
                topic.append(contentsOf: "fan/t0".utf8)
                var scratch: [UInt8] = []
                u.writeMQTT(topic: &scratch, payload: &payload)
            }
        }
        s0.hub.sync { s0.hub.window = (0, UInt64.max); s0.hub.stats = ClientStats(); s0.hub.countStamps = true }
        var times: [Double] = []
        var medians: [Double] = []
        var answers: [Double] = []
        var serverCPU: [Double] = []
        var toolCPU: [Double] = []
        for i in 0...scale.fanRepeats {
            let stamp = nowNanos()
            let cpu0 = (s0.server.cpuSeconds ?? 0, Sys.cpuSeconds(pid: getpid()) ?? 0)
            let r = try publishOne(i, stamp: stamp)
            let complete = wait(s0.hub, timeout: 60) { (s0.hub.stampCounts[stamp] ?? 0) >= n }
            if !complete {
                env.log("\(kind.rawValue): fan-out \(i): \(s0.hub.sync { s0.hub.stampCounts[stamp] ?? 0 }) of \(n) delivered")
            }
            let (last, h) = s0.hub.sync { () -> (UInt64, Histogram<UInt64>) in
                let r = (s0.hub.stats.lastReceive, s0.hub.stats.latency)
                s0.hub.stats.latency.reset()
                return r
            }
            if i == 0 { continue }  // the start frame
            serverCPU.append(((s0.server.cpuSeconds ?? 0) - cpu0.0) * 1000)
            toolCPU.append(((Sys.cpuSeconds(pid: getpid()) ?? 0) - cpu0.1) * 1000)
            times.append(Double(last - stamp) / 1e6)
            medians.append(Double(h.valueAtPercentile(50)) / 1e6)
            if kind.isLanpush { answers.append(Double(r.answerLatency.valueAtPercentile(50)) / 1e6) }
            sleepSeconds(min(0.2, scale.lead))
        }
        m.append(Metric(key: "fan.last", label: "time to last delivery", unit: "ms", value: median(times), better: .lower))
        m.append(Metric(key: "fan.median", label: "time to median delivery", unit: "ms", value: median(medians), better: .lower))
        if kind.isLanpush {
            m.append(Metric(key: "fan.http", label: "HTTP answer (after commit)", unit: "ms", value: median(answers), better: .lower))
        }
        m.append(Metric(key: "fan.cpu", label: "server CPU time per fan-out (incl. the acks)", unit: "ms", value: median(serverCPU), better: .lower))
        m.append(Metric(key: "fan.toolcpu", label: "load tool CPU time per fan-out", unit: "ms", value: median(toolCPU), better: .none))
        return m
    }
}
