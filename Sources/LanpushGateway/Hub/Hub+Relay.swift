import LanpushCore
import LanpushStore

/// Sends relay requests off the loop; the completion runs on the loop thread.
protocol RelayTransport: AnyObject {
    func send(_ item: RelayItem, completion: @escaping (RelayResponse) -> Void)
}

/// The relay path (DESIGN.md §5, issue 5): a device with no live session gets its traffic through HA's push
/// relay, paced by `RelayPacer`. Loop thread only.
///
/// "No double delivery": while a device has a session its changes go to the LAN only; from the moment its
/// last session is gone they go to the relay (starting with whatever that session had not acknowledged);
/// when it comes back, pending relay items are cancelled and the session gets the current state.
extension Hub {
    static let iosRelayPath = "/api/sendPushNotification"
    static let androidRelayPath = "/api/sendPush/android/v1"

    /// Where a device's relay traffic goes: the push_url it registered, else the configured upstream.
    func relayURL(for device: DeviceRecord, path: String? = nil) -> String? {
        guard let registration = device.registration else { return nil }
        if let url = registration.pushURL, !url.isEmpty { return url }
        let appId = registration.registrationInfo["app_id"]?.stringValue ?? ""
        let defaultPath = appId.contains("android") ? Self.androidRelayPath : Self.iosRelayPath
        return upstreamURL(path: path ?? defaultPath)
    }

    func upstreamURL(path: String) -> String {
        var base = config.relay.upstream
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// Queues the relay side of accepted changes of a gone device. `body` is the request as HA sent it (or
    /// as it would have): one body serves every change the request made.
    func relay(_ changes: [Change], device: DeviceRecord, body: RelayBody, url: String) {
        if body.templateRemoved { metrics.relayTemplatesStripped.increment() }
        for change in changes {
            guard let kind = RelayItem.Kind(change.kind) else { continue }
            let json = kind == .start ? withPushToStartToken(body.json, device: device) : body.json
            let item = RelayItem(device: device.id, tag: change.tag, kind: kind, url: url, body: json, seq: change.seq)
            submitRelay(item)
        }
    }

    /// A start with no activity token to address goes by the device's push-to-start token, when its client reported
    /// one (`push_to_start_token` frame): top level, beside where HA puts `live_activity_token`.
    func withPushToStartToken(_ body: JSONValue, device: DeviceRecord) -> JSONValue {
        guard let token = device.pushToStartToken, case .object(var o) = body,
            o["live_activity_token"] == nil || o["live_activity_token"] == .null, o["push_to_start_token"] == nil
        else { return body }
        o["push_to_start_token"] = .string(token)
        return .object(o)
    }

    /// Traffic for a push_token no client registered: proxied to the upstream, paced per token.
    func relayUnknownToken(_ request: RelayPushRequest, command: PushCommand, path: String, now: Double) {
        let key = "push_token:\(request.pushToken)"
        let tag = command.tag
        let liveKey = "\(request.pushToken)|\(tag ?? "")"
        let kind = RelayItem.Kind(command, activityLive: unknownTokenActivities.contains(liveKey))
        switch kind {
        case .start, .update: unknownTokenActivities.insert(liveKey)
        case .end: unknownTokenActivities.remove(liveKey)
        case .notification: break
        }
        unknownTokenSeq += 1
        let body = RelayBody.forwarding(
            request.raw, acceptedAt: now, liveActivityToken: request.liveActivityToken,
            event: request.notification.data["event"]?.stringValue.flatMap(LiveEvent.init(rawValue:)))
        if body.templateRemoved { metrics.relayTemplatesStripped.increment() }
        submitRelay(RelayItem(device: key, tag: tag, kind: kind, url: upstreamURL(path: path), body: body.json, seq: unknownTokenSeq))
    }

    func submitRelay(_ item: RelayItem) {
        let result = relayPacer.submit(item, now: clock())
        if !result.accepted { metrics.relayDropped.increment() }
        if result.superseded > 0 { metrics.coalesced.increment(by: Int64(result.superseded)) }
        if !result.dropped.isEmpty { metrics.relayDropped.increment(by: Int64(result.dropped.count)) }
    }

    /// The device's last session just went away: everything it had not acknowledged goes to the relay.
    func deviceGone(_ device: DeviceRecord) {
        guard let url = relayURL(for: device) else { return }
        let delivered = device.deliveredSeq
        for activity in device.ledger.activities.values.sorted(by: { $0.lastSeq < $1.lastSeq })
        where activity.lastSeq > delivered {
            guard let body = device.relayBodies[activity.tag] else { continue }
            let kind: RelayItem.Kind =
                activity.generation > delivered ? .start : (activity.phase == .ended || activity.phase == .dismissed ? .end : .update)
            if kind == .start, !activity.phase.isLive { continue }  // started and ended unseen: nothing to show
            let json = kind == .start ? withPushToStartToken(body, device: device) : body
            submitRelay(RelayItem(device: device.id, tag: activity.tag, kind: kind, url: url, body: json, seq: activity.lastSeq))
        }
        for queued in device.ledger.notifications where queued.seq > delivered {
            guard let body = device.relayNotificationBodies[queued.seq] else { continue }
            submitRelay(RelayItem(device: device.id, tag: nil, kind: .notification, url: url, body: body, seq: queued.seq))
        }
        pumpRelay()
    }

    /// A session of the device authenticated: it takes its slots back.
    func deviceBack(_ device: DeviceRecord) {
        let cancelled = relayPacer.cancel(device: device.id, now: clock())
        if !cancelled.isEmpty {
            logger.info("device back on the LAN: relay items cancelled", metadata: ["device": "\(device.id)", "items": "\(cancelled.count)"])
        }
        syncOutbox()
    }

    /// Sends whatever the pacer says is due. Called after submits, completions and on every tick.
    func pumpRelay() {
        defer { syncOutbox() }
        guard let transport = relayTransport else { return }
        for item in relayPacer.due(now: clock()) {
            metrics.relayRequests.increment()
            transport.send(item) { [weak self] response in self?.relayAnswered(item, response) }
        }
    }

    private func relayAnswered(_ item: RelayItem, _ response: RelayResponse) {
        let now = clock()
        let completion = relayPacer.complete(item, outcome: response.outcome, now: now)
        metrics.relayAnswer(response.status)
        let limits = response.rateLimits
        if let remaining = limits.remaining, let token = relayToken(of: item) {
            counters.relayRemaining[token] = remaining
        }
        if completion.tokenInvalidated {
            logger.warning("relay refused the device's push token (403): relay path stopped for it", metadata: ["device": "\(item.device)"])
        }
        if !completion.dropped.isEmpty || !completion.overflow.isEmpty {
            metrics.relayDropped.increment(by: Int64(completion.dropped.count + completion.overflow.count))
        }
        if response.status == nil || (response.status ?? 0) >= 500 {
            logger.info("relay request failed; retrying with backoff", metadata: [
                "device": "\(item.device)", "error": "\(response.error.map { "\($0)" } ?? "HTTP \(response.status ?? 0)")",
            ])
        }
        metrics.relayInvalidTokens.record(relayPacer.invalidTokenDevices.count)
        pumpRelay()
    }

    private func relayToken(of item: RelayItem) -> String? {
        if item.device.hasPrefix("push_token:") { return String(item.device.dropFirst("push_token:".count)) }
        return devices[item.device]?.registration?.pushToken
    }

    /// Keeps the durable outbox equal to what the pacer has not had answered.
    func syncOutbox() {
        metrics.relayQueue.record(relayPacer.queuedCount)
        guard persist != nil, relayPacer.generation != persistedOutboxGeneration else { return }
        persistedOutboxGeneration = relayPacer.generation
        let rows = relayPacer.pendingItems.enumerated().map { index, item in
            OutboxRow(
                deviceId: item.device, slot: "\(index)|\(item.tag ?? "")", kind: item.kind.rawValue, url: item.url,
                body: item.body, seq: item.seq)
        }
        pendingOps.append(.replaceOutbox(rows))
    }

    /// Brings back the outbox of the previous run (in its order).
    func restoreOutbox(_ rows: [OutboxRow]) {
        let items = rows.sorted { (Int($0.slot.split(separator: "|").first ?? "") ?? 0) < (Int($1.slot.split(separator: "|").first ?? "") ?? 0) }
            .compactMap { row -> RelayItem? in
                guard let kind = RelayItem.Kind(rawValue: row.kind) else { return nil }
                let tag = row.slot.split(separator: "|", maxSplits: 1).dropFirst().first.map(String.init)
                return RelayItem(device: row.deviceId, tag: tag?.isEmpty == false ? tag : nil, kind: kind, url: row.url, body: row.body, seq: row.seq)
            }
        guard !items.isEmpty else { return }
        relayPacer.restore(items, now: clock())
        for item in items where item.device.hasPrefix("push_token:") { unknownTokenSeq = max(unknownTokenSeq, item.seq) }
        persistedOutboxGeneration = relayPacer.generation
        logger.info("relay outbox restored", metadata: ["items": "\(items.count)"])
    }

    /// The relay's view of a device, for `GET /v1/devices`.
    func relayStatus(of device: String) -> JSONValue? {
        guard let status = relayPacer.status(of: device, now: clock()) else { return nil }
        var o: [String: JSONValue] = [
            "token_invalid": .bool(status.tokenInvalid), "queued": .number(Double(status.queued)),
            "in_flight": .number(Double(status.inFlight)),
        ]
        if let remaining = status.remaining { o["remaining"] = .number(Double(remaining)) }
        if let resets = status.resetsAt { o["resets_at"] = .number(resets.rounded()) }
        if let backoff = status.backoffUntil { o["backoff_until"] = .number(backoff.rounded()) }
        return .object(o)
    }
}
