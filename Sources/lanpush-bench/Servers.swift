import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which server a run measures.
enum ServerKind: String, CaseIterable, Sendable {
    /// lanpushd with its SQLite store on (synchronous normal): the headline figure.
    case lanpush
    /// lanpushd with `store: {enabled: false}`.
    case lanpushMemory = "lanpush-mem"
    /// Debian's mosquitto, subscribers over MQTT-over-WebSocket, publisher over plain MQTT.
    case mosquitto

    var isLanpush: Bool { self != .mosquitto }
}

/// A server process the tool starts and stops itself, with a temporary config and state folder.
protocol BenchServer: AnyObject {
    var kind: ServerKind { get }
    var pid: Int32 { get }
    /// Port of the WebSocket listener (lanpush's one port; mosquitto's websockets listener).
    var wsPort: Int { get }
    func stop()
    func logTail() -> String
}

extension BenchServer {
    var rssKiB: Int? { Sys.rssKiB(pid: pid) }
    var cpuSeconds: Double? { Sys.cpuSeconds(pid: pid) }
}

private func spawn(_ path: String, _ args: [String], log: URL) throws -> Process {
    Sys.dropFromPageCache(path)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    let h = try FileHandle(forWritingTo: log)
    defer { try? h.close() }  // the child has its copy; the tool must not collect one fd per server start
    p.standardOutput = h
    p.standardError = h
    p.standardInput = FileHandle.nullDevice
    try p.run()
    return p
}

/// `LANPUSH_BENCH_STOP_TIMEOUT` (seconds) for servers that stop slowly (e.g. under valgrind, to write its profile).
private let stopTimeout = ProcessInfo.processInfo.environment["LANPUSH_BENCH_STOP_TIMEOUT"].flatMap(Double.init) ?? 10

private func terminate(_ p: Process, timeout: Double = stopTimeout) {
    guard p.isRunning else { return }
    kill(p.processIdentifier, SIGTERM)
    let deadline = Date(timeIntervalSinceNow: timeout)
    while p.isRunning && Date() < deadline { usleep(10_000) }
    if p.isRunning {
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }
}

private func tail(_ url: URL) -> String {
    guard let d = try? Data(contentsOf: url) else { return "" }
    return String(decoding: d.suffix(3000), as: UTF8.self)
}

/// lanpushd, release build, started with a generated config: `devices` devices `d0`… with random tokens,
/// mDNS off, the store on (durable) or off (in memory).
final class LanpushServer: BenchServer {
    let kind: ServerKind
    let dir: URL
    let port: Int
    let adminToken = Sys.token()
    let tokens: [String]
    private let process: Process
    private let log: URL

    var pid: Int32 { process.processIdentifier }
    var wsPort: Int { port }

    init(
        binary: String, durable: Bool, devices: Int, window: Int = 32, synchronous: String = "normal",
        historyBytes: Int? = nil
    ) throws {
        kind = durable ? .lanpush : .lanpushMemory
        dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("lanpush-bench-\(Sys.token(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        port = try Sys.freePort()
        tokens = (0..<devices).map { _ in Sys.token() }
        var yaml = """
            listen: "127.0.0.1:\(port)"
            admin_token: "\(adminToken)"
            log_level: info
            mdns: {enabled: false}
            session: {window: \(window), ack_timeout: 60, ping_interval: 30, ping_timeout: 30}
            limits: {max_sessions: 20000, max_body: 65536\(historyBytes.map { ", resume_history_bytes: \($0)" } ?? "")}
            store: {enabled: \(durable), synchronous: \(synchronous)}
            devices:

            """
        yaml.reserveCapacity(yaml.utf8.count + devices * 64)
        for (i, t) in tokens.enumerated() { yaml += "  - {id: d\(i), name: d\(i), token: \(t)}\n" }
        let config = dir.appendingPathComponent("lanpush.yaml")
        try yaml.write(to: config, atomically: true, encoding: .utf8)
        log = dir.appendingPathComponent("lanpushd.log")
        process = try spawn(binary, ["--config", config.path, "--state-dir", dir.appendingPathComponent("state").path, "--no-mdns"], log: log)
        // Ready when /healthz answers.
        let deadline = Date(timeIntervalSinceNow: 30)
        while true {
            if !process.isRunning { throw BenchError("lanpushd exited at start:\n\(tail(log))") }
            if let status = try? HTTPClient.get(port: port, path: "/healthz"), status == 200 { break }
            if Date() > deadline { throw BenchError("lanpushd did not become ready:\n\(tail(log))") }
            usleep(20_000)
        }
    }

    func stop() {
        terminate(process)
        try? FileManager.default.removeItem(at: dir)
    }

    func logTail() -> String { tail(log) }
}

/// Debian's mosquitto with a websockets listener (the subscribers) and a plain MQTT listener (the publisher),
/// both on loopback, TCP_NODELAY, no persistence.
final class MosquittoServer: BenchServer {
    let kind = ServerKind.mosquitto
    let dir: URL
    let wsPort: Int
    let mqttPort: Int
    private let process: Process
    private let log: URL

    var pid: Int32 { process.processIdentifier }

    init(binary: String) throws {
        dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("mosquitto-bench-\(Sys.token(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        log = dir.appendingPathComponent("mosquitto.log")
        // mosquitto hands the listener's address to libwebsockets 4.1 as an interface name; lws finds no such
        // interface and binds the websockets listener to every address ([::], dual stack). A port free on 127.0.0.1
        // when picked can meanwhile be taken there by any client's ephemeral port, and mosquitto then exits with
        // "Unable to create websockets listener": pick fresh ports and start again.
        var attempt = 1
        while true {
            let ports = try Self.twoFreePorts()
            do {
                process = try Self.start(binary, dir: dir, log: log, mqttPort: ports.mqtt, wsPort: ports.ws)
                (mqttPort, wsPort) = (ports.mqtt, ports.ws)
                break
            } catch let error as StartFailure where error.exited && attempt < 3 {
                attempt += 1
            } catch let error as StartFailure {
                throw BenchError(error.message)
            }
        }
    }

    private struct StartFailure: Error {
        let exited: Bool
        let message: String
    }

    private static func twoFreePorts() throws -> (mqtt: Int, ws: Int) {
        let ws = try Sys.freePort()
        var mqtt = try Sys.freePort()
        while mqtt == ws { mqtt = try Sys.freePort() }
        return (mqtt, ws)
    }

    private static func start(_ binary: String, dir: URL, log: URL, mqttPort: Int, wsPort: Int) throws -> Process {
        let conf = """
            user root
            per_listener_settings false
            allow_anonymous true
            persistence false
            set_tcp_nodelay true
            max_connections -1
            log_dest stderr
            log_type error
            log_type warning
            listener \(mqttPort) 127.0.0.1
            protocol mqtt
            listener \(wsPort) 127.0.0.1
            protocol websockets

            """
        let config = dir.appendingPathComponent("mosquitto.conf")
        try conf.write(to: config, atomically: true, encoding: .utf8)
        let process = try spawn(binary, ["-c", config.path], log: log)
        let deadline = Date(timeIntervalSinceNow: 15)
        while true {
            if !process.isRunning {
                throw StartFailure(exited: true, message: "mosquitto exited at start:\n\(tail(log))")
            }
            if let fd = try? Sys.connectLoopback(port: mqttPort) {
                close(fd)
                if let fd2 = try? Sys.connectLoopback(port: wsPort) {
                    close(fd2)
                    return process
                }
            }
            if Date() > deadline {
                terminate(process)
                throw StartFailure(exited: false, message: "mosquitto did not start listening:\n\(tail(log))")
            }
            usleep(20_000)
        }
    }

    func stop() {
        terminate(process)
        try? FileManager.default.removeItem(at: dir)
    }

    func logTail() -> String { tail(log) }
}

/// Finds a program: an explicit path, else next to this executable, else on $PATH / sbin.
func locate(_ name: String, explicit: String?) -> String? {
    if let explicit { return FileManager.default.isExecutableFile(atPath: explicit) ? explicit : nil }
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    let sibling = me.appendingPathComponent(name).path
    if FileManager.default.isExecutableFile(atPath: sibling) { return sibling }
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin:/usr/local/sbin"
    for d in path.split(separator: ":") {
        let p = "\(d)/\(name)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}
