import Foundation
import LanpushAvahi
import LanpushCore
import LanpushLWS
import LanpushStore
import Logging

/// lanpushd's engine: one libwebsockets context and its service thread, which owns the gateway's state (`GatewayCore`).
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
    let core: GatewayCore
    private var server: LWSServer!
    private var loop: LoopDelegate!
    private var publisher: ServicePublisher?
    /// HA-native mode: the link to Home Assistant; `nil` when the mode is off.
    private var homeAssistant: HomeAssistantLink?
    let inbox = LoopInbox()
    private var relayTransport: LoopRelayTransport?
    /// Called once the listener is up (systemd READY=1) and on each watchdog interval from the loop.
    public var onReady: (@Sendable (Int) -> Void)?
    public var onLoopAlive: (@Sendable () -> Void)?

    /// The certificate served with `wss://` / `https://` when `tls.enabled`.
    private var tls: TLSIdentity?
    private let store: StateStore?
    private let commits: CommitPath?

    public init(options: Options, logger: Logger, renderMetrics: @escaping @Sendable () -> String) throws {
        self.options = options
        self.logger = logger
        var stored: StoredState?
        if options.config.store.enabled {
            let synchronous = options.config.store.synchronous
            let store = try StateStore(
                directory: options.stateDirectory.path, synchronous: synchronous,
                checkpointsInCommits: !CommitPath.commitsOnLoop(synchronous: synchronous),
                cacheBytes: options.config.store.cacheBytes)
            let state = try store.load()
            if state.wasUnclean {
                logger.warning("the previous run did not stop cleanly: every device starts a new epoch (clients get a snapshot)")
            }
            // Marked before serving, cleared on a clean stop: its presence at the next start means a crash.
            try store.write([.meta(key: "running", value: "1")])
            self.store = store
            commits = try CommitPath(store: store, logger: logger)
            stored = state
        } else {
            store = nil
            commits = nil
        }
        let persist = commits?.persist(inbox: inbox)
        let gatewayId = (try? options.stateDirectory.value(named: "gateway_id") { UUID().uuidString.lowercased() }.0) ?? "unknown"
        core = GatewayCore(
            config: options.config, clock: { Date().timeIntervalSince1970 }, logger: logger, stored: stored, persist: persist,
            renderMetrics: renderMetrics, page: PreviewAssets.asset(for:), gatewayId: gatewayId)
        commits?.metrics = core.metrics
        let loop = LoopDelegate(core: core, inbox: inbox)
        self.loop = loop
        let c = options.config
        var lwsOptions = LWSServerOptions(
            host: c.listenHost, port: c.listenPort, pingInterval: Int(c.session.pingInterval.rounded(.up)),
            pingTimeout: Int(c.session.pingTimeout.rounded(.up)), maxBodyBytes: c.limits.maxBody,
            fdLimitPerThread: options.fdLimit)
        // A header table is allocated per connection still sending headers and freed after: sized for the session
        // limit, and always well above the per-address cap, so idle connections from one address cannot take them all.
        lwsOptions.httpHeaderPool = max(c.limits.maxSessions, 1024)
        // v1 first: a handshake without a subprotocol speaks it.
        lwsOptions.webSocketProtocols = ProtocolVersion.allCases.map(\.rawValue) + [PublisherStream.subprotocol]
        lwsOptions.receiveBuffers = [PublisherStream.subprotocol: PublisherStream.receiveBuffer]
        lwsOptions.headerTimeout = c.limits.headerTimeout
        lwsOptions.pendingPerAddress = c.limits.pendingPerAddress
        lwsOptions.connectionsPerAddress = c.limits.connectionsPerAddress
        lwsOptions.extraHeaderNames = [RelayClient.hopHeader]
        // The only outgoing WebSocket is HA-native mode's: OpenSSL is initialised for it only when it is wss://.
        lwsOptions.tlsClients = HomeAssistantSettings.resolve(
            c, port: c.listenPort, environment: ProcessInfo.processInfo.environment)?.websocketURL.hasPrefix("wss://") ?? false
        let hostName = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "lanpush"
        tls = try TLSIdentity.load(c.tls, stateDirectory: options.stateDirectory.path, hostName: hostName)
        if let tls {
            lwsOptions.tls = LWSTLSOptions(
                certificatePath: tls.certificatePath, privateKeyPath: tls.keyPath, plainFromAnywhere: c.tls.plain)
            core.tlsFingerprint = tls.fingerprint
        }
        do {
            server = try LWSServer(options: lwsOptions, delegate: loop)
        } catch {
            throw ConfigError(key: "listen", message: "cannot listen on \(c.listenHost):\(c.listenPort): \(error)")
        }
        inbox.attach(server)
        core.port = server.port
        core.loopThread = server.loopThread
        let relayClient = RelayClient(
            timeout: c.relay.timeout, gatewayId: gatewayId, reachable: [c.relay.upstream] + c.relay.allowedPushURLs)
        let relay = LoopRelayTransport(client: relayClient, inbox: inbox)
        core.relay.transport = relay
        relayTransport = relay

        // HA-native mode (HomeAssistant/): `nil` when the `home_assistant` section leaves it off. It starts on the
        // loop's first turn (a timer) and stops with the server (its websocket is closed with 1001; no reconnect once
        // the server stops).
        homeAssistant = HomeAssistantLink.start(
            config: options.config, core: core, server: server, inbox: inbox, logger: logger, stored: stored?.haRegistrations ?? [:], environment: ProcessInfo.processInfo.environment)
    }

    /// The port actually bound (the configured one, or the ephemeral one for port 0).
    public var port: Int { server.port }

    /// Services the loop on the calling thread until `stop()`.
    public func run() {
        let loop = self.loop!
        let server = self.server!
        func tick() {
            loop.tick()
            onLoopAlive?()
            server.schedule(after: Housekeeping.interval) { tick() }
        }
        commits?.start()
        loop.loopTurnEnded()
        server.schedule(after: Housekeeping.interval) { tick() }
        startDiscovery()
        var listening: Logger.Metadata = [
            "address": "\(options.config.listenHost):\(port)", "devices": "\(core.directory.count)", "epoch": "\(core.epoch)",
            "event_loop": "\(server.eventLoop.rawValue)",
        ]
        if let tls { listening["tls_fingerprint"] = "\(tls.fingerprint)"; listening["plain"] = "\(options.config.tls.plain ? "yes" : "loopback only")" }
        logger.info("lanpushd listening", metadata: listening)
        onReady?(port)
        server.run()
        publisher?.stop()
        relayTransport?.shutdown()
        if let commits, let store {
            core.endLastTurn()
            commits.finish(with: core.cleanStopOps)
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
        let gatewayId = core.gatewayId
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "lanpush"
        let logger = self.logger
        // `proto` names the version every client speaks; a newer one is chosen in the handshake itself.
        let publisher = ServicePublisher(
            name: c.mdns.name ?? "lanpush on \(host)", port: UInt16(port),
            txt: [
                ("txtvers", "1"), ("id", gatewayId), ("proto", ProtocolVersion.v1.rawValue), ("path", "/v1/stream"),
                ("version", LanpushVersion.current), ("tls", tls == nil ? "0" : "1"),
            ] + (tls.map { [("fp", $0.fingerprint)] } ?? []),
            log: { level, message in
                switch level {
                case .warning: logger.warning("\(message)")
                case .error: logger.error("\(message)")
                case .debug: logger.debug("\(message)")
                case .info: logger.info("\(message)")
                }
            })
        publisher.start()
        self.publisher = publisher
    }
}
