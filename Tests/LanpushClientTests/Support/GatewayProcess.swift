import Foundation
import LanpushClient
import LanpushCore
import Testing

/// One real lanpushd on loopback with its own config and state folder, as the integration tests start it
/// (`lanpushd --config FILE --state-dir DIR`, mDNS off, one token per device). `$LANPUSHD`, else this checkout's debug
/// build (`swift build --build-tests` builds the product).
final class GatewayProcess: @unchecked Sendable {
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["LANPUSHD"] { return URL(fileURLWithPath: path) }
        return repoRoot.appendingPathComponent(".build/debug/lanpushd")
    }

    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    let dir: URL
    let admin = GatewayProcess.randomToken()
    let viewer = GatewayProcess.randomToken()
    let tokens: [String: String]
    let port: Int
    let session: [String: Int]
    /// More config lines (e.g. `tls: {enabled: true}`).
    let extra: [String]
    private var process: Process?

    init(devices: [String] = ["phone", "tablet"], session: [String: Int] = [:], extra: [String] = []) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("lanpush-swift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        tokens = Dictionary(uniqueKeysWithValues: devices.map { ($0, GatewayProcess.randomToken()) })
        port = try FreePort.take()
        self.session = session
        self.extra = extra
    }

    deinit {
        if let process, process.isRunning { process.terminate() }
    }

    var streamURL: URL { URL(string: "ws://127.0.0.1:\(port)/v1/stream")! }

    static func randomToken() -> String {
        String((0..<32).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
    }

    func start() async throws {
        var lines = [
            "listen: \"127.0.0.1:\(port)\"", "admin_token: \(admin)", "viewer_token: \(viewer)", "log_level: debug",
            "mdns: {enabled: false}", "devices:",
        ]
        lines += tokens.keys.sorted().map { "  - {id: \($0), name: \($0), token: \(tokens[$0]!)}" }
        if !session.isEmpty {
            lines.append("session: {" + session.keys.sorted().map { "\($0): \(session[$0]!)" }.joined(separator: ", ") + "}")
        }
        lines += extra
        let config = dir.appendingPathComponent("lanpush.yaml")
        try (lines.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
        let log = dir.appendingPathComponent("lanpushd.log")
        if !FileManager.default.fileExists(atPath: log.path) { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        let p = Process()
        p.executableURL = Self.executable
        p.arguments = ["--config", config.path, "--state-dir", dir.appendingPathComponent("state").path]
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        process = p
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if !p.isRunning { throw GatewayError("lanpushd exited: \(logTail())") }
            if let (status, _) = try? await request("GET", "/healthz"), status == 200 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw GatewayError("lanpushd did not start: \(logTail())")
    }

    /// SIGTERM (a clean stop: sessions get 1001, the epoch survives) or SIGKILL (a new epoch on restart).
    func stop(kill: Bool = false) async {
        guard let p = process, p.isRunning else { return }
        if kill { Foundation.kill(p.processIdentifier, SIGKILL) } else { p.terminate() }
        let deadline = ContinuousClock.now + .seconds(5)
        while p.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if p.isRunning { Foundation.kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
    }

    func dispose() async {
        await stop()
        try? FileManager.default.removeItem(at: dir)
    }

    func logTail() -> String {
        let text = (try? String(contentsOf: dir.appendingPathComponent("lanpushd.log"), encoding: .utf8)) ?? ""
        return String(text.suffix(3000))
    }

    func request(_ method: String, _ path: String, _ body: JSONValue? = nil, token: String? = nil) async throws -> (Int, JSONValue?) {
        let url = URL(string: "http://127.0.0.1:\(port)\(path)")!
        let (status, bytes) = try await PlatformTransport().request(method, to: url, bearer: token ?? admin, body: body)
        return (status, bytes.isEmpty ? nil : try? JSONValue.parse(bytes))
    }

    /// Notify service data to one device, as HA's `rest_command` posts it.
    func push(_ device: String, _ payload: JSONValue) async throws {
        var body = payload.objectValue ?? [:]
        body["targets"] = [.string(device)]
        let (status, answer) = try await request("POST", "/v1/push", .object(body))
        guard status == 202 else { throw GatewayError("push failed: \(status) \(answer?.serialized() ?? "")") }
    }

    /// `GET /v1/activities?device=`, as the client holds them: the gateway's own picture.
    func activities(_ device: String) async throws -> JSONValue {
        let (_, body) = try await request("GET", "/v1/activities?device=\(device)")
        var out: [String: JSONValue] = [:]
        for a in body?["activities"]?.arrayValue ?? [] {
            guard let o = a.objectValue, let tag = o["tag"]?.stringValue else { continue }
            var view: [String: JSONValue] = [:]
            for key in ["tag", "attributes", "state", "phase", "stale_date", "relevance_score", "dismissal_date"] {
                view[key] = o[key]
            }
            out[tag] = .object(view)
        }
        return .object(out)
    }
}

struct GatewayError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A port nothing listens on now (bind to 0, read it, close).
enum FreePort {
    static func take() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw GatewayError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
