import LanpushCore

/// The lanpush.v1 protocol, client → server side (docs/PROTOCOL.md). Loop thread only.
extension Hub {
    static let protocolVersion = "lanpush.v1"

    func sessionOpened(id: UInt64, transport: SessionTransport) {
        let session = StreamSession(id: id, transport: transport, now: clock())
        sessions[id] = session
        metrics.sessions.record(sessions.count)
        if sessions.count > config.limits.maxSessions {
            session.queueControl(["type": "error", "message": "too many sessions"])
            close(session, code: 1013, reason: "too many sessions")
            return
        }
        session.queueControl(["type": "auth_required", "version": .string(Self.protocolVersion)])
    }

    func sessionClosed(id: UInt64) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        observerIDs.remove(id)
        metrics.sessions.record(sessions.count)
        metrics.sessionsClosed.increment()
        if let deviceId = session.deviceId, let device = devices[deviceId] {
            device.sessions.removeAll { $0 == id }
            device.lastSeen = clock()
            journalDevice(device)
            if !device.isConnected {
                updateConnectedGauge()
                deviceGone(device)
            }
            announceDevice(device)
        }
        logger.info("session closed", metadata: sessionMetadata(session))
    }

    /// Tells observers a device's sessions or path changed: `{"type":"device","device_id",...}`.
    func announceDevice(_ device: DeviceRecord) {
        let observers = observerIDs.compactMap { sessions[$0] }.filter { session in
            guard case .observer(let scope) = session.role else { return false }
            return scope == nil || scope == device.id
        }
        guard !observers.isEmpty, case .object(var o) = device.json(now: clock()) else { return }
        o["type"] = "device"
        o["device_id"] = .string(device.id)
        for observer in observers { observer.queueControl(.object(o)) }
    }

    func updateConnectedGauge() {
        metrics.devicesConnected.record(devices.values.reduce(0) { $0 + ($1.isConnected ? 1 : 0) })
    }

    func sessionWritable(id: UInt64) {
        guard let session = sessions[id], !session.closing else { return }
        writable(session)
    }

    func sessionText(id: UInt64, bytes: [UInt8]) {
        guard let session = sessions[id], !session.closing, session.pendingClose == nil else { return }
        session.lastActivity = clock()
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
                return close(session, code: 4001, reason: "auth required")
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
        let role = message["role"]?.stringValue ?? "device"
        if role == "observer" {
            guard !token.isEmpty, token == config.adminToken || token == config.viewerToken else {
                return rejectAuth(session)
            }
            let scope = message["device"]?.stringValue
            if let scope, devices[scope] == nil { return rejectAuth(session, "unknown device '\(scope)'") }
            session.role = .observer(device: scope)
            session.queueControl(["type": "auth_ok", "role": "observer", "version": .string(Self.protocolVersion)])
            logger.info("observer session opened", metadata: sessionMetadata(session))
            return
        }
        guard let deviceId = deviceByToken[token], let device = devices[deviceId] else { return rejectAuth(session) }
        session.role = .device(deviceId)
        let wasGone = !device.isConnected
        device.sessions.append(session.id)
        if wasGone { deviceBack(device) }
        device.lastSeen = clock()
        updateConnectedGauge()
        announceDevice(device)
        session.queueControl([
            "type": "auth_ok", "device_id": .string(deviceId), "epoch": .string(device.ledger.epoch),
            "seq": .number(Double(device.ledger.seq)), "version": .string(Self.protocolVersion),
        ])
        logger.info("session opened", metadata: sessionMetadata(session))
    }

    private func rejectAuth(_ session: StreamSession, _ why: String = "invalid token") {
        session.queueControl(["type": "auth_invalid", "message": .string(why)])
        close(session, code: 4001, reason: "auth invalid")
    }

    private func subscribe(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard !session.subscribed else { return protocolError(session, "already subscribed") }
        switch session.role {
        case .pending:
            return
        case .device(let id):
            guard let device = devices[id] else { return }
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
        case .observer(let scope):
            for device in devices.values where scope == nil || scope == device.id {
                session.coalescers[device.id] = Coalescer.subscribe(ledger: device.ledger, resume: nil, window: 1 << 30).0
            }
            observerIDs.insert(session.id)
        }
        session.subscribed = true
        session.transport.requestWritable()
    }

    private func acknowledge(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard let id = session.deviceId, let seq = Self.wireSeq(message["seq"]) else {
            return protocolError(session, session.isObserver ? "observers do not ack" : "ack: 'seq' must be an integer from 0 to 2^53")
        }
        session.coalescers[id]?.acknowledge(seq)
        guard let device = devices[id] else { return }
        if let acked = session.coalescers[id]?.ackedSeq { device.deliveredSeq = max(device.deliveredSeq, acked) }
        // A notification is done once every session of the device has acknowledged it.
        let floor = device.sessions.compactMap { sessions[$0]?.coalescers[id]?.ackedSeq }.min() ?? 0
        if let first = device.ledger.notifications.first, first.seq <= floor {
            device.ledger.pruneNotifications(through: floor)
            journalPrunedNotifications(device, through: floor)
        }
        session.transport.requestWritable()
    }

    private func register(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard let id = session.deviceId, let device = devices[id] else { return protocolError(session, "only devices register") }
        guard let pushToken = message["push_token"]?.stringValue, !pushToken.isEmpty else {
            return protocolError(session, "register needs a non-empty 'push_token'")
        }
        if let url = message["push_url"], url.stringValue == nil {
            return protocolError(session, "'push_url' must be a string")
        }
        if let old = device.registration?.pushToken, old != pushToken { deviceByPushToken.removeValue(forKey: old) }
        if let other = deviceByPushToken[pushToken], other != id {
            if let previous = devices[other] {
                previous.registration = nil
                journalDevice(previous)
            }
        }
        device.registration = .init(
            pushToken: pushToken, pushURL: message["push_url"]?.stringValue,
            registrationInfo: message["registration_info"]?.objectValue ?? [:])
        deviceByPushToken[pushToken] = id
        relayPacer.revalidate(device: id, now: clock())
        journalDevice(device)
        announceDevice(device)
        session.queueControl(["type": "registered", "push_token": .string(pushToken)])
        logger.info("device registered push_token", metadata: sessionMetadata(session))
    }

    private func liveActivityToken(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard let id = session.deviceId, let tag = message["tag"]?.stringValue, let token = message["token"]?.stringValue else {
            return protocolError(session, "live_activity_token needs 'tag' and 'token'")
        }
        var entry: [String: JSONValue] = ["token": .string(token)]
        if let expires = message["expires_at"] { entry["expires_at"] = expires }
        guard let device = devices[id] else { return }
        device.liveActivityTokens[tag] = .object(entry)
        journalDevice(device)
    }

    private func pushToStartToken(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard let id = session.deviceId, let token = message["token"]?.stringValue else {
            return protocolError(session, "push_to_start_token needs 'token'")
        }
        guard let device = devices[id] else { return }
        device.pushToStartToken = token
        journalDevice(device)
    }

    private func dismissed(_ session: StreamSession, _ message: [String: JSONValue]) {
        guard let id = session.deviceId, let tag = message["tag"]?.stringValue, let device = devices[id] else {
            return protocolError(session, "dismissed needs 'tag'")
        }
        if let change = device.ledger.dismissedByUser(tag: tag, now: clock()) { fanOut([change], device: id) }
    }
}
