import LanpushCore
import LanpushStore
import Logging

/// Sends relay requests off the loop; the completion runs on the loop thread.
protocol RelayTransport: AnyObject {
    func send(_ item: RelayItem, completion: @escaping (RelayResponse) -> Void)
}

/// The relay path: a device with no live session gets its traffic through HA's push relay, paced by `RelayPacer`
/// for Apple's limits. Loop thread only.
///
/// "No double delivery": while a device has a session its live changes go to the LAN only; from the moment its
/// last session is gone they go to the relay (starting with whatever that session had not acknowledged); when it
/// comes back, pending relay items are cancelled and the session gets the current state. A request already in
/// flight may complete (relay requests are at-least-once).
final class RelayHandOver {
    static let iosPath = "/api/sendPushNotification"
    static let androidPath = "/api/sendPush/android/v1"

    private let config: GatewayConfig.Relay
    private let directory: DeviceDirectory
    private let journal: Journal
    private let events: DeviceEvents
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let clock: () -> Double
    private(set) var pacer: RelayPacer
    /// How requests leave; `nil`: they stay queued (tests drive the pacer by hand).
    var transport: RelayTransport?
    /// Relay bodies for push_tokens no device registered (`relay.proxy_unknown_tokens`).
    let unknownTokens: UnknownTokenProxy
    private var unknownTokenSeq: UInt64 = 0
    private var persistedGeneration: UInt64 = 0
    /// The relay's own last word on `remaining`, per push_token (for the `rateLimits` of lanpush's answers).
    private(set) var remainingByToken: [String: Int] = [:]

    init(
        config: GatewayConfig.Relay, directory: DeviceDirectory, journal: Journal, events: DeviceEvents,
        metrics: GatewayMetrics, logger: Logger, clock: @escaping () -> Double
    ) {
        self.config = config
        self.directory = directory
        self.journal = journal
        self.events = events
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        unknownTokens = UnknownTokenProxy(enabled: config.proxyUnknownTokens, perMinute: config.proxyPerMinute)
        var limits = RelayLimits(
            minUpdateInterval: config.minUpdateInterval, startsPerHour: config.startsPerHour,
            quotaReserve: config.quotaReserve)
        limits.quotaFloor = min(limits.quotaFloor, config.quotaReserve / 5)
        limits.dailyQuota = config.quota
        limits.maxHold = config.maxHold
        pacer = RelayPacer(limits: limits)
    }

    // MARK: Where it goes

    /// A device's relay target: the push_url its client registered, else the configured upstream.
    func url(for device: DeviceRecord, path: String? = nil) -> String? {
        guard let registration = device.registration else { return nil }
        if let url = registration.pushURL, !url.isEmpty { return url }
        let appId = registration.registrationInfo["app_id"]?.stringValue ?? ""
        return upstreamURL(path: path ?? (appId.hasPrefix(RelayItem.androidAppIdPrefix) ? Self.androidPath : Self.iosPath))
    }

    func upstreamURL(path: String) -> String {
        var base = config.upstream
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// Whether the device has relay credentials the relay has not refused (a registered push token, not 403'd).
    func isReachable(_ device: DeviceRecord) -> Bool {
        url(for: device) != nil && !pacer.invalidTokenDevices.contains(device.id)
    }

    // MARK: Queueing

    /// Queues the relay side of accepted changes of a gone device: one body serves every change its request made.
    func relay(_ changes: [Change], of device: DeviceRecord, body: RelayBody, url: String) {
        if body.templateRemoved { metrics.relayTemplatesStripped.increment() }
        for change in changes {
            guard let kind = RelayItem.Kind(change.kind) else { continue }
            let json = kind == .start ? withPushToStartToken(body.json, device: device) : body.json
            submit(RelayItem(device: device.id, tag: change.tag, kind: kind, url: url, body: json, seq: change.seq))
        }
        pump()
    }

    /// Relays a body now, outside the ledger (a companion-app command, or a notification for the relay path).
    func relayNow(_ body: RelayBody, of device: DeviceRecord, url: String) {
        if body.templateRemoved { metrics.relayTemplatesStripped.increment() }
        submit(RelayItem(device: device.id, tag: nil, kind: .notification, url: url, body: body.json, seq: device.ledger.seq))
        pump()
    }

    /// Traffic for a push_token no client registered (admitted by `unknownTokens`): proxied to the upstream, paced
    /// per token.
    func proxy(_ request: RelayPushRequest, command: PushCommand, path: String, acceptedAt now: Double) {
        let kind = unknownTokens.kind(of: command, token: request.pushToken, now: now)
        unknownTokenSeq += 1
        let body = RelayBody.forwarding(
            request.raw, acceptedAt: now, liveActivityToken: request.liveActivityToken,
            event: request.notification.data["event"]?.stringValue.flatMap(LiveEvent.init(rawValue:)))
        if body.templateRemoved { metrics.relayTemplatesStripped.increment() }
        let item = RelayItem(
            device: "push_token:\(request.pushToken)", tag: command.tag, kind: kind, url: upstreamURL(path: path),
            body: body.json, seq: unknownTokenSeq)
        submit(item)
        pump()
    }

    /// A start with no activity token to address goes by the device's push-to-start token, when its client reported
    /// one (`push_to_start_token` frame): top level, beside where HA puts `live_activity_token`.
    private func withPushToStartToken(_ body: JSONValue, device: DeviceRecord) -> JSONValue {
        guard let token = device.pushToStartToken, case .object(var o) = body,
            o["live_activity_token"] == nil || o["live_activity_token"] == .null, o["push_to_start_token"] == nil
        else { return body }
        o["push_to_start_token"] = .string(token)
        return .object(o)
    }

    private func submit(_ item: RelayItem) {
        let result = pacer.submit(item, now: clock())
        if !result.accepted {
            metrics.relayDropped.increment()
            loggedDrop([item], "the relay refused the device's push token (403)")
        }
        if result.superseded > 0 { metrics.coalesced.increment(by: Int64(result.superseded)) }
        if !result.dropped.isEmpty {
            metrics.relayDropped.increment(by: Int64(result.dropped.count))
            loggedDrop(result.dropped, "the relay outbox is full")
        }
    }

    /// Every accepted change the relay path gives up on is counted (`lanpush_relay_dropped_total`) and logged here.
    private func loggedDrop(_ items: [RelayItem], _ why: String) {
        for (device, dropped) in Dictionary(grouping: items, by: \.device) {
            logger.warning("relay items dropped", metadata: [
                "device": "\(device)", "items": "\(dropped.count)", "why": "\(why)",
                "tags": "\(Set(dropped.compactMap(\.tag)).sorted().joined(separator: ","))",
            ])
        }
    }

    // MARK: Hand-over

    /// The device's last session just went away: everything it had not acknowledged goes to the relay.
    func deviceGone(_ device: DeviceRecord) {
        guard let url = url(for: device) else { return }
        for activity in device.ledger.activities.values.sorted(by: { $0.lastSeq < $1.lastSeq }) {
            // What the phone has: what a LAN session acknowledged, or what the relay already delivered of the tag.
            let has = max(device.deliveredSeq, device.relayedSeq[activity.tag] ?? 0)
            guard activity.lastSeq > has, let body = activity.relayBody else { continue }
            let kind: RelayItem.Kind =
                activity.generation > has ? .start : (activity.phase == .ended || activity.phase == .dismissed ? .end : .update)
            if kind == .start, !activity.phase.isLive { continue }  // started and ended unseen: nothing to show
            let json = kind == .start ? withPushToStartToken(body, device: device) : body
            submit(RelayItem(device: device.id, tag: activity.tag, kind: kind, url: url, body: json, seq: activity.lastSeq))
        }
        for queued in device.ledger.notifications where queued.seq > device.deliveredSeq {
            guard let body = device.relayNotificationBodies[queued.seq]?.value else { continue }
            submit(RelayItem(device: device.id, tag: nil, kind: .notification, url: url, body: body, seq: queued.seq))
        }
        pump()
    }

    /// Ends the gateway makes itself (the API's `DELETE`, Apple's 8 h ceiling) come with no HA body: from now on the
    /// tag's relay body is the `clear_notification` HA would send for it, so a drain ends the activity on the phone
    /// instead of repeating its content. `relayIfGone`: a gone device gets the end now (else its phone shows the
    /// activity until its own 8 h); an activity the relay already ends is not ended twice.
    func ended(_ changes: [Change], of device: DeviceRecord, relayIfGone: Bool) {
        var ends = [(tag: String, seq: UInt64, body: JSONValue)]()
        for change in changes where change.kind == .end {
            guard let tag = change.tag, let body = device.ledger.activities[tag]?.relayBody else { continue }
            let clear = Self.clearBody(of: body, tag: tag)
            if body["message"]?.stringValue != PayloadInterpreter.clearCommand { ends.append((tag, change.seq, clear)) }
            device.ledger.setRelayBody(DeferredJSON(clear), of: tag)
        }
        guard relayIfGone, !ends.isEmpty, !device.isConnected, isReachable(device), let url = url(for: device) else { return }
        for end in ends {
            submit(RelayItem(device: device.id, tag: end.tag, kind: .end, url: url, body: end.body, seq: end.seq))
        }
        pump()
    }

    /// A dismissed activity whose end the device's LAN sessions have not acknowledged (nor the relay carried): should
    /// they go away without it, `deviceGone` sends it to the relay — so it must stay until then. Bounded by the ack
    /// timeout: a session that never acknowledges it is closed, and the drain takes it.
    func owesEnd(of activity: Activity, on device: DeviceRecord) -> Bool {
        activity.phase == .dismissed && device.isConnected && activity.hasRelayBody && isReachable(device)
            && activity.lastSeq > max(device.deliveredSeq, device.relayedSeq[activity.tag] ?? 0)
    }

    /// HA's `clear_notification` of `tag`, addressed as `body` was.
    static func clearBody(of body: JSONValue, tag: String) -> JSONValue {
        guard case .object(let o) = body else { return body }
        var clear: [String: JSONValue] = ["message": .string(PayloadInterpreter.clearCommand), "data": ["tag": .string(tag)]]
        for key in ["push_token", "registration_info", "live_activity_token"] where o[key] != nil { clear[key] = o[key] }
        return .object(clear)
    }

    /// A session of the device subscribed (it was on no other): it takes its slots back.
    func deviceBack(_ device: DeviceRecord) {
        let cancelled = pacer.cancel(device: device.id, now: clock())
        if !cancelled.isEmpty {
            logger.info("device back on the LAN: relay items cancelled", metadata: ["device": "\(device.id)", "items": "\(cancelled.count)"])
        }
        syncOutbox()
    }

    /// The device was removed: nothing more goes to the relay for it.
    func forget(_ device: DeviceRecord) {
        _ = pacer.cancel(device: device.id, now: clock())
        syncOutbox()
    }

    /// The client registered new relay credentials: a token the relay refused may be good again.
    func revalidate(_ device: DeviceRecord) {
        pacer.revalidate(device: device.id, now: clock())
    }

    // MARK: Sending

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

    /// What waited in the pacer (or drains from the bodies HA sent earlier) goes out to the push token and URL the
    /// device has registered by now: an app whose token was rotated while the item waited would otherwise have it
    /// sent to a token its push service no longer takes. Only the address changes; the pacer still knows the item
    /// as it was queued.
    private func addressedAsNow(_ item: RelayItem) -> RelayItem {
        guard !item.device.hasPrefix("push_token:"), let device = directory[item.device],
              let registration = device.registration, case .object(var body) = item.body,
              let queuedFor = body["push_token"]?.stringValue, queuedFor != registration.pushToken
        else { return item }
        var item = item
        body["push_token"] = .string(registration.pushToken)
        item.body = .object(body)
        if let url = url(for: device) { item.url = url }
        return item
    }

    private func answered(_ item: RelayItem, _ response: RelayResponse) {
        let now = clock()
        let completion = pacer.complete(item, outcome: response.outcome, now: now)
        if case .success = response.outcome, let device = directory[item.device] { delivered(item, to: device) }
        metrics.relayAnswer(response.status)
        if let remaining = response.rateLimits.remaining, let token = token(of: item) {
            remainingByToken[token] = remaining
        }
        let why = Self.refusal(response)
        if completion.tokenInvalidated {
            metrics.relayInvalidatedTokens.increment()
            logger.warning("relay refused the device's push token: relay path stopped for it until it registers again",
                metadata: ["device": "\(item.device)", "why": "\(why)"])
        }
        if !completion.dropped.isEmpty || !completion.overflow.isEmpty {
            metrics.relayDropped.increment(by: Int64(completion.dropped.count + completion.overflow.count))
            loggedDrop(completion.dropped, why)
            loggedDrop(completion.overflow, "the relay outbox is full")
        }
        if response.status == nil || (response.status ?? 0) >= 500 {
            logger.info("relay request failed; retrying with backoff", metadata: [
                "device": "\(item.device)", "error": "\(response.error.map { "\($0)" } ?? "HTTP \(response.status ?? 0)")",
            ])
        }
        metrics.relayInvalidTokens.record(pacer.invalidTokenDevices.count)
        // The answer's rateLimits (remaining, resetsAt), or a 403, changed what the device's relay path looks like.
        if let device = directory[item.device] { events.changed(device) }
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

    /// The relay carried `item` to the phone: a later drain must not send it again.
    private func delivered(_ item: RelayItem, to device: DeviceRecord) {
        if item.isSlotItem, let tag = item.tag {
            device.relayedSeq[tag] = max(device.relayedSeq[tag] ?? 0, item.seq)
        } else if device.relayNotificationBodies[item.seq]?.value == item.body {
            // (A command relayed now carries the ledger's seq too; only the queued notification's own body matches.)
            device.relayNotificationBodies.remove(item.seq)
        }
    }

    private func token(of item: RelayItem) -> String? {
        if item.device.hasPrefix("push_token:") { return String(item.device.dropFirst("push_token:".count)) }
        return directory[item.device]?.registration?.pushToken
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

    /// Brings back the outbox of the previous run (in its order).
    func restore(_ rows: [OutboxRow]) {
        let items = rows.sorted { (Int($0.slot.split(separator: "|").first ?? "") ?? 0) < (Int($1.slot.split(separator: "|").first ?? "") ?? 0) }
            .compactMap { row -> RelayItem? in
                guard let kind = RelayItem.Kind(rawValue: row.kind) else { return nil }
                let tag = row.slot.split(separator: "|", maxSplits: 1).dropFirst().first.map(String.init)
                return RelayItem(device: row.deviceId, tag: tag?.isEmpty == false ? tag : nil, kind: kind, url: row.url, body: row.body, seq: row.seq)
            }
        guard !items.isEmpty else { return }
        pacer.restore(items, now: clock())
        for item in items where item.device.hasPrefix("push_token:") { unknownTokenSeq = max(unknownTokenSeq, item.seq) }
        persistedGeneration = pacer.generation
        logger.info("relay outbox restored", metadata: ["items": "\(items.count)"])
    }

    /// The relay's view of a device, for `GET /v1/devices`.
    func status(of device: String) -> JSONValue? {
        guard let status = pacer.status(of: device, now: clock()) else { return nil }
        var o: [String: JSONValue] = [
            "token_invalid": .bool(status.tokenInvalid), "queued": .number(Double(status.queued)),
            "in_flight": .number(Double(status.inFlight)),
        ]
        if let remaining = status.remaining { o["remaining"] = .number(Double(remaining)) }
        if let resets = status.resetsAt { o["resets_at"] = .number(resets.rounded()) }
        if let backoff = status.backoffUntil { o["backoff_until"] = .number(backoff.rounded()) }
        o["sent_today"] = .number(Double(status.sentToday))
        return .object(o)
    }
}
