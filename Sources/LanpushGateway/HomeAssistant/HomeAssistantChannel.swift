import LanpushCore
import Logging

/// What the link's parts (registrar, channel, sensors) ask of the link that wires them.
protocol HomeAssistantLinkContext: AnyObject {
    /// A device's registration or channel changed: observers and the gauges follow.
    func statusChanged(_ d: HomeAssistantDevice)
    /// Something failed for `d`: shown in its status; the link tries again in `seconds`.
    func failed(_ d: HomeAssistantDevice, _ why: String, retryIn seconds: Double)
    /// `d` holds a registration HA has (new, kept or updated): its channel and sensors may go.
    func registered(_ d: HomeAssistantDevice)
    /// HA does not know `d`'s webhook_id while running: look before registering again.
    func registrationMissing(_ d: HomeAssistantDevice)
}

/// Each exposed device's local push channel: one `mobile_app/push_notification_channel` subscription (with
/// `support_confirm`) per registration, every event through `Ingest` like any other door, and its confirm once the
/// event is committed. Loop thread only.
///
/// HA falls back to the push_url 10 s after an unconfirmed event and tears the channel down without telling the
/// client: a confirm HA answers with an error means that happened, so the channel subscribes again. It only ever
/// subscribes with its own registrations' webhook_ids (a second subscription on a webhook_id silently tears the
/// first down: a phone's channel would go).
final class HomeAssistantChannel {
    private let connection: HomeAssistantConnection
    private let core: GatewayCore
    private let logger: Logger
    weak var context: HomeAssistantLinkContext?

    init(connection: HomeAssistantConnection, core: GatewayCore, logger: Logger) {
        self.connection = connection
        self.core = core
        self.logger = logger
    }

    func subscribe(_ d: HomeAssistantDevice) {
        guard connection.state == .ready, let row = d.row, d.channel != .subscribing, d.channel != .subscribed else { return }
        set(d, .subscribing)
        connection.subscribe(
            "mobile_app/push_notification_channel", ["webhook_id": .string(row.webhookId), "support_confirm": true],
            then: { [weak self, weak d] id, answer in
                guard let self, let d else { return }
                self.subscribed(d, id: id, answer)
            },
            events: { [weak self, weak d] event in
                guard let self, let d else { return }
                self.received(event, device: d)
            })
    }

    /// The connection is gone: HA tore every channel down with it (their unconfirmed events went to the push_url).
    func lost(_ d: HomeAssistantDevice) {
        d.subscriptionId = nil
        d.pendingConfirms = 0
        d.channel = .down
    }

    func set(_ d: HomeAssistantDevice, _ channel: HomeAssistantDevice.Channel) {
        guard d.channel != channel else { return }
        d.channel = channel
        context?.statusChanged(d)
    }

    private func subscribed(_ d: HomeAssistantDevice, id: Int, _ answer: HomeAssistantConnection.Answer) {
        if answer.success {
            d.subscriptionId = id
            d.notFoundRetries = 0
            d.lastError = nil
            set(d, .subscribed)
            logger.info("local push channel subscribed", metadata: ["device": "\(d.id)", "notify_service": "\(d.notifyService)"])
        } else if answer.code == "not_found" {
            // Gone from HA (deleted there, or another HA), or HA has not loaded it yet: look before acting.
            logger.info("HA does not know this webhook_id; checking its config entries", metadata: ["device": "\(d.id)"])
            set(d, .down)
            context?.registrationMissing(d)
        } else {
            context?.failed(d, "subscription refused: \(answer.code) \(answer.message)", retryIn: answer.code == "unauthorized" ? 60 : 10)
        }
    }

    private func resubscribe(_ d: HomeAssistantDevice) {
        if let old = d.subscriptionId {
            connection.unsubscribe(old)
            d.subscriptionId = nil
        }
        set(d, .down)
        subscribe(d)
    }

    // MARK: Events

    private func received(_ event: [String: JSONValue], device d: HomeAssistantDevice) {
        core.metrics.haEvents.increment()
        d.events += 1
        d.lastEventAt = core.clock()
        let confirmId = event["hass_confirm_id"]?.stringValue
        switch apply(event, device: d) {
        case .applied(let delivered):
            logger.debug("notification from Home Assistant", metadata: ["device": "\(d.id)", "path": "\(delivered ? "lan" : "relay")"])
        case .duplicate:
            core.metrics.haEventsDuplicate.increment()
        case .rejected(let error):
            // Confirmed all the same: left unconfirmed, HA would post it to the push_url (rejected there too)
            // and drop the channel. Nothing of it reached a client, the store or the relay.
            d.rejected += 1
            core.metrics.haEventsRejected.increment()
            logger.warning("invalid notification from Home Assistant", metadata: [
                "device": "\(d.id)", "field": "\(error.field)", "error": "\(error.description)",
            ])
        }
        guard let confirmId, let webhookId = d.row?.webhookId else { return }
        d.pendingConfirms += 1
        let g = connection.generation
        // Confirm once it is committed: it is then stored and with the device's sessions (or, with none live,
        // on the relay path) — the same point at which the HTTP ingest answers.
        core.journal.whenCommitted { [weak self, weak d] committed in
            guard let self, let d, self.connection.generation == g, self.connection.isOpen else { return }
            guard committed else {
                d.pendingConfirms = max(0, d.pendingConfirms - 1)
                self.logger.error("not confirming a notification the store could not commit: HA will post it to the push_url", metadata: ["device": "\(d.id)"])
                // HA tears the channel down when it falls back (10 s): subscribe again after that.
                self.connection.later(11) { [weak self, weak d] in
                    guard let self, let d else { return }
                    self.resubscribe(d)
                }
                return
            }
            self.connection.request(
                "mobile_app/push_notification_confirm", ["webhook_id": .string(webhookId), "confirm_id": .string(confirmId)]
            ) { [weak self, weak d] answer in
                guard let self, let d else { return }
                self.confirmed(d, answer)
            }
        }
    }

    private func confirmed(_ d: HomeAssistantDevice, _ answer: HomeAssistantConnection.Answer) {
        d.pendingConfirms = max(0, d.pendingConfirms - 1)
        if answer.success {
            d.confirms += 1
            core.metrics.haConfirms.increment()
        } else {
            // HA no longer waits for it: the confirm came too late (it fell back to the push_url and tore the
            // channel down) or the channel is gone. Subscribe again.
            d.confirmErrors += 1
            core.metrics.haConfirmErrors.increment()
            logger.warning("Home Assistant rejected a confirm; re-subscribing", metadata: [
                "device": "\(d.id)", "code": "\(answer.code)", "message": "\(answer.message)",
            ])
            resubscribe(d)
        }
    }

    private enum EventOutcome {
        /// Accepted and applied; `delivered`: a live LAN session carries it (else the relay path does, or it waits).
        case applied(delivered: Bool)
        /// Its `hass_confirm_id` was accepted within the window (through the push_url fallback, or a re-send).
        case duplicate
        /// Invalid, or it needs relay credentials the device lacks: nothing reached a client, the store or the relay.
        case rejected(FieldError)
    }

    /// One event of the device's channel, through the same ingest as every other door.
    private func apply(_ event: [String: JSONValue], device d: HomeAssistantDevice) -> EventOutcome {
        // Read as HA's apps read it: nothing HA sends is refused (what the phone would ignore is, with a warning).
        let request = IngestRequest.homeAssistant(event, device: d.id, webhookId: d.row?.webhookId, now: core.clock())
        switch core.ingest.submit(request) {
        case .duplicate:
            return .duplicate
        case .proxied, .unknownToken, .proxyThrottled:  // the channel's events name their device: never these
            return .applied(delivered: false)
        case .routed(let results):
            guard let routed = results.first?.routed else { return .applied(delivered: false) }
            if routed.refused {
                core.metrics.reject("no_relay")
                return .rejected(Ingest.noRelay(request.command, device: d.id, field: "message"))
            }
            return .applied(delivered: routed.lan == .delivered)
        }
    }
}
