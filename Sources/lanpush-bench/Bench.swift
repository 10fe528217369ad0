import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
import LanpushCore
#endif

@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lanpush-bench",
        abstract: "lanpush against Mosquitto over WebSockets, measured side by side (docs/BENCHMARKS.md).",
        discussion: """
            Starts and stops the servers itself: lanpushd (release build, store on = "lanpush", store off = \
            "lanpush-mem") and Debian's mosquitto. Clients are native (LanpushLWS WebSocket client), publishers \
            native (HTTP/1.1 keep-alive for lanpush, plain MQTT for mosquitto); every socket has TCP_NODELAY.
            Scenarios: \(ScenarioID.allCases.map(\.rawValue).joined(separator: ", ")).
            """)

    @Option(help: "Comma-separated scenarios (default: all).")
    var scenarios: String = ScenarioID.allCases.filter { $0 != .soak }.map(\.rawValue).joined(separator: ",")

    @Option(help: "Comma-separated servers: lanpush, lanpush-mem, mosquitto.")
    var servers: String = ServerKind.allCases.map(\.rawValue).joined(separator: ",")

    @Option(help: "Runs per scenario and server; the tables show medians.")
    var runs: Int = 3

    @Flag(help: "Tiny counts: a seconds-long check that everything runs (not a measurement).")
    var smoke = false

    @Option(help: "lanpushd binary (default: next to this executable).")
    var lanpushd: String?

    @Option(help: "mosquitto binary (default: from PATH or /usr/sbin).")
    var mosquitto: String?

    @Option(help: "wrk script for the ingest cross-check (default: Benchmarks/ingest.lua if wrk is installed; 'none' to skip).")
    var wrkScript: String?

    @Option(help: "Write the tables as Markdown to this file.")
    var markdown: String?

    @Option(help: "Write every run's figures as JSON to this file.")
    var json: String?

    @Option(help: "Override: sessions of the latency scenario.")
    var latencySessions: Int?

    @Option(help: "Override: seconds measured in the latency scenario.")
    var seconds: Double?

    @Option(help: "Override: updates per second of the latency scenario.")
    var latencyRate: Double?

    @Option(help: "Override: sessions of the fan-out / idle-memory scenario.")
    var fanSessions: Int?

    @Option(help: "Override: HTTP connections of the as-fast-as-possible scenarios.")
    var connections: Int?

    @Option(help: "Override: tags the updates go round (100; the smoke run 5). Fewer tags, fewer (device, tag) activities.")
    var tags: Int?

    @Option(help: "Soak: minutes measured.")
    var soakMinutes: Double?

    @Option(help: "Soak: sessions.")
    var soakSessions: Int?

    @Option(help: "Soak: updates per second.")
    var soakRate: Double?

    @Option(help: "Soak: share of the sessions that reconnect every second (0.01 = 1 %).")
    var soakChurn: Double?

    @Option(help: "Subprotocol of the lanpush sessions: lanpush.v2 (default) or lanpush.v1.")
    var lanpushProtocol: String?

    @Option(help: "How lanpush sessions ack: 'batch' (default): one cumulative ack per read and at every half window, as the client libraries do; or 'every' event frame.")
    var acks: String = "batch"

    @Option(help: "Also read the server's RSS this many seconds after the throughput and notify runs, idle (0: not).")
    var settle: Double = 0

    @Option(help: "lanpushd's limits.resume_history_bytes (default: its own default), to tell what the resume histories hold from the rest.")
    var resumeHistoryBytes: Int?

    @Option(help: "lanpushd's session.window (default: 32, its own default): unacknowledged frames per session before changes of a tag merge.")
    var sessionWindow: Int?

    @Flag(help: "Soak: add one more session (device d0) that never reads what it is sent, and reconnects when closed.")
    var stuck = false

    @Flag(name: .shortAndLong, help: "Progress on stderr.")
    var verbose = false

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let limit = Sys.raiseFileLimit()
        let ids = try scenarios.split(separator: ",").map { name -> ScenarioID in
            guard let id = ScenarioID(rawValue: String(name)) else { throw ValidationError("unknown scenario '\(name)'") }
            return id
        }
        var scale = smoke ? Scale.smoke : Scale.full
        if let latencySessions { scale.latencySessions = latencySessions }
        if let seconds { scale.measure = seconds }
        if let latencyRate { scale.latencyRate = latencyRate }
        if let fanSessions { scale.fanSessions = fanSessions }
        if let connections { scale.fastConnections = connections }
        if let tags { scale.tags = max(1, tags) }
        if let soakMinutes { scale.soakMinutes = soakMinutes }
        if let soakSessions { scale.soakSessions = soakSessions }
        if let soakRate { scale.soakRate = soakRate }
        if let soakChurn { scale.soakChurn = soakChurn }
        scale.soakStuck = stuck
        guard settle >= 0 else { throw ValidationError("--settle: seconds, 0 or more") }
        scale.settleSeconds = settle
        if let resumeHistoryBytes {
            guard (65536...1_073_741_824).contains(resumeHistoryBytes) else {
                throw ValidationError("--resume-history-bytes: 65536 to 1073741824, as lanpushd takes it")
            }
            scale.resumeHistoryBytes = resumeHistoryBytes
        }
        if let sessionWindow {
            guard (1...4096).contains(sessionWindow) else { throw ValidationError("--session-window: 1 to 4096, as lanpushd takes it") }
            scale.sessionWindow = sessionWindow
        }
        guard ["every", "batch"].contains(acks) else { throw ValidationError("--acks: every or batch") }
        scale.ackEachFrame = acks == "every"
        if let lanpushProtocol {
            guard ProtocolVersion(rawValue: lanpushProtocol) != nil else {
                throw ValidationError("--lanpush-protocol: one of \(ProtocolVersion.allCases.map { $0.rawValue })")
            }
            scale.lanpushProtocol = lanpushProtocol
        }
        let need = max(scale.fanSessions, scale.latencySessions, ids.contains(.soak) ? scale.soakSessions * 11 / 10 : 0) + 256
        if limit < need {
            FileHandle.standardError.write(Data("lanpush-bench: RLIMIT_NOFILE is \(limit); \(need) needed: fewer fan-out sessions\n".utf8))
            scale.fanSessions = max(10, limit - 256)
        }
        guard let daemon = locate("lanpushd", explicit: lanpushd) else {
            throw ValidationError("lanpushd not found: build it (swift build -c release) or pass --lanpushd")
        }
        let kinds = try servers.split(separator: ",").map { name -> ServerKind in
            guard let k = ServerKind(rawValue: String(name)) else { throw ValidationError("unknown server '\(name)'") }
            return k
        }
        let mosq = locate("mosquitto", explicit: mosquitto)
        if kinds.contains(.mosquitto) && mosq == nil {
            throw ValidationError("mosquitto not found: ./scripts/setup --test installs it, or pass --mosquitto")
        }
        var wrk: (binary: String, script: String)?
        if wrkScript != "none", let binary = locate("wrk", explicit: nil) {
            let script = wrkScript ?? FileManager.default.currentDirectoryPath + "/Benchmarks/ingest.lua"
            if FileManager.default.fileExists(atPath: script) { wrk = (binary, script) }
        }
        let env = Environment(lanpushd: daemon, mosquitto: mosq, wrk: wrk, scale: scale, verbose: verbose)
        let runner = ScenarioRunner(env: env)
        let machine = Sys.machine()
        let header = """
            lanpush-bench — \(ISO8601DateFormatter().string(from: Date()))
            machine: \(machine.cpus) CPUs, \(machine.model), Linux \(machine.kernel)
            lanpushd: \(daemon)
            mosquitto: \(mosq ?? "-")
            wrk: \(wrk.map { "\($0.binary) -s \($0.script)" } ?? "-")
            runs: \(runs)\(smoke ? " (smoke scale: not a measurement)" : "")

            """
        print(header)
        fflush(nil)
        var report = Report(header: header, kinds: kinds)
        for id in ids {
            let servers = id.servers.filter { kinds.contains($0) }
            var results: [ServerKind: [[Metric]]] = [:]
            for r in 1...max(1, runs) {
                for kind in servers {
                    env.log("\(id.rawValue) run \(r) on \(kind.rawValue)")
                    do {
                        let m = try runner.run(id, on: kind)
                        results[kind, default: []].append(m)
                    } catch {
                        print("  ! \(id.rawValue) on \(kind.rawValue), run \(r): \(error)")
                        fflush(nil)
                    }
                }
            }
            let table = report.add(id, results)
            print(table)
            fflush(nil)
        }
        if let markdown { try report.markdown().write(toFile: markdown, atomically: true, encoding: .utf8) }
        if let json { try report.json().write(toFile: json, atomically: true, encoding: .utf8) }
    }
}
