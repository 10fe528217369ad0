import Foundation
import LanpushCore
import LanpushGateway
import LanpushLWS
import LanpushStore
import Logging

/// A whole gateway in the test's process, without sockets: the real parts (ledger, coalescer, sessions, ingest,
/// relay pacing, store), a manual clock, recording session transports, a recording relay, and an HTTP driver
/// (request in, status and JSON out). Every call runs "on the loop" and ends the turn the way the lws loop does:
/// what changed is committed, then every session that asked to write is flushed.
public final class TestGateway {
    public let config: GatewayConfig
    public let clock: ManualClock
    package private(set) var core: GatewayCore
    /// The state folder (with `store: true`): a restart opens the same database.
    public let stateDirectory: String?
    private var store: StateStore?
    private var sessions: [UInt64: RecordingTransport] = [:]
    private var nextSession: UInt64 = 0
    /// Every batch of ops the gateway handed to the store (`store: true`), in commit order.
    public private(set) var commits: [[StoreOp]] = []
    /// Every relay request, in the order it left.
    public private(set) var relayRequests: [RelayItem] = []
    /// The relay's answer to a request: status (nil: no answer) and body. Default: 201 with `rateLimits`.
    public var relayAnswer: (RelayItem) -> (Int?, JSONValue?) = { _ in (201, TestGateway.relayOK) }
    /// Requests answered only when the test says so (`answerRelay()`), when set.
    public var holdRelayAnswers = false
    private var heldAnswers: [(RelayItem, (Int?, JSONValue?) -> Void)] = []
    /// With the store on: commits are written at once but reported complete only when the test says so
    /// (`completeCommits()`), as a slow disk would (what waits for a commit — HTTP answers, accepts — waits).
    public var holdCommits = false
    private var heldCommits: [((Bool) -> Void, Bool)] = []
    /// With the store on: the next commits fail (the store refuses the write).
    public var failCommits = false
    /// Sessions that asked to write are written only once it is cleared (at the next `turn()`), as when lws calls
    /// them back on the loop's next poll, after the timers due by then (`advance` meanwhile ticks without writing).
    public var holdWrites = false

    public static let relayOK: JSONValue = [
        "messageId": "m", "target": "t",
        "rateLimits": ["attempts": 1, "successful": 1, "errors": 0, "total": 1, "maximum": 500, "remaining": 499,
                       "resetsAt": "2030-01-01T00:00:00.000Z"],
    ]

    /// `config` defaults to two devices, `phone` and `tablet` (`TestGateway.token(for:)` are their tokens), an admin
    /// and a viewer token, and a relay upstream no test reaches (the relay is recorded, never called).
    public init(config: GatewayConfig = TestGateway.defaultConfig(), store: Bool = false, clock: ManualClock = ManualClock()) throws {
        self.config = config
        self.clock = clock
        if store {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lanpush-test-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            stateDirectory = dir
        } else {
            stateDirectory = nil
        }
        core = Self.makeCore(config: config, clock: clock, stored: nil, persist: nil)
        try openCore()
    }

    deinit {
        if let stateDirectory { try? FileManager.default.removeItem(atPath: stateDirectory) }
    }

    static let quietLogger: Logger = {
        var logger = Logger(label: "lanpush-test") { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = .critical
        return logger
    }()

    /// The machine the test gateway runs on: loopback, one LAN address of each family, and its names.
    public static let hostAddresses = ["127.0.0.1", "::1", "192.168.1.5", "fe80::5"]
    public static let hostNames = ["gw-host", "gw-host.local"]
    public static let gatewayId = "test-gateway"

    private static func makeCore(
        config: GatewayConfig, clock: ManualClock, stored: StoredState?, persist: (([StoreOp], ((Bool) -> Void)?) -> Void)?
    ) -> GatewayCore {
        GatewayCore(
            config: config, clock: clock.reading, logger: quietLogger, stored: stored, persist: persist,
            localHost: .fixed(addresses: hostAddresses, names: hostNames), gatewayId: gatewayId)
    }

    public static let adminToken = "admin-token-0123456789abcdef"
    public static let viewerToken = "viewer-token-0123456789abcdef"

    public static func token(for device: String) -> String { "device-token-\(device)-0123456789" }

    public static func defaultConfig(devices: [String] = ["phone", "tablet"]) -> GatewayConfig {
        var c = GatewayConfig()
        c.adminToken = adminToken
        c.viewerToken = viewerToken
        c.mdns.enabled = false
        c.relay.upstream = "http://relay.invalid"
        // The tests' relay, as a test's fake relay on the LAN would be listed: plain http is refused otherwise.
        c.relay.allowedPushURLs = ["http://relay.invalid", "http://relay.test"]
        c.devices = devices.map { GatewayConfig.Device(id: $0, name: $0.capitalized, token: token(for: $0)) }
        return c
    }

    // MARK: Lifecycle

    /// (Re)creates the core over the store as it is on disk.
    private func openCore() throws {
        var stored: StoredState?
        var persist: (([StoreOp], ((Bool) -> Void)?) -> Void)?
        if let stateDirectory {
            let store = try StateStore(directory: stateDirectory)
            stored = try store.load()
            try store.write([.meta(key: "running", value: "1")])
            self.store = store
            // Synchronous: the test sees exactly what a commit wrote, in the order the gateway submitted it.
            persist = { [unowned self] ops, then in
                self.commits.append(ops)
                var ok = !self.failCommits
                if ok {
                    do { try store.write(ops) } catch { ok = false }
                }
                guard let then else { return }
                if self.holdCommits { self.heldCommits.append((then, ok)) } else { then(ok) }
            }
        }
        core = Self.makeCore(config: config, clock: clock, stored: stored, persist: persist)
        core.sendRelayRequests { [unowned self] item, answer in
            self.relayRequests.append(item)
            if self.holdRelayAnswers {
                self.heldAnswers.append((item, answer))
            } else {
                let (status, body) = self.relayAnswer(item)
                answer(status, body)
            }
        }
        sessions.removeAll()
        turn()
    }

    /// A restart on the same state folder: `clean` closes every session and marks the stop clean first (else the
    /// next start sees an unclean stop, as after kill -9, and every device gets a new epoch).
    public func restart(clean: Bool = true) throws {
        precondition(stateDirectory != nil, "restart needs store: true")
        if clean {
            for id in Array(sessions.keys) { close(sessionId: id) }
            core.endLastTurn()
            turn()
            try store?.write(core.cleanStopOps)
        }
        try openCore()
    }

    /// What the store holds now (`store: true`), as the next start would load it.
    public func storedState() throws -> StoredState {
        guard let store else { preconditionFailure("storedState needs store: true") }
        return try store.load()
    }

    /// Reports the held commits complete (`holdCommits`), oldest first, as the store writer's completions would.
    public func completeCommits() {
        let held = heldCommits
        heldCommits.removeAll()
        for (then, ok) in held { then(ok) }
        turn()
    }

    /// Commits written but not yet reported complete (`holdCommits`).
    public var pendingCommits: Int { heldCommits.count }

    /// Answers the held relay requests (with `relayAnswer`).
    public func answerRelay() {
        let held = heldAnswers
        heldAnswers.removeAll()
        for (item, answer) in held {
            let (status, body) = relayAnswer(item)
            answer(status, body)
        }
        turn()
    }

    // MARK: The loop

    /// Ends the turn: commit, then flush every session that asked to write (as lws does after each turn).
    public func turn() {
        core.endTurn()
        guard !holdWrites else { return }
        var again = true
        while again {
            again = false
            for (id, transport) in sessions.sorted(by: { $0.key < $1.key }) where transport.takeWriteRequest() {
                core.writable(session: id)
                again = true
            }
        }
    }

    /// Lets `seconds` pass, one tick at a time (timeouts, stale dates, dismissals, relay pacing). `tick` is the
    /// loop's 250 ms unless a test lets hours pass and needs no finer steps.
    public func advance(by seconds: Double, tick: Double = 0.25) {
        var left = seconds
        while left > 0 {
            let step = min(tick, left)
            clock.advance(by: step)
            left -= step
            core.tick()
            turn()
        }
    }

    // MARK: Sessions

    /// Opens a WebSocket session (not yet authenticated): the server's `auth_required` is its first frame.
    /// `subprotocol`: what the handshake chose.
    public func open(peer: String = "127.0.0.1", subprotocol: String = ProtocolVersion.v1.rawValue) -> TestSession {
        nextSession += 1
        let transport = RecordingTransport(peer: peer, subprotocol: subprotocol)
        sessions[nextSession] = transport
        core.openSession(id: nextSession, transport: transport)
        turn()
        return TestSession(gateway: self, id: nextSession, transport: transport)
    }

    /// A device session, authenticated and subscribed (resuming from `resume` when given).
    public func connect(
        _ device: String, resume: (epoch: String, seq: UInt64)? = nil, subprotocol: String = ProtocolVersion.v1.rawValue,
        peer: String = "127.0.0.1"
    ) -> TestSession {
        let s = open(peer: peer, subprotocol: subprotocol)
        s.send(["type": "auth", "token": .string(Self.token(for: device))])
        var subscribe: [String: JSONValue] = ["type": "subscribe"]
        if let resume {
            subscribe["epoch"] = .string(resume.epoch)
            subscribe["seq"] = .number(Double(resume.seq))
        }
        s.send(.object(subscribe))
        return s
    }

    /// The same client back after a disconnect: a new session of `previous`'s device that holds what `previous`
    /// applied (its activities and notifications) and resumes from its epoch and newest seq.
    public func reconnect(_ previous: TestSession) -> TestSession {
        previous.read()
        guard let device = previous.deviceId, let epoch = previous.epoch else {
            preconditionFailure("reconnect needs a device session that got auth_ok")
        }
        previous.close()
        let s = open()
        s.adopt(previous)
        s.send(["type": "auth", "token": .string(Self.token(for: device))])
        s.send(["type": "subscribe", "epoch": .string(epoch), "seq": .number(Double(previous.seq))])
        return s
    }

    /// An observer session (admin token), of one device or all.
    public func observe(_ device: String? = nil, token: String = TestGateway.adminToken) -> TestSession {
        let s = open()
        var auth: [String: JSONValue] = ["type": "auth", "token": .string(token), "role": "observer"]
        if let device { auth["device"] = .string(device) }
        s.send(.object(auth))
        s.send(["type": "subscribe"])
        return s
    }

    /// A publisher session (admin token unless `token` says otherwise), authenticated: its frames are `push` items.
    /// `subprotocol`: what the handshake chose (a publisher may ask for `lanpush.publisher`).
    public func publisher(token: String = TestGateway.adminToken, subprotocol: String = ProtocolVersion.v1.rawValue)
        -> TestSession
    {
        let s = open(subprotocol: subprotocol)
        s.send(["type": "auth", "token": .string(token), "role": "publisher"])
        return s
    }

    func receive(sessionId: UInt64, _ bytes: [UInt8]) {
        core.receive(session: sessionId, bytes: bytes)
        turn()
    }

    /// The client went away (or the gateway's close completed).
    func close(sessionId: UInt64) {
        guard sessions.removeValue(forKey: sessionId) != nil else { return }
        core.closeSession(id: sessionId)
        turn()
    }

    /// Sessions the gateway asked to close are closed (as lws does once the close frame is out).
    public func completeCloses() {
        for (id, transport) in sessions where transport.closed != nil { close(sessionId: id) }
    }

    // MARK: HTTP

    /// One HTTP request through the real router, answered once the turn is committed. `token`: bearer token.
    @discardableResult
    public func request(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, raw: [UInt8]? = nil, token: String? = TestGateway.adminToken,
        headers: [String: String] = [:], query: [(String, String)] = [], from peer: String = "127.0.0.1"
    ) -> TestResponse {
        var h = headers
        if let token { h["Authorization"] = "Bearer \(token)" }
        // As every HTTP/1.1 client sends it: the gateway serves only names that address it.
        if !h.keys.contains(where: { $0.lowercased() == "host" }) { h["Host"] = "127.0.0.1:\(core.port)" }
        var body = raw ?? []
        if let json {
            body = json.serializedBytes()
            if h["Content-Type"] == nil { h["Content-Type"] = "application/json" }
        }
        let request = HTTPRequest(
            method: method, path: path, queryItems: query.map { (name: $0.0, value: $0.1) }, headers: h, body: body,
            remoteAddress: peer)
        let answer = core.respond(to: request)
        var committed: Bool?
        core.whenCommitted { committed = $0 }
        turn()
        return TestResponse(
            status: committed == false ? 503 : answer.status, contentType: answer.contentType, headers: answer.headers,
            body: answer.body, committed: committed ?? false)
    }

    /// HA's relay body to `/api/sendPushNotification` (or the Android path) for `pushToken`.
    @discardableResult
    public func relayBody(
        _ pushToken: String, title: String? = nil, message: String? = nil, data: JSONValue = [:], extra: [String: JSONValue] = [:],
        path: String = "/api/sendPushNotification", from peer: String = "127.0.0.1"
    ) -> TestResponse {
        var body: [String: JSONValue] = [
            "push_token": .string(pushToken), "data": data,
            "registration_info": ["app_id": "io.robbie.HomeAssistant", "app_version": "2025.1", "os_version": "18.2", "webhook_id": "hook-1"],
        ]
        if let title { body["title"] = .string(title) }
        if let message { body["message"] = .string(message) }
        for (k, v) in extra { body[k] = v }
        return request(.post, path, json: .object(body), token: nil, from: peer)
    }

    /// `POST /v1/push` with the admin token.
    @discardableResult
    public func push(_ body: JSONValue) -> TestResponse {
        request(.post, "/v1/push", json: body)
    }
}

/// An HTTP answer of the test gateway.
public struct TestResponse {
    public let status: Int
    public let contentType: String
    public let headers: [(String, String)]
    public let body: [UInt8]
    /// The turn's commit completed (`false`: the answer would have waited).
    public let committed: Bool

    public var json: JSONValue { (try? JSONValue.parse(body)) ?? .null }
    public var text: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
