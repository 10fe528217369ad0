import LanpushCore

/// Where one accepted payload goes for one device (the README's routing table). Loop thread only.
///
/// - live updates and their `clear_notification`: the device's LAN sessions; the relay while it is gone;
/// - companion-app commands: the relay only, and only with relay credentials (else nothing is done);
/// - plain notifications, and a `clear_notification` whose tag names no activity (it clears a notification): the
///   device's `notifications` setting or the message's `data.lanpush.path` — `lan` (LAN first, the relay while
///   gone), `relay`, or `both` — so a clear follows the notification it clears.
///
/// Nothing goes twice on one path: a notification relayed at once is never drained to the relay again.
extension Hub {
    /// What became of a payload for one device.
    struct Routed: Equatable {
        enum LAN: String {
            /// A live session of the device carries it.
            case delivered
            /// Kept for the device's sessions (none is live).
            case queued
            /// Not for the LAN.
            case none
        }

        var lan: LAN
        /// Handed to the relay path (now, or paced).
        var relay: Bool
        /// It needed the relay and the device has no relay credentials: nothing was done.
        var refused: Bool = false

        /// `/v1/push`'s per-target result word.
        var result: String {
            if refused { return "no_relay" }
            switch lan {
            case .delivered: return "delivered"
            case .queued: return relay ? "relay" : "queued"
            case .none: return relay ? "relay" : "queued"
            }
        }
    }

    /// Applies one accepted payload to device `id` and sends it on its way. `relay` is the request as HA sent it
    /// (or as HA would have); it is also remembered per slot so a device that goes away later drains what it had
    /// not acknowledged. `path` is the relay-compatible ingest's path (iOS or Android).
    @discardableResult
    func route(
        _ accepted: AcceptedPush, to id: String, webhookId: String?, relay: RelayBody? = nil, path: String? = nil
    ) -> Routed {
        guard let device = devices[id] else { return Routed(lan: .none, relay: false, refused: true) }
        let url = relayReachable(device) ? relayURL(for: device, path: path) : nil
        switch accepted.command {
        case .command:
            guard let url, let relay else { return Routed(lan: .none, relay: false, refused: true) }
            relayNow(relay, kind: .notification, tag: nil, device: device, url: url)
            return Routed(lan: .none, relay: true)
        case .end(let request) where !(device.ledger.activities[request.tag].map { $0.phase != .dismissed } ?? false):
            return routeNotification(accepted, device: device, webhookId: webhookId, relay: relay, url: url)
        case .notification:
            return routeNotification(accepted, device: device, webhookId: webhookId, relay: relay, url: url)
        case .liveUpdate, .end:
            let changes = applyToLedger(accepted.command, device: device, webhookId: webhookId)
            // A clear_notification that ended an activity makes an end and a clear: one request to the relay.
            let endedSome = changes.contains { $0.kind == .end }
            let relayed = changes.filter { !(endedSome && $0.kind == .clear) }
            let handed = handOver(relayed, device: device, relay: relay, url: url)
            return Routed(lan: device.isConnected ? .delivered : .queued, relay: handed)
        }
    }

    private func routeNotification(
        _ accepted: AcceptedPush, device: DeviceRecord, webhookId: String?, relay: RelayBody?, url: String?
    ) -> Routed {
        let way = device.notifications.path(override: accepted.path, hasRelayCredentials: url != nil)
        if way == .relay {
            guard let url, let relay else { return Routed(lan: .none, relay: false, refused: true) }
            relayNow(relay, kind: .notification, tag: nil, device: device, url: url)
            return Routed(lan: .none, relay: true)
        }
        let changes = applyToLedger(accepted.command, device: device, webhookId: webhookId)
        let lan: Routed.LAN = device.isConnected ? .delivered : .queued
        if way == .both {
            guard let url, let relay else { return Routed(lan: lan, relay: false) }
            relayNow(relay, kind: .notification, tag: nil, device: device, url: url)
            return Routed(lan: lan, relay: true)
        }
        return Routed(lan: lan, relay: handOver(changes, device: device, relay: relay, url: url))
    }

    private func applyToLedger(_ command: PushCommand, device: DeviceRecord, webhookId: String?) -> [Change] {
        let dropped = device.ledger.droppedNotificationTotal
        let changes = device.ledger.apply(command, now: clock(), webhookId: webhookId)
        if device.ledger.droppedNotificationTotal > dropped {
            let count = device.ledger.droppedNotificationTotal - dropped
            metrics.notificationsDropped.increment(by: Int64(count))
            logger.warning("notification queue full: oldest undelivered notifications dropped", metadata: [
                "device": "\(device.id)", "dropped": "\(count)", "queue_bytes": "\(device.ledger.notificationBytes)",
            ])
        }
        fanOut(changes, device: device.id)
        return changes
    }

    /// The LAN-first rule: remembers each change's relay body (for a later drain) and, while the device is gone,
    /// relays the changes now. Returns whether anything went to the relay.
    private func handOver(_ changes: [Change], device: DeviceRecord, relay: RelayBody?, url: String?) -> Bool {
        guard let relay else { return false }
        for change in changes {
            if change.isSlotChange, let tag = change.tag {
                device.relayBodies[tag] = relay.json
            } else {
                device.relayNotificationBodies[change.seq] = relay.json
            }
        }
        let oldest = device.ledger.notifications.first?.seq ?? device.ledger.seq + 1
        if device.relayNotificationBodies.count > device.ledger.notifications.count {
            device.relayNotificationBodies = device.relayNotificationBodies.filter { $0.key >= oldest }
        }
        guard !device.isConnected, let url, !changes.isEmpty else { return false }
        self.relay(changes, device: device, body: relay, url: url)
        pumpRelay()
        return true
    }

    /// Relays a body now, outside the ledger (a command, or a notification for the relay path).
    private func relayNow(_ body: RelayBody, kind: RelayItem.Kind, tag: String?, device: DeviceRecord, url: String) {
        if body.templateRemoved { metrics.relayTemplatesStripped.increment() }
        submitRelay(RelayItem(device: device.id, tag: tag, kind: kind, url: url, body: body.json, seq: device.ledger.seq))
        pumpRelay()
    }
}
