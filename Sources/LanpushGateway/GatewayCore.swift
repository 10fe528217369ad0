import Foundation
import LanpushCore
import LanpushLWS
import LanpushStore
import Logging

/// The gateway's loop-owned state, in its parts, wired once: who may connect (`directory`, `access`), the one way
/// in (`ingest`, `activityCommands`), the sessions and their protocol, the relay hand-over, the journal of what must
/// be stored, and what time does (`housekeeping`). Every part is touched on the loop thread only.
///
/// The HTTP layer (`router`) turns the parts' domain outcomes into status codes and JSON; nothing below it speaks
/// HTTP. Its `package` surface is what the lws loop drives — and what the testing module (`LanpushTesting`) drives
/// with a manual clock, recording session transports and a recording relay.
package final class GatewayCore {
    let config: GatewayConfig
    let clock: () -> Double
    let logger: Logger
    let metrics: GatewayMetrics
    /// The loop's most frequent counts, handed to `metrics` at the end of each turn.
    let counters: TurnCounters
    /// The epoch given to devices whose sequence could not be trusted at start (new, or an unclean stop).
    let epoch: String
    let directory: DeviceDirectory
    /// What HA-native mode follows of each device (state changes, client reports); nothing listens without it.
    let events: DeviceEvents
    let journal: Journal
    let sessions: SessionRegistry
    let relay: RelayHandOver
    let report: DeviceReport
    let ingest: Ingest
    let activityCommands: ActivityCommands
    let sessionProtocol: SessionProtocol
    /// Frames for every session, each distinct frame encoded once (a fan-out splices the seq).
    let frames = FrameEncoder()
    /// The patch a change fanned out to many sessions takes each client by, computed once.
    let patches = PatchMemo()
    let housekeeping: Housekeeping
    let ingestEndpoints: IngestEndpoints
    let throttle: AuthThrottle
    let pairings: Pairings
    let router: Router
    /// This machine's addresses and names (pairing URLs, allowed `Host` names, push_urls that would loop).
    let localHost: LocalHost
    /// This gateway's stable id (the state folder's `gateway_id`): its mDNS `id`, and the mark on the relay requests
    /// it sends.
    let gatewayId: String
    /// The port clients reach the gateway on (the bound one: the config may say 0). Set once the server listens.
    package var port: Int
    /// The SHA-256 of the TLS certificate's DER, when TLS is on (pairing URLs carry it, clients pin it).
    package var tlsFingerprint: String?
    /// The thread of the loop that owns this state (the server's): every entry point checks it in debug builds, so a
    /// call from another thread (a completion that skipped the inbox) traps in a test instead of corrupting state.
    package var loopThread: LoopThread?

    /// `persist` hands ops to the store (the completion runs on the loop thread); `nil`: in memory only. `page`: the
    /// preview's files by path.
    package init(
        config: GatewayConfig, clock: @escaping () -> Double, logger: Logger, stored: StoredState? = nil,
        persist: (([StoreOp], ((Bool) -> Void)?) -> Void)? = nil, renderMetrics: @escaping () -> String = { "" },
        page: @escaping (String) -> PageAsset? = PreviewAssets.asset(for:), localHost: LocalHost = LocalHost(),
        gatewayId: String = "lanpush"
    ) {
        let metrics = GatewayMetrics()
        self.localHost = localHost
        self.gatewayId = gatewayId
        weak var weakSelf: GatewayCore?
        let local = { localHost.current(now: clock()) }
        self.config = config
        self.port = config.listenPort
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        let epoch = UUID().uuidString.lowercased()
        self.epoch = epoch
        let directory = DeviceDirectory(config: config, stored: stored, epoch: epoch)
        self.directory = directory
        let events = DeviceEvents()
        self.events = events
        let journal = Journal(persist: persist)
        self.journal = journal
        let counters = TurnCounters()
        self.counters = counters
        let sessions = SessionRegistry(metrics: metrics, counters: counters, events: events, logger: logger)
        self.sessions = sessions
        let relay = RelayHandOver(
            config: config.relay, directory: directory, journal: journal, events: events, metrics: metrics, logger: logger,
            clock: clock)
        self.relay = relay
        let report = DeviceReport(sessions: sessions, relay: relay, events: events, clock: clock)
        self.report = report
        let publish = PublishStep(
            directory: directory, journal: journal, sessions: sessions, relay: relay, metrics: metrics, logger: logger)
        let ingest = Ingest(directory: directory, relay: relay, publish: publish, metrics: metrics, logger: logger)
        self.ingest = ingest
        activityCommands = ActivityCommands(directory: directory, publish: publish, clock: clock)
        let throttle = AuthThrottle(
            limit: config.limits.authFailures, window: config.limits.authWindow, metrics: metrics, logger: logger)
        self.throttle = throttle
        let pairings = Pairings(attempts: config.limits.pairingAttempts)
        self.pairings = pairings
        // The configured upstream is the admin's choice too: a push_url on it is where unknown tokens would go anyway.
        let pushURLs = PushURLPolicy(
            allowed: config.relay.allowedPushURLs + [config.relay.upstream], localAddresses: { local().addresses },
            localNames: { local().names },
            port: { weakSelf?.port ?? config.listenPort })
        let publishers = PublisherIngest(
            ingest: ingest, journal: journal, sessions: sessions, metrics: metrics, logger: logger, clock: clock,
            allDevices: { directory.sorted.map(\.id) })
        sessionProtocol = SessionProtocol(
            config: config, directory: directory, sessions: sessions, journal: journal, relay: relay, report: report,
            publishers: publishers, throttle: throttle, events: events, pushURLs: pushURLs, publish: publish, metrics: metrics,
            logger: logger, clock: clock)
        housekeeping = Housekeeping(
            config: config.session, directory: directory, sessions: sessions, journal: journal, relay: relay,
            publish: publish, ingest: ingest, metrics: metrics, clock: clock)
        ingestEndpoints = IngestEndpoints(
            ingest: ingest, relay: relay, directory: directory, metrics: metrics, clock: clock,
            allDevices: { directory.sorted.map(\.id) })
        let commands = DeviceCommands(
            directory: directory, sessions: sessions, journal: journal, relay: relay, report: report, events: events,
            metrics: metrics, logger: logger, clock: clock, window: config.session.window)
        let devices = DeviceEndpoints(
            commands: commands, pairings: pairings, throttle: throttle, metrics: metrics, logger: logger, clock: clock,
            addresses: { host in
                guard let me = weakSelf else { return [] }
                return PairingAddresses.list(listenHost: config.listenHost, port: me.port, requestHost: host, local: local())
            },
            fingerprint: { weakSelf?.tlsFingerprint })
        router = Router(
            ingest: ingestEndpoints,
            state: StateEndpoints(activities: activityCommands, directory: directory, report: report, sessions: sessions, epoch: epoch),
            devices: devices, access: AccessControl(config: config), throttle: throttle, clock: clock,
            openMetrics: config.openMetrics, metrics: metrics, logger: logger,
            renderMetrics: {
                counters.flush(into: metrics)
                return renderMetrics()
            }, page: page, hosts: HostAllowList(configured: config.http.allowedHosts, localNames: { local().names }),
            gatewayId: gatewayId)
        weakSelf = self
        for id in directory.shadowed {
            logger.warning("device '\(id)' is defined in the config file and was also added at run time: the config file's definition is used")
        }
        for device in directory.sorted { journal.record(device: device) }
        relay.restore(stored?.outbox ?? [])
    }

    // MARK: What the loop drives

    @inline(__always)
    package func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        if let loopThread { precondition(loopThread.isCurrent, "gateway state touched off the loop thread", file: file, line: line) }
        #endif
    }

    package func openSession(id: UInt64, transport: SessionTransport) {
        assertOnLoop()
        sessionProtocol.opened(id: id, transport: transport)
    }

    /// Why a WebSocket handshake is refused (a `Host` that names no address of this gateway, an `Origin` of a page on
    /// another site), or `nil`.
    package func upgradeRefusal(_ request: HTTPRequest) -> HTTPRejection? {
        assertOnLoop()
        guard let refused = router.hosts.webSocketRefusal(host: request.header("host"), origin: request.header("origin")) else {
            return nil
        }
        metrics.reject(refused.field)
        logger.info("WebSocket handshake refused", metadata: [
            "peer": "\(request.remoteAddress)", "field": "\(refused.field)", "origin": "\(request.header("origin") ?? "")",
        ])
        return HostAllowList.rejection(refused)
    }

    package func receive(session id: UInt64, bytes: [UInt8]) {
        assertOnLoop()
        sessionProtocol.received(id: id, bytes: bytes)
    }

    package func closeSession(id: UInt64) {
        assertOnLoop()
        sessionProtocol.closed(id: id)
    }

    /// A session's socket can take data.
    package func writable(session id: UInt64) {
        assertOnLoop()
        guard let session = sessions[id], !session.closing else { return }
        SessionWriter(directory: directory, sessions: sessions, counters: counters, frames: frames, patches: patches)
            .writable(session, now: clock())
    }

    /// The answer to one HTTP request (it may only be sent once `whenCommitted` says the turn is stored).
    package func respond(to request: HTTPRequest) -> (status: Int, contentType: String, headers: [(String, String)], body: [UInt8]) {
        assertOnLoop()
        let answer = router.route(request)
        return (answer.status, answer.contentType, answer.headers.map { ($0.name, $0.value) }, answer.body)
    }

    /// What time does (the loop's 250 ms tick).
    package func tick() {
        assertOnLoop()
        housekeeping.tick()
    }

    /// `then` runs on the loop once what this turn recorded is committed (`true`) or failed to (`false`).
    package func whenCommitted(_ then: @escaping (Bool) -> Void) {
        assertOnLoop()
        journal.whenCommitted(then)
    }

    /// The end of a loop turn: what it changed goes to the store.
    package func endTurn() {
        assertOnLoop()
        journal.endTurn()
        counters.flush(into: metrics)
    }

    /// The turn before a clean stop (the loop has returned): what the store was still holding back goes too.
    package func endLastTurn() {
        journal.flushPrunesAtTurnEnd()
        journal.endTurn()
        counters.flush(into: metrics)
    }

    /// The last commit of a clean stop, after `endLastTurn`'s: every device's row with its seq, and the mark that
    /// says the stop was clean, in one transaction — the next start keeps each device's epoch only with its seq.
    package var cleanStopOps: [StoreOp] {
        directory.sorted.map { .device($0.row) } + [.meta(key: "running", value: "0")]
    }

    /// Where relay requests go: `send` gets each item and answers with the relay's status (nil: no answer) and JSON
    /// body, on the loop thread.
    package func sendRelayRequests(_ send: @escaping (RelayItem, @escaping (Int?, JSONValue?) -> Void) -> Void) {
        relay.transport = ClosureRelayTransport(send)
    }

    /// Requests the relay path holds that have not been answered (queued or in flight), oldest first.
    package var relayPending: [RelayItem] { relay.pacer.pendingItems }

    /// `GET /v1/devices`'s entry for a device.
    package func deviceStatus(_ id: String) -> JSONValue? {
        directory[id].map(report.json)
    }
}

/// A relay transport from a closure (the testing module's recording relay).
private final class ClosureRelayTransport: RelayTransport {
    let send: (RelayItem, @escaping (Int?, JSONValue?) -> Void) -> Void

    init(_ send: @escaping (RelayItem, @escaping (Int?, JSONValue?) -> Void) -> Void) {
        self.send = send
    }

    func send(_ item: RelayItem, completion: @escaping (RelayResponse) -> Void) {
        send(item) { status, body in
            completion(RelayResponse(status: status, body: body, error: status == nil ? .network("no answer") : nil, duration: 0))
        }
    }
}
