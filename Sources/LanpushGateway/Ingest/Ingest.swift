import LanpushCore
import Logging

/// The one way in: HA's relay body, `/v1/push` and the HA local push channel all arrive as an `IngestRequest`, are
/// de-duplicated here, and routed per target device (the README's routing table). Loop thread only.
///
/// - live updates and their `clear_notification`: the device's LAN sessions; the relay while it is gone;
/// - companion-app commands: the relay only, and only with relay credentials (else nothing is done);
/// - plain notifications, and a `clear_notification` whose tag names no activity (it clears a notification): the
///   device's `notifications` setting or the message's `data.lanpush.path` — `lan` (LAN first, the relay while
///   gone), `relay`, or `both` — so a clear follows the notification it clears.
///
/// Nothing goes twice on one path: a notification relayed at once is never drained to the relay again.
final class Ingest {
    /// What became of a payload for one device.
    struct Routed: Equatable {
        enum LAN: String {
            /// A live session of the device carries it.
            case delivered
            /// Kept for the device's sessions (none is live), or not for the LAN at all.
            case queued
            case none
        }

        var lan: LAN
        /// Handed to the relay path (now, or paced).
        var relay: Bool
        /// It needed the relay and the device has no relay credentials: nothing was done.
        var refused = false
    }

    enum Outcome: Equatable {
        /// Its `hass_confirm_id` was accepted within the window: not applied twice.
        case duplicate
        /// A push_token no client registered: proxied to the upstream relay, paced.
        case proxied
        /// A push_token no client registered, and proxying is off: nothing was done.
        case unknownToken
        /// A push_token no client registered, and its sender's address proxied its share this minute.
        case proxyThrottled(wait: Double)
        /// Per target: the device's id and what became of it (`nil`: no such device).
        case routed([(target: String, routed: Routed?)])

        static func == (a: Outcome, b: Outcome) -> Bool {
            switch (a, b) {
            case (.duplicate, .duplicate), (.proxied, .proxied), (.unknownToken, .unknownToken): return true
            case (.proxyThrottled(let x), .proxyThrottled(let y)): return x == y
            case (.routed(let x), .routed(let y)): return x.map(\.target) == y.map(\.target) && x.map(\.routed) == y.map(\.routed)
            default: return false
            }
        }
    }

    /// How long a `hass_confirm_id` is remembered: HA re-posts to the push_url 10 s after an unconfirmed event.
    static let confirmWindow: Double = 60

    private let directory: DeviceDirectory
    private let relay: RelayHandOver
    private let publish: PublishStep
    private let metrics: GatewayMetrics
    private let logger: Logger
    /// Confirm ids accepted within the window, with when (the tick forgets older ones).
    private(set) var recentConfirmIds: [String: Double] = [:]
    /// The relay body the request being applied built last, and what of its device it was built from.
    private var lastRelayBody: RelayBodyMemo?
    /// Counted and logged once per device, tag and field.
    let warnings: PayloadWarnings

    /// Per `field|rule`, the warnings counted so far.
    var coercions: [String: Int] { warnings.counts }

    init(directory: DeviceDirectory, relay: RelayHandOver, publish: PublishStep, metrics: GatewayMetrics, logger: Logger) {
        self.directory = directory
        self.relay = relay
        self.publish = publish
        self.metrics = metrics
        self.logger = logger
        self.warnings = PayloadWarnings(logger: logger)
    }

    /// Applies one accepted payload. The caller answers once the turn's commit completes (`Journal.whenCommitted`).
    func submit(_ request: IngestRequest) -> Outcome {
        let now = request.acceptedAt
        // A push_token no device registered is decided first: nothing of it is kept when it is not proxied.
        if case .relayBody(let body, _, let peer) = request.source, directory.device(forPushToken: body.pushToken) == nil {
            switch relay.unknownTokens.admit(from: peer, now: now) {
            case .off: return .unknownToken
            case .throttled(let wait): return .proxyThrottled(wait: wait)
            case .proxy: break
            }
        }
        let confirmKey = confirmKey(of: request)
        if let key = confirmKey {
            if let seen = recentConfirmIds[key], now - seen < Self.confirmWindow { return .duplicate }
            if recentConfirmIds.count >= Self.maxConfirmIds { expire(now: now) }
            if recentConfirmIds.count >= Self.maxConfirmIds, let oldest = recentConfirmIds.min(by: { $0.value < $1.value })?.key {
                recentConfirmIds.removeValue(forKey: oldest)
            }
            recentConfirmIds[key] = now
        }
        stampedStates += 1
        let request = request.stamped(stateID: stampedStates)
        let outcome = apply(request, now: now)
        // Refused everywhere (it needed relay credentials the device lacks): nothing was done, so a re-post of the same
        // id — HA's to the push_url, once the client registered — is a new attempt, not a duplicate to answer 201.
        if let key = confirmKey, case .routed(let results) = outcome,
           results.allSatisfy({ $0.routed?.refused ?? true }) {
            recentConfirmIds[key] = nil
        }
        return outcome
    }

    /// The last state id stamped on a request (`IngestRequest.stamped`).
    private var stampedStates: UInt64 = 0

    /// Confirm ids remembered at most (HA sends a few a minute; a flood of made-up ones cannot grow the table).
    static let maxConfirmIds = 4096

    /// What a `hass_confirm_id` is remembered under: per device (HA reuses one notify call's data dict for every
    /// target, so several devices get the same id, each of them once), or per push_token for a proxied body. An id
    /// longer than HA's (32 hex digits) is not remembered.
    private func confirmKey(of request: IngestRequest) -> String? {
        guard let id = request.confirmId, !id.isEmpty, id.utf8.count <= 128 else { return nil }
        switch request.source {
        case .relayBody(let body, _, _):
            return "\(directory.device(forPushToken: body.pushToken)?.id ?? "push_token:" + body.pushToken)|\(id)"
        case .homeAssistant(let device, _): return "\(device)|\(id)"
        case .native: return id
        }
    }

    private func apply(_ request: IngestRequest, now: Double) -> Outcome {
        defer { lastRelayBody = nil }  // a body is reused within one request only
        switch request.source {
        case .relayBody(let body, let path, _):
            guard let device = directory.device(forPushToken: body.pushToken) else {
                relay.proxy(body, command: request.command, path: path, acceptedAt: now)
                return .proxied
            }
            let webhookId = body.registrationInfo["webhook_id"]?.stringValue
            return .routed([(device.id, route(request, to: device, webhookId: webhookId, path: path))])
        case .native(let targets):
            return .routed(targets.map { id in (id, directory[id].map { route(request, to: $0, webhookId: nil) }) })
        case .homeAssistant(let id, let webhookId):
            return .routed([(id, directory[id].map { route(request, to: $0, webhookId: webhookId) })])
        }
    }

    /// Forgets confirm ids past the window (the loop's tick).
    func expire(now: Double) {
        if !recentConfirmIds.isEmpty { recentConfirmIds = recentConfirmIds.filter { now - $0.value < Self.confirmWindow } }
    }

    // MARK: Routing

    private func route(_ request: IngestRequest, to device: DeviceRecord, webhookId: String?, path: String? = nil) -> Routed {
        let url = relay.isReachable(device) ? relay.url(for: device, path: path) : nil
        let body = relayBody(of: request, for: device)
        let routed: Routed
        switch request.command {
        case .command:
            guard let url else { return Routed(lan: .none, relay: false, refused: true) }
            relay.relayNow(body.built(request), of: device, url: url)
            routed = Routed(lan: .none, relay: true)
        case .end(let end) where !(device.ledger.activities[end.tag].map { $0.phase != .dismissed } ?? false):
            routed = routeNotification(request, to: device, webhookId: webhookId, body: body, url: url)
        case .notification:
            routed = routeNotification(request, to: device, webhookId: webhookId, body: body, url: url)
        case .liveUpdate, .end:
            let relayed = apply(request, to: device, webhookId: webhookId, body: body, handOver: true, url: url)
            routed = Routed(lan: device.isConnected ? .delivered : .queued, relay: relayed)
        }
        if !routed.refused { warnings.note(request.accepted.warnings, device: device.id, tag: request.command.tag) }
        return routed
    }

    private func routeNotification(
        _ request: IngestRequest, to device: DeviceRecord, webhookId: String?, body: RelayBodyMemo, url: String?
    ) -> Routed {
        let way = device.notifications.path(override: request.accepted.path, hasRelayCredentials: url != nil)
        if way == .relay {
            guard let url else { return Routed(lan: .none, relay: false, refused: true) }
            relay.relayNow(body.built(request), of: device, url: url)
            return Routed(lan: .none, relay: true)
        }
        // Sent to both at once: relayed now, so no drain sends it again (its body is not kept).
        let relayed = apply(request, to: device, webhookId: webhookId, body: body, handOver: way != .both, url: url)
        let lan: Routed.LAN = device.isConnected ? .delivered : .queued
        if way == .both {
            guard let url else { return Routed(lan: lan, relay: false) }
            relay.relayNow(body.built(request), of: device, url: url)
            return Routed(lan: lan, relay: true)
        }
        return Routed(lan: lan, relay: relayed)
    }

    /// The request's relay body for `device`: the previous device's when it depends on nothing that differs (an
    /// update to 100 LAN devices built the same body 100 times, ~5 % of the server's time in that fan-out). Built only
    /// if the relay path takes it now; otherwise kept deferred for a later hand-over.
    private func relayBody(of request: IngestRequest, for device: DeviceRecord) -> RelayBodyMemo {
        let inputs = IngestRequest.RelayInputs(request, device)
        if let last = lastRelayBody, last.inputs == inputs { return last }
        let memo = RelayBodyMemo(inputs: inputs, deferred: request.deferredRelayBody(inputs))
        lastRelayBody = memo
        return memo
    }

    /// The ledger takes the command (and keeps `body` on the activity it changes, for a later drain), and the publish
    /// step takes its changes — handing them over to the relay path (`handOver`: LAN first, the relay while gone).
    /// Returns whether anything went to the relay.
    private func apply(
        _ request: IngestRequest, to device: DeviceRecord, webhookId: String?, body: RelayBodyMemo, handOver: Bool,
        url: String?
    ) -> Bool {
        let dropped = device.ledger.droppedNotificationTotal
        let changes = device.ledger.apply(request.command, now: request.acceptedAt, webhookId: webhookId, relayBody: body.deferred)
        if device.ledger.droppedNotificationTotal > dropped {
            let count = device.ledger.droppedNotificationTotal - dropped
            metrics.notificationsDropped.increment(by: Int64(count))
            logger.warning("notification queue full: oldest undelivered notifications dropped", metadata: [
                "device": "\(device.id)", "dropped": "\(count)", "queue_bytes": "\(device.ledger.notificationBytes)",
            ])
        }
        return publish.publish(
            changes, of: device, relay: handOver ? .request(body: body.deferred, built: { body.built(request) }, url: url) : .none)
    }
}

/// The relay body of the request `Ingest` is applying, for devices with the same `inputs`: kept deferred for the
/// ledger, built once if the relay path takes it now. A class, read through one reference: a tuple or struct would be
/// copied out at every device of a fan-out, its strings and dictionaries retained and released.
private final class RelayBodyMemo {
    let inputs: IngestRequest.RelayInputs
    let deferred: DeferredJSON
    private var body: RelayBody?

    init(inputs: IngestRequest.RelayInputs, deferred: DeferredJSON) {
        self.inputs = inputs
        self.deferred = deferred
    }

    /// The body built, once: `request` is the one the memo was made for.
    func built(_ request: IngestRequest) -> RelayBody {
        if let body { return body }
        let built = request.relayBody(inputs)
        body = built
        return built
    }
}
