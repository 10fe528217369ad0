import Foundation
import LanpushAvahi
import LanpushCore
import LanpushLWS
import LanpushStore
import Logging

/// lanpushd's engine: one libwebsockets context and its service thread, which owns the hub.
///
/// `run()` services the loop on the calling thread; `stop()` may be called from any thread (a signal
/// handler's queue) and makes `run()` return after closing sessions with 1001.
public final class Gateway: @unchecked Sendable {
    public struct Options: Sendable {
        public var config: GatewayConfig
        public var stateDirectory: StateDirectory
        public var fdLimit: Int

        public init(config: GatewayConfig, stateDirectory: StateDirectory, fdLimit: Int = 0) {
            self.config = config
            self.stateDirectory = stateDirectory
            self.fdLimit = fdLimit
        }
    }

    let options: Options
    let logger: Logger
    let hub: Hub
    private var server: LWSServer!
    private var loop: LoopDelegate!
    private var publisher: ServicePublisher?
    /// HA-native mode (issue 10): the link to Home Assistant; `nil` when the mode is off. See the marked block in init.
    private var homeAssistant: HomeAssistantLink?
    let inbox = LoopInbox()
    private var relayTransport: LoopRelayTransport?
    /// Called once the listener is up (systemd READY=1) and on each watchdog interval from the loop.
    public var onReady: (@Sendable (Int) -> Void)?
    public var onLoopAlive: (@Sendable () -> Void)?

    private let store: StateStore?
    private let writer: GroupCommitWriter?

    public init(options: Options, logger: Logger, renderMetrics: @escaping @Sendable () -> String) throws {
        self.options = options
        self.logger = logger
        var stored: StoredState?
        if options.config.store.enabled {
            let store = try StateStore(directory: options.stateDirectory.path, synchronous: options.config.store.synchronous)
            let state = try store.load()
            if state.wasUnclean {
                logger.warning("the previous run did not stop cleanly: every device starts a new epoch (clients get a snapshot)")
            }
            // Marked before serving, cleared on a clean stop: its presence at the next start means a crash.
            try store.write([.meta(key: "running", value: "1")])
            let writer = GroupCommitWriter(store: store) { error in
                logger.error("store write failed", metadata: ["error": "\(error)"])
            }
            self.store = store
            self.writer = writer
            stored = state
        } else {
            store = nil
            writer = nil
        }
        let inbox = self.inbox
        let persist: (([StoreOp], ((Bool) -> Void)?) -> Void)? = writer.map { writer in
            { ops, then in
                guard let then else {
                    writer.submit(ops)
                    return
                }
                let callback = LoopBound(then)
                writer.submit(ops) { error in inbox.post { callback.value(error == nil) } }
            }
        }
        self.hub = Hub(
            config: options.config, clock: { Date().timeIntervalSince1970 }, logger: logger, metrics: GatewayMetrics(),
            stored: stored, persist: persist)
        let router = Router(hub: hub, renderMetrics: renderMetrics, page: PreviewAssets.page(for:))
        let loop = LoopDelegate(hub: hub, router: router, inbox: inbox)
        self.loop = loop
        let c = options.config
        let lwsOptions = LWSServerOptions(
            host: c.listenHost, port: c.listenPort, pingInterval: Int(c.session.pingInterval.rounded(.up)),
            pingTimeout: Int(c.session.pingTimeout.rounded(.up)), maxBodyBytes: c.limits.maxBody,
            fdLimitPerThread: options.fdLimit)
        do {
            server = try LWSServer(options: lwsOptions, delegate: loop)
        } catch {
            throw ConfigError(key: "listen", message: "cannot listen on \(c.listenHost):\(c.listenPort): \(error)")
        }
        loop.server = server
        inbox.attach(server)
        let relay = LoopRelayTransport(client: RelayClient(timeout: options.config.relay.timeout), inbox: inbox)
        hub.relayTransport = relay
        relayTransport = relay

        // MARK: HA-native mode (issue 10) — Sources/LanpushGateway/HomeAssistant/. Creates the link (nil when the
        // `home_assistant` section leaves the mode off); it starts on the loop's first turn (a timer) and stops with
        // the server (requestStop closes its websocket with 1001; it does not reconnect once the server stops).
        homeAssistant = HomeAssistantLink.start(
            config: options.config, hub: hub, server: server, inbox: inbox, logger: logger,
            stored: stored?.haRegistrations ?? [:], environment: ProcessInfo.processInfo.environment)
        // END HA-native mode
    }

    /// The port actually bound (the configured one, or the ephemeral one for port 0).
    public var port: Int { server.port }

    /// Services the loop on the calling thread until `stop()`.
    public func run() {
        let hub = self.hub
        let server = self.server!
        func tick() {
            hub.tick()
            hub.commit()
            onLoopAlive?()
            server.schedule(after: 0.25) { tick() }
        }
        writer?.start()
        hub.commit()
        server.schedule(after: 0.25) { tick() }
        startDiscovery()
        logger.info("lanpushd listening", metadata: ["address": "\(options.config.listenHost):\(port)", "devices": "\(hub.devices.count)", "epoch": "\(hub.epoch)", "event_loop": "\(server.eventLoop.rawValue)"])
        onReady?(port)
        server.run()
        publisher?.stop()
        relayTransport?.shutdown()
        if let writer, let store {
            hub.commit()
            writer.submit([.meta(key: "running", value: "0")])
            writer.stop()
            store.checkpoint()
        }
        logger.info("lanpushd stopped")
    }

    /// Thread-safe: close every session with 1001 and make `run()` return.
    public func stop() {
        server.requestStop()
    }

    private func startDiscovery() {
        let c = options.config
        guard c.mdns.enabled else {
            logger.info("mDNS advertising is off")
            return
        }
        let gatewayId = (try? options.stateDirectory.value(named: "gateway_id") { UUID().uuidString.lowercased() }.0) ?? "unknown"
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "lanpush"
        let logger = self.logger
        let publisher = ServicePublisher(
            name: c.mdns.name ?? "lanpush on \(host)", port: UInt16(port),
            txt: [
                ("txtvers", "1"), ("id", gatewayId), ("proto", Hub.protocolVersion), ("path", "/v1/stream"),
                ("version", LanpushVersion.current), ("tls", "0"),
            ],
            log: { level, message in
                switch level {
                case .warning: logger.warning("\(message)")
                case .error: logger.error("\(message)")
                default: logger.info("\(message)")
                }
            })
        publisher.start()
        self.publisher = publisher
    }
}

/// Bridges lws callbacks to the hub and router. Loop thread only.
final class LoopDelegate: LWSServerDelegate {
    let hub: Hub
    let router: Router
    let inbox: LoopInbox
    weak var server: LWSServer?
    private var transports: [UInt64: WSTransport] = [:]

    init(hub: Hub, router: Router, inbox: LoopInbox) {
        self.hub = hub
        self.router = router
        self.inbox = inbox
    }

    func loopWoken() {
        inbox.drain()
        hub.commit()
    }

    func handleHTTP(_ request: HTTPRequest, _ response: HTTPResponse) {
        router.handle(request, response)
    }

    func rejectHTTP(_ rejection: HTTPRejection) -> [UInt8] {
        hub.metrics.reject(rejection.status == 413 ? "body_too_large" : rejection.status == 411 ? "length_required" : "method")
        hub.logger.info("rejected request", metadata: ["status": "\(rejection.status)", "reason": "\(rejection.rule)"])
        return rejection.defaultJSON
    }

    func wsOpened(_ connection: WSConnection, _ request: HTTPRequest) {
        let transport = WSTransport(connection)
        transports[connection.id] = transport
        hub.sessionOpened(id: connection.id, transport: transport)
    }

    func wsText(_ connection: WSConnection, _ bytes: [UInt8]) {
        hub.sessionText(id: connection.id, bytes: bytes)
        hub.commit()
    }

    func wsWritable(_ connection: WSConnection) {
        hub.sessionWritable(id: connection.id)
    }

    func wsClosed(_ connection: WSConnection) {
        transports.removeValue(forKey: connection.id)
        hub.sessionClosed(id: connection.id)
        hub.commit()
    }
}

/// `SessionTransport` over an lws connection.
final class WSTransport: SessionTransport {
    weak var connection: WSConnection?
    let peer: String

    init(_ connection: WSConnection) {
        self.connection = connection
        self.peer = connection.peerAddress
    }

    func requestWritable() { connection?.requestWritable() }
    func send(_ bytes: [UInt8]) -> Bool { connection?.send(bytes) ?? false }
    var isChoked: Bool { connection?.isChoked ?? true }
    func close(code: UInt16, reason: String) { connection?.close(code: code, reason: reason) }
}

/// Carries a loop-thread closure through another thread and back; only ever called on the loop.
final class LoopBound<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
