import Foundation
import Histogram
import LanpushCore

#if canImport(Glibc)
import Glibc
#endif

/// Sizes of a benchmark run. `full` is the table; `smoke` finishes in seconds.
struct Scale: Sendable {
    var latencySessions = 1000
    var latencyRate = 1000.0
    var tags = 100
    var measure = 10.0
    var fastSeconds = 8.0
    /// HTTP keep-alive connections of the as-fast-as-possible publishers: 64 saturate lanpushd's loop here; with 16
    /// it idles ~30 % of the time, bound by wake-up latency on this VM (see docs/BENCHMARKS.md).
    var fastConnections = 64
    var manySessions = 100
    var fanSessions = 10_000
    var fanRepeats = 5
    var slowSeconds = 10.0
    var slowRate = 1000.0
    var ingestSeconds = 8.0
    /// Seconds of load before a measurement window opens (connections warm, queues in steady state).
    var lead = 1.0
    /// Slow scenario: how long the reader may take to reach the final state after the last update.
    var convergeTimeout = 12.0
    /// Concurrent WebSocket handshakes while opening the fan-out sessions.
    var connectParallel = 512
    var soakSessions = 10_000
    var soakMinutes = 10.0
    var soakRate = 1000.0
    var soakChurn = 0.01
    var soakStuck = false

    static let full = Scale()
    static let smoke = Scale(
        latencySessions: 20, latencyRate: 200, tags: 5, measure: 0.5, fastSeconds: 0.5, fastConnections: 4, manySessions: 5,
        fanSessions: 40, fanRepeats: 2, slowSeconds: 1, slowRate: 200, ingestSeconds: 0.5, lead: 0.2, convergeTimeout: 2,
        connectParallel: 64, soakSessions: 40, soakMinutes: 0.1, soakRate: 100)
}

/// One measured figure of one run.
struct Metric: Sendable {
    enum Better: Sendable { case higher, lower, none }
    var key: String
    var label: String
    var unit: String
    var value: Double
    var better: Better
}

/// What every scenario needs: the binaries, the scale, a logger.
struct Environment {
    var lanpushd: String
    var mosquitto: String?
    /// wrk and its script (Benchmarks/ingest.lua): the ingest scenario's cross-check, when both are there.
    var wrk: (binary: String, script: String)?
    var scale: Scale
    var verbose: Bool

    func log(_ s: String) {
        if verbose { FileHandle.standardError.write(Data("  · \(s)\n".utf8)) }
    }
}

enum ScenarioID: String, CaseIterable, Sendable {
    case latency, fast1 = "fast-1", fast1stream = "fast-1-stream", fast100 = "fast-100", fast100each = "fast-100-each", fanout,
        notify, bytes, slow, ingest
    /// Not in the default set (it takes minutes): Benchmarks/soak.sh.
    case soak

    var title: String {
        switch self {
        case .latency: return "Latency: N device sessions, fixed rate, each update to one device, T tags"
        case .fast1: return "1 session, as fast as possible"
        case .fast1stream: return "1 session, as fast as possible, lanpush's publisher stream (MQTT: the same PUBLISH stream)"
        case .notify: return "100 sessions, 1,000 plain notifications/s, each to one device: CPU per update"
        case .fast100: return "100 sessions, as fast as possible, every update to all 100 (topic fan-out)"
        case .fast100each: return "100 sessions, as fast as possible, each update to one session"
        case .fanout: return "10,000 sessions: idle memory, then 1 update fanned out to all"
        case .bytes: return "Bytes per update: delta vs full state (seed scenarios)"
        case .slow: return "1 slow session (10 frames/s) while 1,000 updates/s flow on 1 tag"
        case .ingest: return "Ingest: HTTP throughput and answer latency, no session"
        case .soak: return "Soak: N sessions for M minutes at a fixed rate with reconnect churn (per-minute RSS, fds, p99)"
        }
    }

    /// Mosquitto has no HTTP ingest: the ingest scenario runs lanpush only.
    var servers: [ServerKind] {
        switch self {
        case .ingest: return [.lanpush, .lanpushMemory]
        case .soak: return [.lanpush]
        default: return ServerKind.allCases
        }
    }
}

// MARK: - Payloads

/// `{"targets":[...],"title":"Bench","message":"@STAMP","data":{"tag":"tK","live_update":true,"progress":N,"progress_max":1000000}}`
struct LanpushUpdate {
    /// `nil`: every device ("all").
    var device: Int?
    var tag: Int
    var progress: Int
    var stamp: UInt64
    /// A plain notification (`{"targets","title","message":"@STAMP","data":{}}`) instead of a live update.
    var plain = false

    func write(into out: inout [UInt8]) {
        out.append(contentsOf: #"{"targets":"#.utf8)
        if let device {
            out.append(contentsOf: #"["d"#.utf8)
            appendDecimal(UInt64(device), to: &out)
            out.append(contentsOf: #""]"#.utf8)
        } else {
            out.append(contentsOf: #""all""#.utf8)
        }
        out.append(contentsOf: #","title":"Bench","message":"@"#.utf8)
        appendDecimal(stamp, to: &out)
        if plain {
            out.append(contentsOf: #"","data":{}}"#.utf8)
            return
        }
        out.append(contentsOf: #"","data":{"tag":"t"#.utf8)
        appendDecimal(UInt64(tag), to: &out)
        out.append(contentsOf: #"","live_update":true,"progress":"#.utf8)
        appendDecimal(UInt64(progress), to: &out)
        out.append(contentsOf: #","progress_max":1000000}}"#.utf8)
    }

    /// The same update for MQTT: topic `b/dN/tK` (or `all/tK`), payload = the ContentState lanpush's client would hold.
    func writeMQTT(topic: inout [UInt8], payload: inout [UInt8]) {
        if let device {
            topic.append(contentsOf: "b/d".utf8)
            appendDecimal(UInt64(device), to: &topic)
            topic.append(contentsOf: "/t".utf8)
        } else {
            topic.append(contentsOf: "all/t".utf8)
        }
        if plain {
            topic.removeLast()
            topic.append(contentsOf: "notify".utf8)
            payload.append(contentsOf: #"{"message":"@"#.utf8)
            appendDecimal(stamp, to: &payload)
            payload.append(contentsOf: #"","title":"Bench"}"#.utf8)
            return
        }
        appendDecimal(UInt64(tag), to: &topic)
        payload.append(contentsOf: #"{"message":"@"#.utf8)
        appendDecimal(stamp, to: &payload)
        payload.append(contentsOf: #"","progress":"#.utf8)
        appendDecimal(UInt64(progress), to: &payload)
        payload.append(contentsOf: #","progress_max":1000000,"title":"Bench"}"#.utf8)
    }
}

// MARK: - Runner

/// Runs one scenario against one server kind and returns its figures.
final class ScenarioRunner {
    let env: Environment
    var scale: Scale { env.scale }

    init(env: Environment) { self.env = env }

    func run(_ id: ScenarioID, on kind: ServerKind) throws -> [Metric] {
        switch id {
        case .latency: return try latency(kind)
        case .fast1: return try fast(kind, sessions: 1, allTargets: false, key: "fast1")
        case .fast1stream: return try fast(kind, sessions: 1, allTargets: false, key: "fast1stream", stream: true)
        case .notify: return try notify(kind)
        case .fast100: return try fast(kind, sessions: scale.manySessions, allTargets: true, key: "fast100")
        case .fast100each: return try fast(kind, sessions: scale.manySessions, allTargets: false, key: "fast100each")
        case .fanout: return try fanout(kind)
        case .bytes: return try bytes(kind)
        case .slow: return try slow(kind)
        case .ingest: return try ingest(kind)
        case .soak: return try soak(kind)
        }
    }

    // MARK: set-up helpers

    struct Setup {
        var server: BenchServer
        var hub: ClientHub
        var lanpush: LanpushServer? { server as? LanpushServer }
        var mosquitto: MosquittoServer? { server as? MosquittoServer }
    }

    /// Starts the server (with `devices` devices for lanpush) and opens `sessions` sessions: session i is device
    /// `di` (lanpush) or subscribes `b/di/#` plus `filters` (MQTT).
    func setUp(_ kind: ServerKind, devices: Int, sessions: Int, extraFilters: [String] = [],
               window: Int = 32, capacity: Int? = nil, qos: UInt8 = 0) throws -> Setup {
        let server: BenchServer
        switch kind {
        case .lanpush, .lanpushMemory:
            server = try LanpushServer(binary: env.lanpushd, durable: kind == .lanpush, devices: devices, window: window)
        case .mosquitto:
            guard let m = env.mosquitto else { throw BenchError("mosquitto not found (install it: ./scripts/setup --test)") }
            server = try MosquittoServer(binary: m)
        }
        let hub: ClientHub
        do { hub = try ClientHub(maxConnections: (capacity ?? sessions) + 16) } catch {
            server.stop()
            throw error
        }
        let setup = Setup(server: server, hub: hub)
        guard sessions > 0 else { return setup }
        let kinds: [SessionKind]
        let url: String
        let proto: String
        if let l = setup.lanpush {
            kinds = (0..<sessions).map { .lanpush(token: l.tokens[$0]) }
            url = "ws://127.0.0.1:\(l.port)/v1/stream"
            proto = "lanpush.v1"
        } else {
            kinds = (0..<sessions).map { .mqtt(clientId: "bench-\($0)", filters: ["b/d\($0)/#"] + extraFilters, qos: qos) }
            url = "ws://127.0.0.1:\(server.wsPort)/mqtt"
            proto = "mqtt"
        }
        let t0 = nowNanos()
        let ready = hub.connect(url: url, subprotocol: proto, kinds: kinds, parallel: 64, timeout: 180)
        env.log("\(kind.rawValue): \(ready)/\(sessions) sessions ready in \(String(format: "%.2f", Double(nowNanos() - t0) / 1e9)) s")
        guard ready == sessions else {
            let why = hub.sync { hub.stats.lastFailure }
            tearDown(setup)
            throw BenchError("\(kind.rawValue): only \(ready) of \(sessions) sessions came up (\(why))")
        }
        return setup
    }

    func tearDown(_ s: Setup) {
        s.hub.stop()
        s.server.stop()
    }

    /// Waits until `done()` (evaluated on the loop thread) or the timeout.
    @discardableResult
    func wait(_ hub: ClientHub, timeout: Double, _ done: @escaping () -> Bool) -> Bool {
        let deadline = nowNanos() + UInt64(timeout * 1e9)
        while nowNanos() < deadline {
            if hub.sync(done) { return true }
            usleep(2000)
        }
        return false
    }

    /// Sends `count` updates (no timestamps inside any window) so every (device, tag) slot exists: the measured
    /// updates are then `update` frames, not `start` frames. Waits for their delivery.
    func warmUp(_ s: Setup, count: Int, sessions: Int, make: @escaping (Int) -> LanpushUpdate) throws {
        let expected = s.hub.sync { s.hub.stats.deliveries } + count * 1
        try publish(s, mode: .max, duration: 60, window: (0, 0), limit: count, connections: 4, make: { n, _ in make(n) })
        if !wait(s.hub, timeout: 60, { s.hub.stats.deliveries >= expected }) {
            env.log("warm-up: \(s.hub.sync { s.hub.stats.deliveries }) of \(expected) deliveries")
        }
        _ = sessions
    }

    /// Publishes through the server's ingest: HTTP `/v1/push` for lanpush, MQTT PUBLISH for mosquitto.
    @discardableResult
    func publish(_ s: Setup, mode: PublishMode, start: UInt64? = nil, duration: Double, window: (UInt64, UInt64),
                 limit: Int? = nil, connections: Int, firstIndex: Int = 0, stream: Bool = false, qos: UInt8 = 0,
                 make: @escaping (_ n: Int, _ stamp: UInt64) -> LanpushUpdate) throws -> PublishResult {
        let begin = start ?? nowNanos()
        if let l = s.lanpush, stream {
            let publisher = try StreamPublisher(port: l.port, token: l.adminToken)
            defer { publisher.close() }
            return publisher.run(mode: mode, start: begin, duration: duration, window: window, limit: limit, firstIndex: firstIndex) { n, stamp, out in
                make(n, stamp).write(into: &out)
            }
        }
        if let l = s.lanpush {
            let load = try HTTPLoad(port: l.port, path: "/v1/push", token: l.adminToken, connections: connections)
            defer { load.close() }
            return load.run(mode: mode, start: begin, duration: duration, window: window, limit: limit, firstIndex: firstIndex) { n, stamp, out in
                make(n, stamp).write(into: &out)
            }
        }
        let m = s.mosquitto!
        let pub = try MQTTPublisher(port: m.mqttPort)
        defer { pub.close() }
        return pub.run(mode: mode, start: begin, duration: duration, window: window, limit: limit, firstIndex: firstIndex, qos: qos) { n, stamp, topic, payload in
            make(n, stamp).writeMQTT(topic: &topic, payload: &payload)
        }
    }

    func latencyMetrics(_ h: Histogram<UInt64>, prefix: String, label: String) -> [Metric] {
        guard h.totalCount > 0 else { return [] }
        return [
            Metric(key: "\(prefix).p50", label: "\(label) p50", unit: "ms", value: Double(h.valueAtPercentile(50)) / 1e6, better: .lower),
            Metric(key: "\(prefix).p99", label: "\(label) p99", unit: "ms", value: Double(h.valueAtPercentile(99)) / 1e6, better: .lower),
            Metric(key: "\(prefix).p999", label: "\(label) p99.9", unit: "ms", value: Double(h.valueAtPercentile(99.9)) / 1e6, better: .lower),
        ]
    }

    /// CPU time of `server` since `from`, as a share of the wall time since `since` (ns).
    private func cpuPercent(_ server: BenchServer, from: Double?, since: UInt64) -> Double {
        cpuPercent(server, from: from, seconds: Double(nowNanos() - since) / 1e9)
    }

    private func cpuPercent(_ server: BenchServer, from: Double?, seconds: Double) -> Double {
        guard let from, let to = server.cpuSeconds, seconds > 0 else { return 0 }
        return (to - from) / seconds * 100
    }

    // MARK: - Scenarios

    /// N sessions, fixed rate, each update to one device (round-robin), device d's tag = d mod T.
    private func latency(_ kind: ServerKind) throws -> [Metric] {
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

    /// `sessions` sessions, publisher as fast as possible. `allTargets`: every update goes to every session (lanpush
    /// `targets: "all"`, MQTT topic `all/tK` that every subscriber has); otherwise round-robin, one session each.
    private func fast(_ kind: ServerKind, sessions: Int, allTargets: Bool, key: String, stream: Bool = false) throws -> [Metric] {
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
        s.hub.sync { s.hub.window = window; s.hub.stats = ClientStats() }
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
        if let rss = s.server.rssKiB {
            m.append(Metric(key: "\(key).rss", label: "server RSS after the run", unit: "MiB", value: Double(rss) / 1024, better: .lower))
        }
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
    /// mosquitto gets the closest thing, QoS 1 (not retained, PUBACKed by every subscriber, none stored).
    private func notify(_ kind: ServerKind) throws -> [Metric] {
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
                            connections: 8, qos: 1) { i, stamp in
            LanpushUpdate(device: i % n, tag: 0, progress: 0, stamp: stamp, plain: true)
        }
        wait(s.hub, timeout: 5) { s.hub.stats.deliveries >= r.sent }
        let cpuSeconds = (s.server.cpuSeconds ?? 0) - (cpu0 ?? 0)
        let cpu = cpuPercent(s.server, from: cpu0, since: wall0)
        let st = s.hub.sync { s.hub.stats }
        var m = [
            Metric(key: "notify.cpuper", label: "server CPU per update", unit: "µs", value: cpuSeconds / Double(max(1, r.sent)) * 1e6,
                   better: .lower),
            Metric(key: "notify.cpu", label: "server CPU", unit: "% of a core", value: cpu, better: .lower),
            Metric(key: "notify.delivered", label: "updates delivered (of sent in window)", unit: "%",
                   value: r.sentInWindow > 0 ? Double(st.latency.totalCount) / Double(r.sentInWindow) * 100 : 0, better: .higher),
        ]
        m += latencyMetrics(st.latency, prefix: "notify.latency", label: "ingest→delivery").filter { !$0.key.hasSuffix("p999") }
        if let rss = s.server.rssKiB {
            m.append(Metric(key: "notify.rss", label: "server RSS after the run", unit: "MiB", value: Double(rss) / 1024, better: .lower))
        }
        return m
    }

    /// N sessions: idle RSS per session, then one update fanned out to all of them (`fanRepeats` times).
    private func fanout(_ kind: ServerKind) throws -> [Metric] {
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
            proto = "lanpush.v1"
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

    /// The seed scenarios, one update at a time (each delivered before the next is sent).
    private func bytes(_ kind: ServerKind) throws -> [Metric] {
        let s = try setUp(kind, devices: 1, sessions: 1)
        defer { tearDown(s) }
        s.hub.sync { s.hub.trackState = true; s.hub.recordFrames = true }
        var metrics: [Metric] = []
        var allDelta = 0.0
        var allFull = 0.0
        var allWire = 0.0
        var allCount = 0
        var allPatch = 0.0
        var allState = 0.0
        for seq in SeedSequences.all {
            s.hub.sync { s.hub.frameLog.removeAll() }
            for (i, data) in seq.updates.enumerated() {
                let before = s.hub.sync { s.hub.stats.frames }
                try sendOne(s, tag: seq.tag, title: seq.title, message: data.message, data: data.data)
                if !wait(s.hub, timeout: 10, { s.hub.stats.frames > before }) {
                    throw BenchError("\(kind.rawValue): \(seq.name) update \(i) was not delivered")
                }
            }
            let log = s.hub.sync { s.hub.frameLog }
            // The first frame is the start (the whole state by nature): the averages cover the updates after it.
            let updates = log.dropFirst()
            let wire = updates.reduce(0) { $0 + $1.wireBytes }
            let full = updates.reduce(0) { $0 + $1.fullStateWireBytes }
            let ratioAvg = updates.map { Double($0.wireBytes) / Double($0.fullStateWireBytes) }.reduce(0, +) / Double(max(1, updates.count))
            let all = log.reduce(0) { $0 + $1.wireBytes }
            metrics.append(Metric(key: "bytes.\(seq.name).wire", label: "\(seq.label): bytes per update on the wire (all \(log.count))",
                                  unit: "B", value: Double(all) / Double(max(1, log.count)), better: .lower))
            if kind.isLanpush {
                metrics.append(Metric(key: "bytes.\(seq.name).delta", label: "\(seq.label): delta bytes per update", unit: "B",
                                      value: Double(wire) / Double(max(1, updates.count)), better: .lower))
                metrics.append(Metric(key: "bytes.\(seq.name).full", label: "\(seq.label): same frames with the full state", unit: "B",
                                      value: Double(full) / Double(max(1, updates.count)), better: .lower))
                metrics.append(Metric(key: "bytes.\(seq.name).ratio", label: "\(seq.label): delta / full state, frames (mean per update)", unit: "%",
                                      value: ratioAvg * 100, better: .lower))
                let payloadAvg = updates.map { Double($0.patchBytes) / Double(max(1, $0.stateBytes)) }.reduce(0, +) / Double(max(1, updates.count))
                metrics.append(Metric(key: "bytes.\(seq.name).payload", label: "\(seq.label): patch / state JSON alone (mean per update)", unit: "%",
                                      value: payloadAvg * 100, better: .lower))
            }
            allDelta += Double(wire)
            allFull += Double(full)
            allPatch += Double(updates.reduce(0) { $0 + $1.patchBytes })
            allState += Double(updates.reduce(0) { $0 + $1.stateBytes })
            allWire += Double(all)
            allCount += log.count
        }
        metrics.append(Metric(key: "bytes.all.wire", label: "all three: bytes per update on the wire", unit: "B",
                              value: allWire / Double(max(1, allCount)), better: .lower))
        if kind.isLanpush {
            metrics.append(Metric(key: "bytes.all.ratio", label: "all three: delta / full state, frames (bytes)", unit: "%",
                                  value: allDelta / max(1, allFull) * 100, better: .lower))
            metrics.append(Metric(key: "bytes.all.payload", label: "all three: patch / state JSON alone (bytes)", unit: "%",
                                  value: allPatch / max(1, allState) * 100, better: .lower))
        }
        return metrics
    }

    /// One notify payload, through `/v1/push` (lanpush) or as a retained PUBLISH of the whole ContentState (MQTT).
    private func sendOne(_ s: Setup, tag: String, title: String, message: String, data: [String: JSONValue]) throws {
        var d = data
        d["tag"] = .string(tag)
        d["live_update"] = true
        if let l = s.lanpush {
            let body: JSONValue = ["targets": ["d0"], "title": .string(title), "message": .string(message), "data": .object(d)]
            var c = try HTTPConnection(port: l.port)
            defer { c.close() }
            var req: [UInt8] = []
            RequestBuilder(path: "/v1/push", token: l.adminToken).request(body: body.serializedBytes(), into: &req)
            let (status, text) = try c.request(req)
            guard status == 202 else { throw BenchError("push answered \(status): \(String(decoding: text, as: UTF8.self))") }
            return
        }
        // The ContentState as lanpush maps it (the same mapping, so both carry the same information), plus the title.
        let command = try PayloadInterpreter.interpret(NotifyMessage(title: title, message: message, data: d), now: 1_800_000_000)
        guard case .liveUpdate(let u) = command else { throw BenchError("not a live update") }
        var state = u.state
        state["title"] = .string(title)
        let payload = JSONValue.object(state).serializedBytes()
        let pub = try MQTTPublisher(port: s.mosquitto!.mqttPort)
        defer { pub.close() }
        var out: [UInt8] = []
        payload.withUnsafeBytes { MQTT.publish(topic: Array("b/d0/\(tag)".utf8), payload: $0, retain: true, into: &out) }
        try out.withUnsafeBytes { try Sys.writeAll(pub.fd, $0) }
    }

    /// One session that processes (applies + acks) one frame every 100 ms while updates flow on one tag.
    private func slow(_ kind: ServerKind) throws -> [Metric] {
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

    /// HTTP ingest with no session (every update queued for the device): as fast as possible over
    /// `fastConnections` keep-alive connections, then at 1,000/s; answer latency percentiles.
    private func ingest(_ kind: ServerKind) throws -> [Metric] {
        let s = try setUp(kind, devices: 1, sessions: 0)
        defer { tearDown(s) }
        let tags = 10
        let start = nowNanos() + 50_000_000
        let lead = scale.lead
        let window = (start + UInt64(lead * 1e9), start + UInt64((lead + scale.ingestSeconds) * 1e9))
        let cpu0 = s.server.cpuSeconds
        let wall0 = nowNanos()
        let r = try publish(s, mode: .max, start: start, duration: lead + scale.ingestSeconds, window: window,
                            connections: scale.fastConnections) { i, stamp in
            LanpushUpdate(device: 0, tag: i % tags, progress: i + 1, stamp: stamp)
        }
        let cpu = cpuPercent(s.server, from: cpu0, since: wall0)
        var m = [Metric(key: "ingest.rps", label: "requests/s, \(scale.fastConnections) connections", unit: "/s",
                        value: Double(r.answeredInWindow) / scale.ingestSeconds, better: .higher)]
        m += latencyMetrics(r.answerLatency, prefix: "ingest.max", label: "answer at max load")
        m.append(Metric(key: "ingest.cpu", label: "server CPU at max load", unit: "% of a core", value: cpu, better: .none))
        let bad = r.statusCounts.filter { $0.key != 202 }.values.reduce(0, +)
        if bad > 0 { env.log("\(kind.rawValue): non-202 answers: \(r.statusCounts)") }
        let start2 = nowNanos() + 50_000_000
        let r2 = try publish(s, mode: .rate(1000), start: start2, duration: scale.ingestSeconds, window: (start2, UInt64.max),
                             connections: 8, firstIndex: r.sent) { i, stamp in
            LanpushUpdate(device: 0, tag: i % tags, progress: i + 1, stamp: stamp)
        }
        m += latencyMetrics(r2.answerLatency, prefix: "ingest.rate", label: "answer at 1,000/s")
        if let wrk = env.wrk, let l = s.lanpush {
            // The first measurement's command (16 connections) and the saturating one.
            for c in Set([16, scale.fastConnections]).sorted() {
                m += try runWrk(wrk, server: l, connections: c, seconds: max(1, min(5, scale.ingestSeconds)))
            }
        }
        return m
    }

    /// The same ingest measured by wrk (C, keep-alive, Benchmarks/ingest.lua): requests/s and its latency percentiles.
    private func runWrk(_ wrk: (binary: String, script: String), server: LanpushServer, connections: Int, seconds: Double) throws -> [Metric] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: wrk.binary)
        p.arguments = ["-t1", "-c\(connections)", "-d\(Int(seconds.rounded(.up)))s", "--latency", "-s", wrk.script,
                       "http://127.0.0.1:\(server.port)"]
        var environment = ProcessInfo.processInfo.environment
        environment["LANPUSH_TOKEN"] = server.adminToken
        environment["LANPUSH_DEVICE"] = "d0"
        p.environment = environment
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        var m: [Metric] = []
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            if f.first == "Requests/sec:", f.count > 1, let v = Double(f[1]) {
                m.insert(Metric(key: "ingest.wrk\(connections).rps", label: "wrk -c\(connections): requests/s", unit: "/s", value: v, better: .higher), at: 0)
            } else if f.count == 2, f[0] == "50%" || f[0] == "99%", let ms = wrkMillis(f[1]) {
                m.append(Metric(key: "ingest.wrk\(connections).p\(f[0].dropLast())", label: "wrk -c\(connections): answer p\(f[0].dropLast())",
                                unit: "ms", value: ms, better: .lower))
            }
        }
        if m.isEmpty { env.log("wrk printed nothing usable:\n\(text)") }
        return m
    }
}

/// This process, for its CPU time.
final class ToolProcess: BenchServer {
    let kind = ServerKind.mosquitto
    var pid: Int32 { getpid() }
    var wsPort: Int { 0 }
    func stop() {}
    func logTail() -> String { "" }
}

final class LastSent: @unchecked Sendable {
    private let lock = Lock()
    private var n = 0
    private var stamp: UInt64 = 0
    func set(_ n: Int, _ s: UInt64) { lock.withLock { self.n = n; stamp = s } }
    func get() -> (Int, UInt64) { lock.withLock { (n, stamp) } }
}

/// wrk's "771.00us" / "4.09ms" / "1.20s" in milliseconds.
func wrkMillis(_ s: Substring) -> Double? {
    for (unit, factor) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where s.hasSuffix(unit) {
        return Double(s.dropLast(unit.count)).map { $0 * factor }
    }
    return nil
}

func median(_ xs: [Double]) -> Double {
    guard !xs.isEmpty else { return .nan }
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

// MARK: - The documented scenarios (HA's Live Activity docs, Aivi's templates): every update is a complete state

struct SeedSequence {
    struct Step {
        var message: String
        var data: [String: JSONValue]
    }
    var name: String
    var label: String
    var tag: String
    var title: String
    var updates: [Step]
}

enum SeedSequences {
    static var all: [SeedSequence] { [ev, washer, aivi] }

    /// HA's Live Activity docs: "EV charging", throttled to 5 % steps: 0 → 100.
    static var ev: SeedSequence {
        let steps = stride(from: 0, through: 100, by: 5).map { p -> SeedSequence.Step in
            let minutes = (100 - p) * 6 / 5
            return .init(message: p == 100 ? "Charging complete" : "Charging · Est. \(minutes) min remaining", data: [
                "critical_text": .string("\(p)%"), "progress": .number(Double(p)), "progress_max": 100,
                "notification_icon": "mdi:ev-station", "notification_icon_color": "#4CAF50",
            ])
        }
        return SeedSequence(name: "ev", label: "EV charging 0→100 % in 5 % steps", tag: "ev-charging", title: "EV Charging", updates: steps)
    }

    /// HA's Live Activity docs: "washing machine": its phases, progress in seconds of 3600, a countdown, then complete.
    static var washer: SeedSequence {
        let end = 1_800_003_600.0
        func phase(_ message: String, _ progress: Int, done: Bool = false) -> SeedSequence.Step {
            var d: [String: JSONValue] = [
                "progress": .number(Double(progress)), "progress_max": 3600, "notification_icon": "mdi:washing-machine",
                "notification_icon_color": done ? "#4CAF50" : "#2196F3", "color": done ? "#4CAF50" : "#2196F3",
            ]
            if !done {
                d["chronometer"] = true
                d["when"] = .number(end)
            }
            return .init(message: message, data: d)
        }
        return SeedSequence(name: "washer", label: "Washer cycle", tag: "washer_cycle", title: "Washing Machine", updates: [
            phase("Cycle started", 0), phase("Washing", 600), phase("Washing", 1200), phase("Rinsing · 1 of 2", 1800),
            phase("Rinsing · 2 of 2", 2400), phase("Spinning", 3000), phase("Cycle complete", 3600, done: true),
        ])
    }

    /// Aivi's segmented progress template (layered, hatched overflow zone), charging 10 → 100 %.
    static var aivi: SeedSequence {
        let steps = stride(from: 10, through: 100, by: 10).map { p -> SeedSequence.Step in
            let template: JSONValue = [
                "template": "progress", "icon": "bolt.car",
                "header_left": ["value": .string("\(p)%"), "text_color": "green"],
                "header_right": ["value": .string(p == 100 ? "Done" : "\((100 - p) / 3) min left")],
                "progress": [
                    "style": "segmented", "value": .number(Double(p) / 100), "display": "layered",
                    "segments": [
                        ["value": 0.8, "fill_color": "green", "track_color": "gray", "label": "Standard"],
                        ["value": 0.2, "fill_color": "green", "track_color": "gray", "track_fill": "hatched", "label": "Extended"],
                    ],
                ],
                "footer_left": ["value": "Supercharger", "text_color": "gray"],
                "footer_right": ["value": .string("Est. $\(String(format: "%.2f", Double(p) * 0.054))")],
                "compact_value": ["value": .string("\(p)%")],
            ]
            return .init(message: "Supercharging", data: ["template": template])
        }
        return SeedSequence(name: "aivi", label: "Aivi segmented progress", tag: "aivi-charge", title: "Model 3", updates: steps)
    }
}
