import LanpushCore

/// What a device session reports for the relay path and for HA: its relay credentials (`register`, `unregister`),
/// its activities' push tokens and its push-to-start token, and the user's dismissals.
extension SessionProtocol {
    /// Activity tokens kept per device (one per tag the device showed lately); past it the one that expires first
    /// goes, so a client reporting tags without end cannot grow the device's record (and its store row) for good.
    static let maxActivityTokens = 256

    /// Relay credentials (`push_token`, `push_url`, `registration_info`) and/or whether the client can show Live
    /// Activities (`supports_live_activities`). A frame with only the latter leaves the credentials as they are.
    /// Refused, with an `error` frame naming the field and rule: a `push_url` the gateway may not post to
    /// (`PushURLPolicy`), and a push_token another device registered first.
    func register(_ session: StreamSession, _ frame: ClientFrame.Register) {
        guard let id = session.deviceId, let device = directory[id] else {
            return protocolError(session, ClientFrame.Refusal("only devices register"))
        }
        var answer: [String: JSONValue] = ["type": "registered"]
        if let pushToken = frame.pushToken {
            if let url = frame.pushURL, !url.isEmpty, let refused = pushURLs.refusal(url) {
                metrics.reject("push_url")
                logger.warning("push_url refused", metadata: session.metadata(["rule": "\(refused.rule)", "push_url": "\(url)"]))
                return protocolError(session, ClientFrame.Refusal(refused.message, field: "push_url", rule: refused.rule))
            }
            let registration = DeviceRecord.Registration(
                pushToken: pushToken, pushURL: frame.pushURL, registrationInfo: frame.registrationInfo)
            if case .failure(let claimed) = directory.register(registration, for: device) {
                metrics.reject("push_token_claimed")
                logger.warning("push_token already registered to another device: refused", metadata: session.metadata([
                    "owner": "\(claimed.owner)",
                ]))
                return protocolError(session, ClientFrame.Refusal(
                    "push_token: registered to another device, which must unregister it first (or the admin clears it)",
                    field: "push_token", rule: "owned"))
            }
            relay.revalidate(device)
            answer["push_token"] = .string(pushToken)
            logger.info("device registered push_token", metadata: session.metadata())
        }
        if let supported = frame.supportsLiveActivities, supported != device.supportsLiveActivities {
            device.supportsLiveActivities = supported
            events.reported(device, .capabilities)
        }
        if let supported = frame.supportsLiveActivities { answer["supports_live_activities"] = .bool(supported) }
        journal.record(device: device)
        report.announce(device)
        session.queueControl(.object(answer))
    }

    /// The device lets its push_token go: HA's relay bodies with it reach no device now, and another device may
    /// register it.
    func unregister(_ session: StreamSession) {
        guard let id = session.deviceId, let device = directory[id] else {
            return protocolError(session, ClientFrame.Refusal("only devices unregister"))
        }
        directory.unregister(device)
        journal.record(device: device)
        report.announce(device)
        logger.info("device unregistered its push_token", metadata: session.metadata())
        session.queueControl(["type": "unregistered"])
    }

    func liveActivityToken(_ session: StreamSession, tag: String, token: String, expiresAt: Double?) {
        guard let id = session.deviceId, let device = directory[id] else {
            return protocolError(session, ClientFrame.Refusal("only devices report activity tokens"))
        }
        var entry: [String: JSONValue] = ["token": .string(token)]
        if let expiresAt { entry["expires_at"] = .number(expiresAt) }
        if device.liveActivityTokens[tag] == nil, device.liveActivityTokens.count >= Self.maxActivityTokens,
           let first = device.liveActivityTokens.min(by: { expiry($0.value) < expiry($1.value) })?.key
        {
            device.liveActivityTokens.removeValue(forKey: first)
        }
        device.liveActivityTokens[tag] = .object(entry)
        journal.record(device: device)
        events.reported(device, .liveActivityToken(tag: tag, token: token, expiresAt: expiresAt))
    }

    private func expiry(_ entry: JSONValue) -> Double { entry["expires_at"]?.numberValue ?? 0 }

    func pushToStartToken(_ session: StreamSession, _ token: String) {
        guard let id = session.deviceId, let device = directory[id] else {
            return protocolError(session, ClientFrame.Refusal("only devices report a push-to-start token"))
        }
        let changed = device.pushToStartToken != token
        device.pushToStartToken = token
        journal.record(device: device)
        if changed { events.reported(device, .pushToStartToken) }
    }

    func dismissed(_ session: StreamSession, tag: String) {
        guard let id = session.deviceId, let device = directory[id] else {
            return protocolError(session, ClientFrame.Refusal("only devices dismiss"))
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
