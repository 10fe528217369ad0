import LanpushCore
import Logging

/// The LAN client protocol (lanpush.v1 and v2) from the client's side (docs/PROTOCOL.md): a session opens,
/// authenticates as a device or an observer, registers relay credentials, subscribes (or resumes), acks, reports
/// tokens and dismissals, and closes. Loop thread only.
final class SessionProtocol {
    /// A session that has not authenticated by then is closed with 4001.
    static let authTimeout: Double = 10

    private let config: GatewayConfig
    private let access: AccessControl
    private let throttle: AuthThrottle
    private let directory: DeviceDirectory
    private let sessions: SessionRegistry
    private let journal: Journal
    private let relay: RelayHandOver
    private let report: DeviceReport
    private let publishers: PublisherIngest
    private let events: DeviceEvents
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let clock: () -> Double

    init(
        config: GatewayConfig, directory: DeviceDirectory, sessions: SessionRegistry, journal: Journal,
        relay: RelayHandOver, report: DeviceReport, publishers: PublisherIngest, throttle: AuthThrottle, events: DeviceEvents,
        metrics: GatewayMetrics, logger: Logger,
        clock: @escaping () -> Double
    ) {
        self.config = config
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
        if sessions.count > config.limits.maxSessions {
            session.queueControl(["type": "error", "message": "too many sessions"])
            return sessions.close(session, code: 1013, reason: "too many sessions")
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
        let message: [String: JSONValue]
        do {
            guard let object = try JSONValue.parse(bytes).objectValue else {
                return protocolError(session, "a frame must be a JSON object")
            }
            message = object
        } catch {
            return protocolError(session, "invalid JSON: \(error)")
        }
        guard let type = message["type"]?.stringValue else {
            return protocolError(session, "field 'type' (string) is required")
        }
        if case .pending = session.role {
            guard type == "auth" else {
                session.queueControl(["type": "auth_invalid", "message": "authenticate first"])
                return sessions.close(session, code: 4001, reason: "auth required")
            }
            return authenticate(session, message)
        }
        switch type {
        case "ack": acknowledge(session, message)
        case "subscribe": subscribe(session, message)
        case "register": register(session, message)
        case "live_activity_token": liveActivityToken(session, message)
        case "push_to_start_token": pushToStartToken(session, message)
        case "dismissed": dismissed(session, message)
        case "ping": session.queueControl(["type": "pong"])
        case "auth": protocolError(session, "already authenticated")
        default: protocolError(session, "unknown message type '\(type)'")
        }
    }

    /// A seq from a client frame: an integer a JSON number holds exactly. Anything else (1e20, 2^64, NaN from a
    /// hostile client) is refused before it reaches a conversion that would trap.
    static func wireSeq(_ value: JSONValue?) -> UInt64? {
        guard let n = value?.numberValue, n.isFinite, n >= 0, n <= 9_007_199_254_740_992, n == n.rounded(.down) else {
            return nil
        }
        return UInt64(n)
    }

    private func protocolError(_ session: StreamSession, _ message: String) {
        session.queueControl(["type": "error", "message": .string(message)])
    }

    private func authenticate(_ session: StreamSession, _ message: [String: JSONValue]) {
        let token = message["token"]?.stringValue ?? ""
        let peer = session.transport.peer
        if let asked = message["version"], !asked.isNull {
            // A socket that cannot offer subprotocols (the Scripting app's) chooses here. A version this gateway
            // does not know is treated like an unknown subprotocol: the session keeps the one it has, and auth_ok
            // says which (a newer client falls back, as it would with an older gateway).
            guard let name = asked.stringValue else {
                let why = "version: must be a string (e.g. \"lanpush.v2\")"
                session.queueControl(["type": "auth_invalid", "message": .string(why)])
                return sessions.close(session, code: 4001, reason: "auth invalid")
            }
            if let version = ProtocolVersion(rawValue: name) { session.version = version }
        }
        if let wait = throttle.retryAfter(peer, now: clock()) {
            // Not 4001: a client stops for good on that; this one may try again later, with the same token.
            let seconds = AuthThrottle.seconds(wait)
            session.queueControl(["type": "error", "message": .string("too many failed authentications; try again in \(seconds) s")])
            return sessions.close(session, code: 4029, reason: "try again in \(seconds) s")
        }
        if session.transport.subprotocol == PublisherStream.subprotocol, message["role"]?.stringValue != "publisher" {
            // Its large receive buffer is for streams; not a failed authentication (the token may be good).
            return rejectAuth(session, "the \(PublisherStream.subprotocol) subprotocol is for publishers", failed: false)
        }
        if message["role"]?.stringValue == "publisher" {
            // Writes: the admin token only. A valid device or viewer token is refused without counting as a failed
            // authentication (it is a known token used for the wrong thing).
            let grant = access.grant(for: token)
            guard grant == .admin else {
                let known = grant != nil || directory.device(presenting: token) != nil
                return rejectAuth(session, known ? "a publisher needs the admin token" : "invalid token", failed: !known)
            }
            return publishers.start(session)
        }
        if message["role"]?.stringValue == "observer" {
            guard access.grant(for: token) != nil else { return rejectAuth(session) }
            let scope = message["device"]?.stringValue
            if let scope, directory[scope] == nil { return rejectAuth(session, "unknown device '\(scope)'") }
            session.role = .observer(device: scope)
            session.queueControl(["type": "auth_ok", "role": "observer", "version": .string(session.version.rawValue)])
            logger.info("observer session opened", metadata: session.metadata())
            return
        }
        guard let device = directory.device(presenting: token) else { return rejectAuth(session) }
        session.role = .device(device.id)
        device.sessions.append(session.id)
        device.lastSeen = clock()
        // Announced with its subscribe, which follows at once in every client: one report of a connect, not two.
        session.queueControl([
            "type": "auth_ok", "device_id": .string(device.id), "epoch": .string(device.ledger.epoch),
            "seq": .number(Double(device.ledger.seq)), "version": .string(session.version.rawValue),
        ])
        logger.info("session opened", metadata: session.metadata())
    }

    private func rejectAuth(_ session: StreamSession, _ why: String = "invalid token", failed: Bool = true) {
        if failed { throttle.failed(session.transport.peer, now: clock()) }
        session.queueControl(["type": "auth_invalid", "message": .string(why)])
        sessions.close(session, code: 4001, reason: "auth invalid")
    }

    private func subscribe(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard !session.subscribed else { return protocolError(session, "already subscribed") }
        switch session.role {
        case .pending, .publisher:
            return
        case .device(let id):
            guard let device = directory[id] else { return }
            var resume: (epoch: String, seq: UInt64)?
            if let epoch = message["epoch"]?.stringValue, let raw = message["seq"], !raw.isNull {
                guard let seq = Self.wireSeq(raw) else {
                    return protocolError(session, "subscribe: 'seq' must be an integer from 0 to 2^53")
                }
                resume = (epoch, seq)
            }
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
        case .observer(let scope):
            for device in directory.sorted where scope == nil || scope == device.id {
                session.coalescers[device.id] = Coalescer.subscribe(ledger: device.ledger, resume: nil, window: 1 << 30).0
            }
            sessions.addObserver(session)
        }
        session.subscribed = true
        session.transport.requestWritable()
    }

    private func acknowledge(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard session.deviceId != nil, let seq = Self.wireSeq(message["seq"]) else {
            return protocolError(session, session.isObserver ? "observers do not ack" : "ack: 'seq' must be an integer from 0 to 2^53")
        }
        acknowledge(session, seq: seq)
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

    /// Relay credentials (`push_token`, `push_url`, `registration_info`) and/or whether the client can show Live
    /// Activities (`supports_live_activities`). A frame with only the latter leaves the credentials as they are.
    private func register(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard let id = session.deviceId, let device = directory[id] else { return protocolError(session, "only devices register") }
        var supportsLiveActivities: Bool?
        if let flag = message["supports_live_activities"], !flag.isNull {
            guard let value = flag.boolValue else { return protocolError(session, "'supports_live_activities' must be true or false") }
            supportsLiveActivities = value
        }
        let pushToken = message["push_token"]?.stringValue ?? ""
        guard !pushToken.isEmpty || (supportsLiveActivities != nil && message["push_token"] == nil) else {
            return protocolError(session, "register needs a non-empty 'push_token' (or only 'supports_live_activities')")
        }
        if let url = message["push_url"], url.stringValue == nil, !url.isNull {
            return protocolError(session, "'push_url' must be a string")
        }
        // The store's text columns end at a NUL (SQLite's C strings): the credentials would come back cut after a restart.
        if pushToken.utf8.contains(0) || message["push_url"]?.stringValue?.utf8.contains(0) == true {
            return protocolError(session, "'push_token' and 'push_url' must not contain NUL characters")
        }
        var answer: [String: JSONValue] = ["type": "registered"]
        if !pushToken.isEmpty {
            let registration = DeviceRecord.Registration(
                pushToken: pushToken, pushURL: message["push_url"]?.stringValue,
                registrationInfo: message["registration_info"]?.objectValue ?? [:])
            if let previous = directory.register(registration, for: device) { journal.record(device: previous) }
            relay.revalidate(device)
            answer["push_token"] = .string(pushToken)
            logger.info("device registered push_token", metadata: session.metadata())
        }
        if let supportsLiveActivities, supportsLiveActivities != device.supportsLiveActivities {
            device.supportsLiveActivities = supportsLiveActivities
            events.reported(device, .capabilities)
        }
        if let supportsLiveActivities { answer["supports_live_activities"] = .bool(supportsLiveActivities) }
        journal.record(device: device)
        report.announce(device)
        session.queueControl(.object(answer))
    }

    private func liveActivityToken(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard let id = session.deviceId, let tag = message["tag"]?.stringValue, let token = message["token"]?.stringValue else {
            return protocolError(session, "live_activity_token needs 'tag' and 'token'")
        }
        var expiresAt: Double?
        if let raw = message["expires_at"], !raw.isNull {
            guard let seconds = Self.unixSeconds(raw) else {
                return protocolError(session, "live_activity_token: 'expires_at' must be a time in Unix seconds (or milliseconds)")
            }
            expiresAt = seconds
        }
        var entry: [String: JSONValue] = ["token": .string(token)]
        if let expiresAt { entry["expires_at"] = .number(expiresAt) }
        guard let device = directory[id] else { return }
        device.liveActivityTokens[tag] = .object(entry)
        journal.record(device: device)
        events.reported(device, .liveActivityToken(tag: tag, token: token, expiresAt: expiresAt))
    }

    /// A positive time, seconds or (≥ 10^11, the Scripting app's unit) milliseconds, as for `stale_date`.
    static func unixSeconds(_ value: JSONValue) -> Double? {
        guard let n = value.numberValue, n.isFinite, n > 0, n < 1e14 else { return nil }
        return n >= 1e11 ? n / 1000 : n
    }

    private func pushToStartToken(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard let id = session.deviceId, let token = message["token"]?.stringValue, !token.utf8.contains(0) else {
            return protocolError(session, "push_to_start_token needs 'token' (without NUL characters)")
        }
        guard let device = directory[id] else { return }
        let changed = device.pushToStartToken != token
        device.pushToStartToken = token
        journal.record(device: device)
        if changed { events.reported(device, .pushToStartToken) }
    }

    private func dismissed(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard let id = session.deviceId, let tag = message["tag"]?.stringValue, let device = directory[id] else {
            return protocolError(session, "dismissed needs 'tag'")
        }
        if let change = device.ledger.dismissedByUser(tag: tag, now: clock()) {
            directory.settleHistory(of: device)
            journal.record([change], of: device)
            sessions.fanOut([change], device: device)
        }
        // The user dismissed it on this client: HA drops what it keeps for the activity (its token).
        events.reported(device, .dismissed(tag: tag))
    }
}
