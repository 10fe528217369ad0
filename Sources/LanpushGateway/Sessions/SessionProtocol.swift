import LanpushCore
import Logging

/// The LAN client protocol (lanpush.v1 and v2) from the client's side (docs/PROTOCOL.md): a session opens,
/// authenticates as a device or an observer, registers relay credentials, subscribes (or resumes), acks, reports
/// tokens and dismissals, and closes. Loop thread only.
final class SessionProtocol {
    /// A session that has not authenticated by then is closed with 4001.
    static let authTimeout: Double = 10

    let config: GatewayConfig
    let access: AccessControl
    let throttle: AuthThrottle
    let directory: DeviceDirectory
    let sessions: SessionRegistry
    let journal: Journal
    let relay: RelayHandOver
    let report: DeviceReport
    let publishers: PublisherIngest
    let events: DeviceEvents
    let metrics: GatewayMetrics
    let logger: Logger
    let clock: () -> Double
    /// Where a client may point its `push_url`.
    let pushURLs: PushURLPolicy

    init(
        config: GatewayConfig, directory: DeviceDirectory, sessions: SessionRegistry, journal: Journal,
        relay: RelayHandOver, report: DeviceReport, publishers: PublisherIngest, throttle: AuthThrottle, events: DeviceEvents,
        pushURLs: PushURLPolicy, metrics: GatewayMetrics, logger: Logger,
        clock: @escaping () -> Double
    ) {
        self.config = config
        self.pushURLs = pushURLs
        self.access = AccessControl(config: config)
        self.throttle = throttle
        self.directory = directory
        self.sessions = sessions
        self.journal = journal
        self.relay = relay
        self.report = report
        self.publishers = publishers
        self.events = events
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }

    // MARK: Open and close

    func opened(id: UInt64, transport: SessionTransport) {
        let session = StreamSession(id: id, transport: transport, now: clock())
        sessions.add(session)
        // Sockets that never authenticate are bounded per address — and over all as lws's header pool is — apart
        // from the sessions that did: a host opening upgrades cannot keep a device out.
        if sessions.pendingByPeer[transport.peer, default: 0] > config.limits.unauthenticatedPerAddress
            || sessions.pendingCount > max(config.limits.maxSessions, 1024)
        {
            metrics.reject("unauthenticated_sessions")
            let why = "too many unauthenticated sessions from this address"
            session.queueControl(ClientFrame.Refusal(why, rule: "unauthenticated_per_address").frame)
            return sessions.close(session, code: .tryAgainLater, reason: why)
        }
        session.queueControl(["type": "auth_required", "version": .string(session.version.rawValue)])
    }

    func closed(id: UInt64) {
        guard let session = sessions.remove(id) else { return }
        if let deviceId = session.deviceId, let device = directory[deviceId] {
            let wasReceiving = device.isConnected
            device.sessions.removeAll { $0 == id }
            device.receiving.removeAll { $0 == id }
            device.lastSeen = clock()
            journal.record(device: device)
            if wasReceiving && !device.isConnected {
                metrics.devicesConnected.record(directory.connectedCount)
                relay.deviceGone(device)
            }
            report.announce(device)
        }
        logger.info("session closed", metadata: session.metadata())
    }

    // MARK: Client frames

    func received(id: UInt64, bytes: [UInt8]) {
        guard let session = sessions[id], !session.closing, session.pendingClose == nil else { return }
        session.lastActivity = clock()
        // A publisher's frames are items of its stream, decoded there (once).
        if session.publisher != nil { return publishers.received(session, bytes) }
        // The frame a device sends most (one per frame it was sent), read without a general parse.
        if case .device = session.role, let seq = AckFrame.seq(bytes) { return acknowledge(session, seq: seq) }
        let frame: ClientFrame
        switch ClientFrame.decode(bytes) {
        case .success(let decoded): frame = decoded
        case .failure(let refusal):
            guard case .pending = session.role else { return session.queueControl(refusal.frame) }
            // Before auth, a frame that is not a valid auth ends the session as a failed auth would.
            let why = refusal.field == "version" ? refusal.message : "authenticate first"
            session.queueControl(["type": "auth_invalid", "message": .string(why)])
            return sessions.close(session, code: .authInvalid, reason: refusal.field == "version" ? "auth invalid" : "auth required")
        }
        if case .pending = session.role {
            guard case .auth(let auth) = frame else {
                session.queueControl(["type": "auth_invalid", "message": "authenticate first"])
                return sessions.close(session, code: .authInvalid, reason: "auth required")
            }
            return authenticate(session, auth)
        }
        switch frame {
        case .ack(let seq):
            guard session.deviceId != nil else { return protocolError(session, ClientFrame.Refusal("observers do not ack")) }
            acknowledge(session, seq: seq)
        case .subscribe(let resume): subscribe(session, resume: resume)
        case .register(let register): self.register(session, register)
        case .unregister: unregister(session)
        case .liveActivityToken(let tag, let token, let expiresAt): liveActivityToken(session, tag: tag, token: token, expiresAt: expiresAt)
        case .pushToStartToken(let token): pushToStartToken(session, token)
        case .dismissed(let tag): dismissed(session, tag: tag)
        case .ping: session.queueControl(["type": "pong"])
        case .auth: protocolError(session, ClientFrame.Refusal("already authenticated"))
        }
    }

    func protocolError(_ session: StreamSession, _ refusal: ClientFrame.Refusal) {
        session.queueControl(refusal.frame)
    }

    private func authenticate(_ session: StreamSession, _ auth: ClientFrame.Auth) {
        let peer = session.transport.peer
        // A socket that cannot offer subprotocols (the Scripting app's) chooses here. A version this gateway does
        // not know is treated like an unknown subprotocol: the session keeps the one it has, and auth_ok says which
        // (a newer client falls back, as it would with an older gateway).
        if let name = auth.version, let version = ProtocolVersion(rawValue: name) { session.version = version }
        if let wait = throttle.retryAfter(peer, now: clock()) {
            // Not 4001: a client stops for good on that; this one may try again later, with the same token.
            let seconds = AuthThrottle.seconds(wait)
            session.queueControl(["type": "error", "message": .string("too many failed authentications; try again in \(seconds) s")])
            return sessions.close(session, code: .throttled, reason: "try again in \(seconds) s")
        }
        if session.transport.subprotocol == PublisherStream.subprotocol, auth.role != .publisher {
            // Its large receive buffer is for streams; not a failed authentication (the token may be good).
            return rejectAuth(session, "the \(PublisherStream.subprotocol) subprotocol is for publishers", failed: false)
        }
        let grant = access.grant(for: auth.token)
        switch auth.role {
        case .publisher:
            // Writes: the admin token only. A valid device or viewer token is refused without counting as a failed
            // authentication (it is a known token used for the wrong thing).
            guard grant == .admin else {
                let known = grant != nil || directory.device(presenting: auth.token) != nil
                return rejectAuth(session, known ? "a publisher needs the admin token" : "invalid token", failed: !known)
            }
            guard admit(session) else { return }
            return publishers.start(session)
        case .observer:
            guard let grant else { return rejectAuth(session) }
            if let scope = auth.device, directory[scope] == nil { return rejectAuth(session, "unknown device '\(scope)'") }
            guard admit(session) else { return }
            session.role = .observer(device: auth.device, admin: grant == .admin)
            session.queueControl(["type": "auth_ok", "role": "observer", "version": .string(session.version.rawValue)])
            logger.info("observer session opened", metadata: session.metadata())
        case .device:
            guard let device = directory.device(presenting: auth.token) else { return rejectAuth(session) }
            guard admit(session) else { return }
            session.role = .device(device.id)
            device.sessions.append(session.id)
            device.lastSeen = clock()
            let keepalive = keepalive(for: session, asked: auth.keepalive)
            // Announced with its subscribe, which follows at once in every client: one report of a connect, not two.
            session.queueControl([
                "type": "auth_ok", "device_id": .string(device.id), "epoch": .string(device.ledger.epoch),
                "seq": .number(Double(device.ledger.seq)), "version": .string(session.version.rawValue),
                "keepalive": .number(keepalive),
            ])
            logger.info("session opened", metadata: session.metadata(["keepalive_s": "\(keepalive)"]))
        }
    }

    /// The session authenticated: it leaves the unauthenticated count and takes a place among `max_sessions`, if
    /// one is free (else it is closed with 1013 and `false`).
    private func admit(_ session: StreamSession) -> Bool {
        sessions.authenticated(session)
        guard sessions.authenticatedCount > config.limits.maxSessions else { return true }
        session.queueControl(ClientFrame.Refusal("too many sessions", rule: "max_sessions").frame)
        sessions.close(session, code: .tryAgainLater, reason: "too many sessions")
        return false
    }

    /// The ping interval of a device session: what the client asked for within `session.keepalive_min` …
    /// `keepalive_max`, else `session.ping_interval`.
    private func keepalive(for session: StreamSession, asked: Double?) -> Double {
        guard let asked else { return config.session.pingInterval }
        guard !asked.isNaN else {
            protocolError(session, ClientFrame.Refusal(
                "keepalive: a number of seconds; the default (\(config.session.pingInterval) s) applies", field: "keepalive",
                rule: "type"))
            return config.session.pingInterval
        }
        let granted = min(max(asked, config.session.keepaliveMin), config.session.keepaliveMax)
        if granted != config.session.pingInterval { session.transport.keepalive(every: granted) }
        return granted
    }

    private func rejectAuth(_ session: StreamSession, _ why: String = "invalid token", failed: Bool = true) {
        if failed { throttle.failed(session.transport.peer, now: clock()) }
        session.queueControl(["type": "auth_invalid", "message": .string(why)])
        sessions.close(session, code: .authInvalid, reason: "auth invalid")
    }

    private func subscribe(_ session: StreamSession, resume: (epoch: String, seq: UInt64)?) {
        guard !session.subscribed else { return protocolError(session, ClientFrame.Refusal("already subscribed")) }
        switch session.role {
        case .pending, .publisher:
            return
        case .device(let id):
            guard let device = directory[id] else { return }
            let (coalescer, start) = Coalescer.subscribe(ledger: device.ledger, resume: resume, window: config.session.window)
            session.coalescers[id] = coalescer
            if case .replay(let from) = start {
                session.queueControl(["type": "replay", "from": .number(Double(from)), "epoch": .string(device.ledger.epoch)])
            }
            // From here the device is on the LAN: what waits for the relay is taken back (the subscription's
            // snapshot or replay carries it).
            let wasGone = !device.isConnected
            device.receiving.append(session.id)
            if wasGone {
                relay.deviceBack(device)
                metrics.devicesConnected.record(directory.connectedCount)
            }
            report.announce(device)
        case .observer(let scope, _):
            for device in directory.sorted where scope == nil || scope == device.id {
                session.coalescers[device.id] = Coalescer.subscribe(ledger: device.ledger, resume: nil, window: 1 << 30).0
            }
            sessions.addObserver(session)
        }
        session.subscribed = true
        session.transport.requestWritable()
    }

    private func acknowledge(_ session: StreamSession, seq: UInt64) {
        guard let id = session.deviceId else { return }
        let ack = session.withCoalescer(id) { coalescer in
            let full = !coalescer.hasCredit
            coalescer.acknowledge(seq)
            return (acked: coalescer.ackedSeq, freed: full && coalescer.hasCredit)
        }
        // What waited for credit can go now. A session that had credit waits for nothing the ack gives: whatever it
        // had to send was written, or a write is already asked for (every change and control frame asks).
        if ack?.freed == true { session.transport.requestWritable() }
        guard let device = directory.device(of: session), let acked = ack?.acked else { return }
        device.deliveredSeq = max(device.deliveredSeq, acked)
        // What every session of the device has acknowledged (a device has one session but for a moment or two).
        let floor =
            device.sessions.count == 1 && device.sessions[0] == session.id
            ? acked
            : device.sessions.reduce(UInt64.max) { floor, other in
                min(floor, sessions[other]?.withCoalescer(id) { $0.ackedSeq } ?? .max)
            }
        guard floor != .max else { return }
        // A notification is done once every session of the device has acknowledged it.
        if let first = device.ledger.notifications.first, first.seq <= floor {
            device.ledger.pruneNotifications(through: floor)
            journal.recordPrunedNotifications(of: device, through: floor)
            events.changed(device)
        }
        // And the history no longer needs what only a resume from before `floor` would replay.
        if device.ledger.forgetHistory(before: floor) { directory.settleHistory(of: device) }
    }
}
