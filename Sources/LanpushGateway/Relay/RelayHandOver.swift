import LanpushCore
import LanpushStore
import Logging

/// Sends relay requests off the loop; the completion runs on the loop thread.
protocol RelayTransport: AnyObject {
    func send(_ item: RelayItem, completion: @escaping (RelayResponse) -> Void)
}

/// The relay path: a device with no live session gets its traffic through HA's push relay (or, when it names one,
/// through an HA notify action: its `fallback`), paced by `RelayPacer` for Apple's limits. The relay's state lives
/// here and on each device's `DeviceRelayState`. Loop thread only.
///
/// While a device has a subscribed session its live changes go to the LAN only; from the moment its last session is
/// gone they go to the relay (starting with whatever that session had not acknowledged). When a session comes back,
/// what waits for the relay is cancelled — and once that session has stayed `relay.hand_back_after` seconds, every
/// activity the relay path *started* on the phone (the companion app's own Live Activity, a second one beside the LAN
/// client's) is ended there, dismissed: left alone it would stay on the Lock Screen frozen at its last relayed state
/// until iOS drops it hours later, and feeding it the LAN's states instead would spend the relay's quota on a
/// duplicate. The wait keeps a phone at the edge of the Wi-Fi, whose session drops and returns, from ending and
/// restarting it (and spending its push-to-start budget) at every flap: a session that drops sooner leaves it running
/// and the relay path goes on updating it. An activity that was the LAN client's own (it reported its token, so relay
/// updates addressed it) is never ended: the client shows it. A request already in flight may complete (relay
/// requests are at-least-once); one that started an activity is ended too.
final class RelayHandOver {
    static let iosPath = "/api/sendPushNotification"
    static let androidPath = "/api/sendPush/android/v1"

    let config: GatewayConfig.Relay
    let directory: DeviceDirectory
    let journal: Journal
    let events: DeviceEvents
    let metrics: GatewayMetrics
    let logger: Logger
    let clock: () -> Double
    var pacer: RelayPacer
    /// How requests leave; `nil`: they stay queued (tests drive the pacer by hand).
    var transport: RelayTransport?
    /// Whether HA notify actions can be called (HA's REST API is configured): a device's `fallback` is its relay
    /// target only then.
    var actionsAvailable = false
    /// Relay bodies for push_tokens no device registered (`relay.proxy_unknown_tokens`).
    let unknownTokens: UnknownTokenProxy
    var unknownTokenSeq: UInt64 = 0
    var persistedGeneration: UInt64 = 0
    /// The relay's own last word on `remaining`, per push_token (for the `rateLimits` of lanpush's answers); bounded
    /// as the counters are.
    var remainingByToken: [String: Int] = [:]
    /// lanpush's own per-push_token counters for the UTC day, answered as the relay's `rateLimits`.
    var counters: RateLimitCounters

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
        counters = RateLimitCounters(maximum: config.quota)
        var limits = RelayLimits(
            minUpdateInterval: config.minUpdateInterval, startsPerHour: config.startsPerHour,
            quotaReserve: config.quotaReserve)
        limits.quotaFloor = min(limits.quotaFloor, config.quotaReserve / 5)
        limits.dailyQuota = config.quota
        limits.maxHold = config.maxHold
        pacer = RelayPacer(limits: limits)
    }

    // MARK: Where it goes

    /// A device's relay target: its `fallback` HA action (when HA's REST API is configured), else the push_url its
    /// client registered, else the configured upstream.
    func url(for device: DeviceRecord, path: String? = nil) -> String? {
        if let action = device.fallback, actionsAvailable { return RelayItem.actionScheme + action }
        guard let registration = device.relay.registration else { return nil }
        if let url = registration.pushURL, !url.isEmpty { return url }
        let appId = registration.registrationInfo["app_id"]?.stringValue ?? ""
        return upstreamURL(path: path ?? (appId.hasPrefix(RelayItem.androidAppIdPrefix) ? Self.androidPath : Self.iosPath))
    }

    func upstreamURL(path: String) -> String {
        var base = config.upstream
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// Whether the device has a relay path the relay has not refused (a registered push token, or a fallback).
    func isReachable(_ device: DeviceRecord) -> Bool {
        url(for: device) != nil && !pacer.invalidTokenDevices.contains(device.id)
    }

    // MARK: Queueing

    /// The relay side of a device's published changes: each notification's relay body is kept (for a later drain;
    /// an activity's is kept on it by the ledger) and, while the device is gone, the changes go to the relay now.
    /// Returns whether anything went to the relay.
    func handOver(_ changes: [Change], of device: DeviceRecord, body: DeferredJSON, built: () -> RelayBody, url: String?) -> Bool {
        for change in changes where !(change.isSlotChange && change.tag != nil) {
            device.relay.notificationBodies.keep(body, for: change.seq)
        }
        // Those of notifications acknowledged (or dropped) since, usually one.
        device.relay.notificationBodies.forget(before: device.ledger.notifications.first?.seq ?? device.ledger.seq + 1)
        guard !device.isConnected, let url, !changes.isEmpty else { return false }
        // A clear_notification that ended an activity makes an end and a clear: one request to the relay.
        let ends = changes.contains { $0.kind == .end }
        relay(ends ? changes.filter { $0.kind != .clear } : changes, of: device, body: built(), url: url)
        return true
    }

    /// Queues the relay side of accepted changes of a gone device: one body serves every change its request made.
    func relay(_ changes: [Change], of device: DeviceRecord, body: RelayBody, url: String) {
        if body.templateRemoved { metrics.relayTemplatesStripped.increment() }
        for change in changes {
            guard let kind = RelayItem.Kind(change.kind) else { continue }
            submit(RelayItem(device: device.id, tag: change.tag, kind: kind, url: url, body: body.json, seq: change.seq))
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
        let body = RelayBody.forwarding(request.raw, acceptedAt: now)
        if body.templateRemoved { metrics.relayTemplatesStripped.increment() }
        let item = RelayItem(
            device: "push_token:\(request.pushToken)", tag: command.tag, kind: kind, url: upstreamURL(path: path),
            body: body.json, seq: unknownTokenSeq)
        submit(item)
        pump()
    }

    // MARK: Hand-over

    /// The device's last session just went away: everything it had not acknowledged goes to the relay. An activity
    /// the relay path is not showing on the phone (and whose own token no client reported) starts there, with its
    /// current state; one it shows gets what the relay has not carried of it yet.
    func deviceGone(_ device: DeviceRecord) {
        device.relay.handBackAt = nil  // back too briefly: what the relay shows goes on being updated there
        guard let url = url(for: device) else { return }
        let now = clock()
        for activity in device.ledger.activities.values.sorted(by: { $0.lastSeq < $1.lastSeq }) {
            guard let body = activity.relayBody else { continue }
            let tag = activity.tag
            let over = activity.phase == .ended || activity.phase == .dismissed
            let kind: RelayItem.Kind
            if device.relay.shown.contains(tag) {
                guard activity.lastSeq > device.relay.relayedSeq[tag] ?? 0 else { continue }
                kind = over ? .end : .update
            } else if device.relay.activityToken(tag, now: now) != nil {
                // The client's own activity, addressed by its token: it has what a LAN session acknowledged.
                guard activity.lastSeq > max(device.deliveredSeq, device.relay.relayedSeq[tag] ?? 0) else { continue }
                kind = over ? .end : .update
            } else {
                guard activity.phase.isLive else { continue }  // nothing to show, nothing to end
                kind = .start
            }
            submit(RelayItem(device: device.id, tag: tag, kind: kind, url: url, body: body, seq: activity.lastSeq))
        }
        for queued in device.ledger.notifications where queued.seq > device.deliveredSeq {
            // The clear that came with an activity's end is the end's business (above): nothing to clear on a phone
            // the relay path never showed it on.
            if case .clear(let tag) = queued.body, let activity = device.ledger.activities[tag], !activity.phase.isLive,
               !device.relay.shown.contains(tag)
            {
                continue
            }
            guard let body = device.relay.notificationBodies[queued.seq]?.value else { continue }
            submit(RelayItem(device: device.id, tag: nil, kind: .notification, url: url, body: body, seq: queued.seq))
        }
        pump()
    }

    /// A session of the device subscribed (it was on no other): it takes its activities back. What waits is
    /// cancelled, and what the relay path started on the phone is ended there, dismissed at once.
    func deviceBack(_ device: DeviceRecord) {
        let cancelled = pacer.cancel(device: device.id, now: clock())
        if !cancelled.isEmpty {
            logger.info("device back on the LAN: relay items cancelled", metadata: ["device": "\(device.id)", "items": "\(cancelled.count)"])
        }
        if !device.relay.shown.isEmpty { device.relay.handBackAt = clock() + config.handBackAfter }
        syncOutbox()
    }

    /// The loop's tick, per device: one whose LAN session stayed long enough takes its activities back — what the
    /// relay path started on the phone is ended there.
    func handBack(_ device: DeviceRecord, now: Double) {
        guard let at = device.relay.handBackAt, at <= now else { return }
        device.relay.handBackAt = nil
        guard device.isConnected, !device.relay.shown.isEmpty else { return }
        // A tag whose activity token the client reported since is the client's own now: left to it.
        for tag in device.relay.shown where device.relay.activityToken(tag, now: now) != nil {
            device.relay.shown.remove(tag)
            journal.record(device: device)
        }
        guard !device.relay.shown.isEmpty else { return }
        logger.info("device back on the LAN: its relay activities are ended on the phone", metadata: [
            "device": "\(device.id)", "tags": "\(device.relay.shown.sorted().joined(separator: ","))",
        ])
        for tag in device.relay.shown.sorted() { endShown(tag, of: device) }
    }

    /// Ends on the phone an activity the relay path started there (the LAN has it now, or it ended).
    func endShown(_ tag: String, of device: DeviceRecord) {
        guard isReachable(device), let url = url(for: device) else { return }
        let body = Self.clearBody(of: device.ledger.activities[tag]?.relayBody ?? .object([:]), tag: tag, device: device)
        submit(RelayItem(device: device.id, tag: tag, kind: .end, url: url, body: body, seq: device.ledger.seq))
    }

    /// Ends the gateway makes itself (the API's `DELETE`, Apple's 8 h ceiling, a `/v1/push` clear) come with no HA
    /// body: from now on the tag's relay body is the `clear_notification` HA would send for it, so a drain ends the
    /// activity on the phone instead of repeating its content. A gone device gets the end now when the phone shows
    /// the activity (the relay started it, or it is the client's own, addressed by its token).
    func ended(_ changes: [Change], of device: DeviceRecord) {
        var ends = [(tag: String, seq: UInt64, body: JSONValue)]()
        let now = clock()
        for change in changes where change.kind == .end {
            guard let tag = change.tag, let body = device.ledger.activities[tag]?.relayBody else { continue }
            let clear = Self.clearBody(of: body, tag: tag, device: device)
            let onPhone = device.relay.shown.contains(tag) || device.relay.activityToken(tag, now: now) != nil
            if onPhone && body["message"]?.stringValue != PayloadInterpreter.clearCommand { ends.append((tag, change.seq, clear)) }
            device.ledger.setRelayBody(DeferredJSON(clear), of: tag)
        }
        guard !ends.isEmpty, !device.isConnected, isReachable(device), let url = url(for: device) else { return }
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
            && activity.lastSeq > max(device.deliveredSeq, device.relay.relayedSeq[activity.tag] ?? 0)
    }

    /// HA's `clear_notification` of `tag`, addressed as `body` was (its push token and registration, from the
    /// device's registration when `body` has none). A `live_activity_token` HA gave with an update or end is the
    /// activity's own and addresses the end (`event: end`); one it gave with a start is the push-to-start token, which
    /// ends nothing (the relay would send an update to it) — without a token the clear goes as the companion app's
    /// command, which ends the activity with that tag (home-assistant/iOS `HandlerClearNotification`).
    static func clearBody(of body: JSONValue, tag: String, device: DeviceRecord? = nil) -> JSONValue {
        guard case .object(let o) = body else { return body }
        var data: [String: JSONValue] = ["tag": .string(tag)]
        var clear: [String: JSONValue] = ["message": .string(PayloadInterpreter.clearCommand)]
        for key in ["push_token", "registration_info"] where o[key] != nil { clear[key] = o[key] }
        let event = o["data"]?["event"]?.stringValue
        if let token = o["live_activity_token"], !token.isNull, event == LiveEvent.update.rawValue || event == LiveEvent.end.rawValue {
            clear["live_activity_token"] = token
            data["event"] = .string(LiveEvent.end.rawValue)
        }
        clear["data"] = .object(data)
        if clear["push_token"] == nil, let registration = device?.relay.registration {
            clear["push_token"] = .string(registration.pushToken)
            clear["registration_info"] = .object(registration.registrationInfo)
        }
        return .object(clear)
    }

    /// The device was removed: nothing more goes to the relay for it.
    func forget(_ device: DeviceRecord) {
        _ = pacer.cancel(device: device.id, now: clock())
        syncOutbox()
    }

    /// The client registered new relay credentials: a token the relay refused may be good again.
    func revalidate(_ device: DeviceRecord) {
        pacer.revalidate(device: device.id, now: clock())
        if device.relay.tokenInvalid != nil {
            device.relay.tokenInvalid = nil
            journal.record(device: device)
        }
    }
}
