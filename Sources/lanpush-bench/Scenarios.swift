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
    /// HTTP keep-alive connections of the as-fast-as-possible publishers: 64, each waiting for its answer as HA does;
    /// with 16 lanpushd takes about the updates mosquitto's one publisher gives it (docs/BENCHMARKS.md, "How many
    /// publishers").
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
    /// Seconds per soak period (at most half the soak): a minute, or a few seconds at smoke scale so that a smoke
    /// run has the periods its growth figures compare.
    var soakPeriod = 60.0
    /// The subprotocol the lanpush sessions offer (what the client libraries offer first by default).
    var lanpushProtocol = ProtocolVersion.v2.rawValue
    /// `false` (the default): lanpush sessions send one cumulative ack for what one read brought and one at every half
    /// window, as the client libraries do (they ack once nothing else waits to be handled); `true`: an ack for every
    /// event frame, as no client library acks, which costs the client and the server a send and a read per frame.
    var ackEachFrame = false
    /// Seconds the servers sit idle after a throughput or notify run before their RSS is read once more (0: not
    /// read): what a burst leaves behind once it is over, against what it holds right after.
    var settleSeconds = 0.0
    /// lanpushd's `limits.resume_history_bytes`; `nil`: its default.
    var resumeHistoryBytes: Int?
    /// lanpushd's `session.window` for every scenario; `nil`: the scenario's own (32, lanpushd's default).
    var sessionWindow: Int?

    static let full = Scale()
    static let smoke = Scale(
        latencySessions: 20, latencyRate: 200, tags: 5, measure: 0.5, fastSeconds: 0.5, fastConnections: 4, manySessions: 5,
        fanSessions: 40, fanRepeats: 2, slowSeconds: 1, slowRate: 200, ingestSeconds: 0.5, lead: 0.2, convergeTimeout: 2,
        connectParallel: 64, soakSessions: 40, soakMinutes: 0.1, soakRate: 100, soakPeriod: 1.5)
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
        notify, notifyStream = "notify-stream", bytes, slow, ingest
    /// Not in the default set (it takes minutes): Benchmarks/soak.sh.
    case soak

    var title: String {
        switch self {
        case .latency: return "Latency: N device sessions, fixed rate, each update to one device, T tags"
        case .fast1: return "1 session, as fast as possible"
        case .fast1stream: return "1 session, as fast as possible, lanpush's publisher stream (MQTT: the same PUBLISH stream)"
        case .notify: return "100 sessions, 1,000 plain notifications/s, each to one device: CPU per update"
        case .notifyStream:
            return "100 sessions, 1,000 plain notifications/s, each to one device, lanpush's publisher stream (MQTT: the same QoS 1 PUBLISHes)"
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
        case .notifyStream: return try notify(kind, key: "notifystream", stream: true)
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
            server = try LanpushServer(
                binary: env.lanpushd, durable: kind == .lanpush, devices: devices, window: scale.sessionWindow ?? window,
                historyBytes: scale.resumeHistoryBytes)
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
        let ackEachFrame = scale.ackEachFrame
        let halfWindow = max(1, (scale.sessionWindow ?? window) / 2)
        hub.sync {
            hub.ackEvery = ackEachFrame
            hub.batchAckFrames = halfWindow
        }
        guard sessions > 0 else { return setup }
        let kinds: [SessionKind]
        let url: String
        let proto: String
        if let l = setup.lanpush {
            kinds = (0..<sessions).map { .lanpush(token: l.tokens[$0]) }
            url = "ws://127.0.0.1:\(l.port)/v1/stream"
            proto = scale.lanpushProtocol
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
    func cpuPercent(_ server: BenchServer, from: Double?, since: UInt64) -> Double {
        cpuPercent(server, from: from, seconds: Double(nowNanos() - since) / 1e9)
    }

    func cpuPercent(_ server: BenchServer, from: Double?, seconds: Double) -> Double {
        guard let from, let to = server.cpuSeconds, seconds > 0 else { return 0 }
        return (to - from) / seconds * 100
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

func median(_ xs: [Double]) -> Double {
    guard !xs.isEmpty else { return .nan }
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}
