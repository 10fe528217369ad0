import Foundation
import LanpushCore
import LanpushLWS
import Logging

/// What the connection tells the link about its life.
protocol HomeAssistantConnectionDelegate: AnyObject {
    /// HA accepted the token; it may still be starting (requests that need its integrations must wait for ready).
    func connectionAuthenticated(_ connection: HomeAssistantConnection)
    /// HA reports `RUNNING`: registrations and subscriptions may go.
    func connectionReady(_ connection: HomeAssistantConnection)
    /// The websocket closed, failed or had its token refused: every request and subscription on it is gone.
    func connectionLost(_ connection: HomeAssistantConnection)
    /// The server is stopping: no reconnect will follow.
    func connectionStopped(_ connection: HomeAssistantConnection)
}

/// lanpush's one client WebSocket to HA's `/api/websocket`, on the gateway's own lws loop: connect, authenticate,
/// wait until HA is running, number requests and hand each `result` (and each subscription's `event`) back to
/// whoever asked. Loop thread only.
///
/// 1. connect → `auth_required` → `auth` (token) → `auth_ok` (its `ha_version` is kept);
/// 2. `get_config` until HA's `state` is `RUNNING` (HA's websocket answers early in its start-up, before mobile_app
///    has loaded its config entries: subscribing then would answer "Webhook ID not found");
/// 3. on close: reconnect with backoff (0.5 s doubling to 3 s, ±20 %). The cap is low on purpose: HA opens its port
///    only when it is nearly RUNNING (~0.1 s before, measured on 2025.4.4), so the cap is what a restart of HA costs
///    in re-subscription delay; a refused connect is cheap. A refused token waits 60 s.
final class HomeAssistantConnection: WSClientDelegate {
    enum State: String {
        case idle, connecting, authenticating, starting, ready, retrying, stopped
    }

    /// HA's answer to one request.
    struct Answer {
        var success: Bool
        var result: JSONValue?
        /// `error.code` and `error.message` of a failed request ("" when absent).
        var code: String
        var message: String
    }

    static let maxBackoff = 3.0

    weak var delegate: HomeAssistantConnectionDelegate?
    private let settings: HomeAssistantSettings
    private let inbox: LoopInbox
    private weak var server: LWSServer?
    private let metrics: GatewayMetrics
    private let logger: Logger

    private(set) var state: State = .idle
    private(set) var haVersion: String?
    /// Why the link is not up (connect failure, auth_invalid, no token); `nil` once authenticated.
    private(set) var lastError: String?
    /// Bumped on every new connection: work started on an older one (a confirm after a commit) is dropped.
    private(set) var generation = 0
    private var connection: WSClientConnection?
    private var outgoing: [[UInt8]] = []
    private var nextId = 1
    private var pending: [Int: (Answer) -> Void] = [:]
    private var eventHandlers: [Int: ([String: JSONValue]) -> Void] = [:]
    private var backoff = 0.0
    /// Failed attempts since the last successful auth: the first is a warning, then one about every minute.
    private var failures = 0
    private var retryTimer: LWSTimer?

    init(
        settings: HomeAssistantSettings, server: LWSServer, inbox: LoopInbox, metrics: GatewayMetrics, logger: Logger
    ) {
        self.settings = settings
        self.server = server
        self.inbox = inbox
        self.metrics = metrics
        self.logger = logger
    }

    var isOpen: Bool { connection != nil }

    /// Starts connecting; `why` (no token) stops the link for good instead.
    func start() {
        connect()
    }

    /// The link cannot work at all (no token): it stays stopped, `why` shown in the status.
    func refuse(_ why: String) {
        lastError = why
        stop()
    }

    // MARK: Requests

    /// Sends `type` with an id; `then` gets HA's `result` on the loop (never, if the connection is lost first).
    func request(_ type: String, _ fields: [String: JSONValue] = [:], then: @escaping (Answer) -> Void) {
        let id = nextId
        nextId += 1
        pending[id] = then
        write(type, fields, id: id)
    }

    /// A subscription (`mobile_app/push_notification_channel`): `then` gets the result; on success `events` gets
    /// each of its events until `unsubscribe(id)` or the connection's end. Returns the subscription's id.
    @discardableResult
    func subscribe(
        _ type: String, _ fields: [String: JSONValue], then: @escaping (Int, Answer) -> Void,
        events: @escaping ([String: JSONValue]) -> Void
    ) -> Int {
        let id = nextId
        request(type, fields) { [weak self] answer in
            if answer.success { self?.eventHandlers[id] = events }
            then(id, answer)
        }
        return id
    }

    func unsubscribe(_ id: Int) {
        guard eventHandlers.removeValue(forKey: id) != nil else { return }
        request("unsubscribe_events", ["subscription": .number(Double(id))]) { _ in }
    }

    /// Runs `work` after `seconds` if this connection is still the one, and ready: retries scheduled on a
    /// connection that has since gone are dropped (the new connection starts over).
    func later(_ seconds: Double, _ work: @escaping () -> Void) {
        let g = generation
        server?.schedule(after: seconds) { [weak self] in
            guard let self, self.generation == g, self.state == .ready else { return }
            work()
        }
    }

    private func write(_ type: String, _ fields: [String: JSONValue], id: Int?) {
        var o = fields
        o["type"] = .string(type)
        if let id { o["id"] = .number(Double(id)) }
        outgoing.append(JSONValue.object(o).serializedBytes())
        connection?.requestWritable()
    }

    // MARK: Connecting

    /// lws resolves host names with a blocking getaddrinfo on the loop thread: a slow resolver (a `.local` name
    /// without mDNS, a dead DNS server) would stall every LAN session on each attempt. So a `ws://` host name is
    /// resolved here, off the loop, and the connection goes to the address; `wss://` keeps the name (TLS verifies it).
    private func connect() {
        retryTimer = nil
        guard let server, !server.isStopping else { return stop() }
        metrics.haConnects.increment()
        state = .connecting
        guard let url = try? WebSocketURL(settings.websocketURL), !url.secure, !Self.isAddressLiteral(url.host) else {
            return open(settings.websocketURL)
        }
        let bound = inbox.bound(self)
        let inbox = self.inbox
        let host = url.host
        DispatchQueue.global().async {
            let addresses = Host(name: host).addresses
            // IPv4 first: HA listens on IPv4 by default.
            let address = addresses.first { !$0.contains(":") } ?? addresses.first
            inbox.post {
                let connection = bound.value
                guard connection.state == .connecting else { return }
                guard let address else {
                    connection.attemptFailed("cannot resolve \(host)")
                    return connection.scheduleReconnect()
                }
                let literal = address.contains(":") ? "[\(address)]" : address
                connection.open("ws://\(literal):\(url.port)\(url.path)")
            }
        }
    }

    static func isAddressLiteral(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber })
    }

    private func open(_ target: String) {
        guard let server, !server.isStopping else { return stop() }
        do {
            connection = try server.connectWebSocket(url: target, delegate: self)
            generation += 1
        } catch .notRunning {
            stop()
        } catch {
            lastError = "\(error)"
            logger.error("cannot connect to Home Assistant", metadata: ["error": "\(error)"])
            scheduleReconnect()
        }
    }

    private func stop() {
        let wasStopped = state == .stopped
        state = .stopped
        retryTimer?.cancel()
        retryTimer = nil
        if !wasStopped { delegate?.connectionStopped(self) }
    }

    private func scheduleReconnect(after fixed: Double? = nil) {
        guard let server, !server.isStopping else { return stop() }
        backoff = backoff == 0 ? 0.5 : min(backoff * 2, Self.maxBackoff)
        let delay = fixed ?? backoff * Double.random(in: 0.8...1.2)
        state = .retrying
        retryTimer?.cancel()
        retryTimer = server.schedule(after: delay) { [weak self] in self?.connect() }
    }

    private func attemptFailed(_ why: String) {
        lastError = why
        failures += 1
        let loud = failures == 1 || failures % 20 == 0
        logger.log(level: loud ? .warning : .debug, "cannot reach Home Assistant; retrying", metadata: [
            "url": "\(settings.websocketURL)", "error": "\(why)", "attempts": "\(failures)",
        ])
    }

    /// Forgets everything of the connection that went away, then tells the link.
    private func lost() {
        outgoing.removeAll()
        pending.removeAll()
        eventHandlers.removeAll()
        metrics.haConnected.record(0)
        delegate?.connectionLost(self)
    }

    // MARK: WSClientDelegate

    func wsClientOpened(_ connection: WSClientConnection) {
        guard connection === self.connection else { return connection.close() }
        state = .authenticating
        logger.debug("connected to Home Assistant's websocket API", metadata: ["url": "\(settings.websocketURL)"])
    }

    func wsClientConnectFailed(_ connection: WSClientConnection, error: WSClientError) {
        guard connection === self.connection else { return }
        self.connection = nil
        attemptFailed("connect failed: \(error)")
        lost()
        scheduleReconnect()
    }

    func wsClientClosed(_ connection: WSClientConnection, code: UInt16?, reason: String) {
        guard connection === self.connection else { return }
        self.connection = nil
        guard let server, !server.isStopping else {
            stop()
            return lost()
        }
        let wasUp = state == .ready || state == .starting
        logger.log(level: wasUp ? .warning : .info, "Home Assistant's websocket closed; reconnecting", metadata: [
            "code": "\(code.map(String.init) ?? "none")", "reason": "\(reason)",
        ])
        lost()
        scheduleReconnect()
    }

    func wsClientWritable(_ connection: WSClientConnection) {
        guard connection === self.connection else { return }
        while !outgoing.isEmpty && !connection.isChoked {
            guard connection.send(outgoing[0]) else { return }
            outgoing.removeFirst()
        }
        if !outgoing.isEmpty { connection.requestWritable() }
    }

    func wsClientText(_ connection: WSClientConnection, _ bytes: [UInt8]) {
        guard connection === self.connection else { return }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            logger.warning("Home Assistant sent invalid JSON", metadata: ["error": "\(error)"])
            return
        }
        // HA may coalesce several messages into one array frame (only if asked to; accept it anyway).
        for message in value.arrayValue ?? [value] {
            guard let object = message.objectValue else { continue }
            handle(object)
            if self.connection !== connection { break }
        }
    }

    private func handle(_ message: [String: JSONValue]) {
        switch message["type"]?.stringValue {
        case "auth_required":
            write("auth", ["access_token": .string(settings.token ?? "")], id: nil)
        case "auth_ok":
            haVersion = message["ha_version"]?.stringValue
            backoff = 0
            failures = 0
            lastError = nil
            state = .starting
            metrics.haConnected.record(1)
            logger.info("authenticated with Home Assistant", metadata: ["ha_version": "\(haVersion ?? "?")"])
            delegate?.connectionAuthenticated(self)
            untilRunning()
        case "auth_invalid":
            let why = message["message"]?.stringValue ?? "invalid token"
            lastError = "auth_invalid: \(why)"
            logger.error("Home Assistant refused the token; retrying in 60 s", metadata: ["message": "\(why)"])
            let c = connection
            connection = nil
            c?.close(code: 1000, reason: "auth invalid")
            lost()
            scheduleReconnect(after: 60)
        case "result":
            guard let id = message["id"]?.numberValue.map({ Int($0) }), let then = pending.removeValue(forKey: id) else { return }
            let error = message["error"]
            then(Answer(
                success: message["success"]?.boolValue == true, result: message["result"],
                code: error?["code"]?.stringValue ?? "", message: error?["message"]?.stringValue ?? ""))
        case "event":
            guard let id = message["id"]?.numberValue.map({ Int($0) }), let handler = eventHandlers[id],
                let event = message["event"]?.objectValue
            else { return }
            handler(event)
        default:
            return
        }
    }

    /// `get_config` once a second until HA is `RUNNING`.
    private func untilRunning() {
        request("get_config") { [weak self] answer in
            guard let self else { return }
            let haState = answer.result?["state"]?.stringValue ?? "?"
            guard answer.success, haState == "RUNNING" else {
                self.logger.debug("Home Assistant is not running yet", metadata: ["state": "\(haState)"])
                let g = self.generation
                self.server?.schedule(after: 1) { [weak self] in
                    guard let self, self.generation == g, self.state == .starting else { return }
                    self.untilRunning()
                }
                return
            }
            self.state = .ready
            self.delegate?.connectionReady(self)
        }
    }
}
