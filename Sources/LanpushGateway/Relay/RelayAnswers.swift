import LanpushCore
import LanpushStore

/// The relay path's sending side: what is due leaves addressed as core addresses it, each answer is read as the relay
/// means it, and the durable outbox follows the pacer.
extension RelayHandOver {
    /// Sends whatever the pacer says is due. Called after submits, completions and on every tick.
    func pump() {
        defer { syncOutbox() }
        guard let transport else { return }
        let due = pacer.due(now: clock())
        let expired = pacer.takeExpired()
        if !expired.isEmpty {
            metrics.relayDropped.increment(by: Int64(expired.count))
            loggedDrop(expired, "held past relay.max_hold (the relay was rate-limited or unreachable)")
        }
        for item in due {
            metrics.relayRequests.increment()
            // A request leaving counts against the device's quota (the pacer's `remaining`).
            if let device = directory[item.device] { events.changed(device) }
            transport.send(addressedAsNow(item)) { [weak self] response in self?.answered(item, response) }
        }
    }

    func submit(_ item: RelayItem) {
        let result = pacer.submit(item, now: clock())
        if !result.accepted {
            metrics.relayDropped.increment()
            loggedDrop([item], directory[item.device]?.relay.tokenInvalid ?? "the relay refused the device's push token")
        }
        if result.superseded > 0 { metrics.coalesced.increment(by: Int64(result.superseded)) }
        if !result.dropped.isEmpty {
            metrics.relayDropped.increment(by: Int64(result.dropped.count))
            loggedDrop(result.dropped, "the relay outbox is full")
        }
    }

    /// Every accepted change the relay path gives up on is counted (`lanpush_relay_dropped_total`) and logged here.
    func loggedDrop(_ items: [RelayItem], _ why: String) {
        for (device, dropped) in Dictionary(grouping: items, by: \.device) {
            logger.warning("relay items dropped", metadata: [
                "device": "\(device)", "items": "\(dropped.count)", "why": "\(why)",
                "tags": "\(Set(dropped.compactMap(\.tag)).sorted().joined(separator: ","))",
            ])
        }
    }

    /// What waited in the pacer (or drains from the bodies HA sent earlier) goes out as the device is addressed now:
    /// to the push token and URL it has registered by now (an app whose token was rotated while the item waited would
    /// otherwise have it sent to a token its push service no longer takes), and in the shape HA core gives its bodies
    /// — `live_activity_token` and `data.event` from the tokens its clients reported (`RelayAddress`). Only the
    /// address changes; the pacer still knows the item as it was queued.
    func addressedAsNow(_ item: RelayItem) -> RelayItem {
        guard !item.device.hasPrefix("push_token:"), let device = directory[item.device] else { return item }
        var item = item
        if let registration = device.relay.registration, case .object(var body) = item.body,
           let queuedFor = body["push_token"]?.stringValue, queuedFor != registration.pushToken
        {
            body["push_token"] = .string(registration.pushToken)
            item.body = .object(body)
        }
        if let url = url(for: device) { item.url = url }
        var live: RelayAddress.LiveActivity?
        var dismissal: Double?
        if item.isSlotItem, let tag = item.tag {
            let now = clock()
            switch item.kind {
            case .start:
                // An activity the client shows already (it reported its token) is updated, never started twice.
                live = device.relay.activityToken(tag, now: now).map { .init(token: $0, event: .update) }
                    ?? device.relay.pushToStartToken.map { .init(token: $0, event: .start) }
            case .update: live = device.relay.activityToken(tag, now: now).map { .init(token: $0, event: .update) }
            case .end:
                live = device.relay.activityToken(tag, now: now).map { .init(token: $0, event: .end) }
                dismissal = device.ledger.activities[tag]?.dismissalDate ?? now
            case .notification: break
            }
        }
        item.body = RelayAddress.addressed(item.body, live: live, dismissal: dismissal)
        return item
    }

    func answered(_ item: RelayItem, _ response: RelayResponse) {
        let now = clock()
        let completion = pacer.complete(item, outcome: response.outcome, now: now)
        let device = directory[item.device]
        if case .success = response.outcome, let device { delivered(item, to: device) }
        metrics.relayAnswer(response.status)
        if let remaining = response.rateLimits.remaining, let token = token(of: item) {
            if remainingByToken[token] == nil, remainingByToken.count >= RateLimitCounters.maxTokens { remainingByToken = [:] }
            remainingByToken[token] = remaining
        }
        let why = Self.refusal(response)
        if completion.tokenInvalidated {
            metrics.relayInvalidatedTokens.increment()
            logger.warning("relay refused the device's push token: relay path stopped for it until it registers again",
                metadata: ["device": "\(item.device)", "why": "\(why)"])
            if let device {
                // What the relay showed on the phone can no longer be reached there.
                device.relay.tokenInvalid = why
                device.relay.shown = []
                journal.record(device: device)
            }
        }
        if !completion.dropped.isEmpty || !completion.overflow.isEmpty {
            metrics.relayDropped.increment(by: Int64(completion.dropped.count + completion.overflow.count))
            loggedDrop(completion.dropped, why)
            loggedDrop(completion.overflow, "the relay outbox is full")
        }
        if case .failed = response.outcome {
            logger.info("relay request failed; retrying with backoff", metadata: [
                "device": "\(item.device)", "error": "\(response.error.map { "\($0)" } ?? "HTTP \(response.status ?? 0)")",
            ])
        }
        metrics.relayInvalidTokens.record(pacer.invalidTokenDevices.count)
        // The answer's rateLimits (remaining, resetsAt), or a refusal, changed what the device's relay path looks like.
        if let device { events.changed(device) }
        pump()
    }

    /// Why the relay refused a request, as its answer says (mobile-apps-fcm-push `functions/handlers.js`,
    /// `handleError`: a 500 names its cause in `errorType`).
    static func refusal(_ response: RelayResponse) -> String {
        switch response.outcome {
        case .forbidden:
            let type = response.body?["errorType"]?.stringValue
            return type == "InvalidToken"
                ? "the relay says the push token is no longer registered (500 InvalidToken)"
                : "the relay refused the push token (403)"
        case .payloadTooLarge: return "the relay says the message is too large for the push service (500 PayloadTooLarge)"
        case .rejected(let status): return "the relay refused the request (HTTP \(status))"
        default: return "HTTP \(response.status ?? 0)"
        }
    }

    /// The relay carried `item` to the phone: a later drain must not send it again, and what it started there is
    /// known to be shown — unless a LAN session took the device back while it was in flight, when it is ended at once.
    func delivered(_ item: RelayItem, to device: DeviceRecord) {
        guard item.isSlotItem, let tag = item.tag else {
            // (A command relayed now carries the ledger's seq too; only the queued notification's own body matches.)
            if device.relay.notificationBodies[item.seq]?.value == item.body { device.relay.notificationBodies.remove(item.seq) }
            return
        }
        device.relay.relayedSeq[tag] = max(device.relay.relayedSeq[tag] ?? 0, item.seq)
        let wasShown = device.relay.shown.contains(tag)
        switch item.kind {
        case .start:
            // The client's own activity (it reported the token the start was addressed by) is the client's to show
            // and end: the relay path only updated it.
            guard device.relay.activityToken(tag, now: clock()) == nil else { break }
            device.relay.shown.insert(tag)
            if device.isConnected, device.relay.handBackAt == nil { device.relay.handBackAt = clock() + config.handBackAfter }
        case .end: device.relay.shown.remove(tag)
        case .update, .notification: break
        }
        if wasShown != device.relay.shown.contains(tag) { journal.record(device: device) }
    }

    func token(of item: RelayItem) -> String? {
        if item.device.hasPrefix("push_token:") { return String(item.device.dropFirst("push_token:".count)) }
        return directory[item.device]?.relay.registration?.pushToken
    }

    // MARK: The durable outbox

    /// Keeps the durable outbox equal to what the pacer has not had answered.
    func syncOutbox() {
        metrics.relayQueue.record(pacer.queuedCount)
        guard journal.isEnabled, pacer.generation != persistedGeneration else { return }
        persistedGeneration = pacer.generation
        journal.recordOutbox(pacer.pendingItems.enumerated().map { index, item in
            OutboxRow(
                deviceId: item.device, slot: "\(index)|\(item.tag ?? "")", kind: item.kind.rawValue, url: item.url,
                body: item.body, seq: item.seq)
        })
    }

    /// Brings back the outbox of the previous run (in its order), and the tokens the relay refused.
    func restore(_ rows: [OutboxRow]) {
        for device in directory.sorted where device.relay.tokenInvalid != nil {
            pacer.markTokenInvalid(device: device.id, now: clock())
        }
        let items = rows.sorted { (Int($0.slot.split(separator: "|").first ?? "") ?? 0) < (Int($1.slot.split(separator: "|").first ?? "") ?? 0) }
            .compactMap { row -> RelayItem? in
                guard let kind = RelayItem.Kind(rawValue: row.kind) else { return nil }
                let tag = row.slot.split(separator: "|", maxSplits: 1).dropFirst().first.map(String.init)
                return RelayItem(device: row.deviceId, tag: tag?.isEmpty == false ? tag : nil, kind: kind, url: row.url, body: row.body, seq: row.seq)
            }
        persistedGeneration = pacer.generation
        guard !items.isEmpty else { return }
        pacer.restore(items, now: clock())
        for item in items where item.device.hasPrefix("push_token:") { unknownTokenSeq = max(unknownTokenSeq, item.seq) }
        persistedGeneration = pacer.generation
        logger.info("relay outbox restored", metadata: ["items": "\(items.count)"])
    }

    /// The relay's view of a device, for `GET /v1/devices`.
    func status(of device: DeviceRecord) -> JSONValue? {
        let status = pacer.status(of: device.id, now: clock())
        guard status != nil || device.relay.tokenInvalid != nil || !device.relay.shown.isEmpty else { return nil }
        var o: [String: JSONValue] = [
            "token_invalid": .bool(status?.tokenInvalid ?? (device.relay.tokenInvalid != nil)),
            "queued": .number(Double(status?.queued ?? 0)), "in_flight": .number(Double(status?.inFlight ?? 0)),
            "sent_today": .number(Double(status?.sentToday ?? 0)),
        ]
        if let why = device.relay.tokenInvalid { o["token_invalid_reason"] = .string(why) }
        if !device.relay.shown.isEmpty { o["shown"] = .array(device.relay.shown.sorted().map(JSONValue.string)) }
        if let remaining = status?.remaining { o["remaining"] = .number(Double(remaining)) }
        if let resets = status?.resetsAt { o["resets_at"] = .number(resets.rounded()) }
        if let backoff = status?.backoffUntil { o["backoff_until"] = .number(backoff.rounded()) }
        return .object(o)
    }
}
