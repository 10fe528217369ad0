import LanpushCore
import LanpushStore

/// HA-native mode on the hub's side (issue 10): what `HomeAssistantLink` does to devices. Loop thread only.
extension Hub {
    enum HomeAssistantEventOutcome {
        /// Accepted and applied; `delivered`: a live LAN session carries it (else the relay path does).
        case applied(delivered: Bool)
        /// Its `hass_confirm_id` was accepted in the last 60 s (through the push_url fallback, or a re-send).
        case duplicate
        /// Invalid payload: nothing reached a client, the store or the relay.
        case rejected(FieldError)
    }

    /// One event of a device's local push channel (`{"message","title"?,"data"?,"hass_confirm_id"?}`, the notify
    /// service data HA hands `PushChannel.async_send_notification`): the same decode → core path as the
    /// relay-compatible ingest, applied to `id`. The caller commits and then confirms.
    func applyHomeAssistantEvent(_ event: [String: JSONValue], device id: String, webhookId: String?) -> HomeAssistantEventOutcome {
        let now = clock()
        let confirmId = event["hass_confirm_id"]?.stringValue
        if let confirmId, let seen = recentConfirmIds[confirmId], now - seen < 60 { return .duplicate }
        let message: NotifyMessage
        let accepted: AcceptedPush
        do {
            message = try NotifyMessage.decode(event)
            accepted = try PayloadInterpreter.accept(message, now: now)
        } catch {
            metrics.reject("validation")
            return .rejected(error)
        }
        guard let device = devices[id] else { return .applied(delivered: false) }
        // Also guards the push_url fallback: HA re-posts an unconfirmed event there with the same confirm id.
        if let confirmId { recentConfirmIds[confirmId] = now }
        // The relay side, as for /v1/push: the body lanpush would have sent for this device's own (client-given)
        // relay registration — never the HA registration's push_url, which is lanpush itself.
        let command = accepted.command
        let liveEvent = message.data["event"]?.stringValue.flatMap(LiveEvent.init(rawValue:))
        let liveActivityToken = event["live_activity_token"]?.stringValue
            ?? command.tag.flatMap { device.liveActivityTokens[$0]?["token"]?.stringValue }
        let relay = RelayBody.native(
            message, pushToken: device.registration?.pushToken, registrationInfo: device.registration?.registrationInfo,
            acceptedAt: now, liveActivityToken: liveActivityToken, event: liveEvent)
        let routed = route(accepted, to: id, webhookId: webhookId, relay: relay)
        if routed.refused {
            metrics.reject("no_relay")
            return .rejected(noRelay(command, device: id, field: "message"))
        }
        noteWarnings(accepted, device: id)
        return .applied(delivered: routed.lan == .delivered)
    }

    /// Makes HA's push_url fallback for `token` (the registration's `app_data.push_token`) reach device `id`, as
    /// a client's `register` does — without making it the device's relay registration (that push_url is
    /// lanpush itself).
    func routeHomeAssistantPushToken(_ token: String, to id: String) {
        deviceByPushToken[token] = id
    }

    func journalHomeAssistantRegistration(_ row: HARegistrationRow) {
        guard persist != nil else { return }
        pendingOps.append(.haRegistration(row))
    }

    func journalHomeAssistantRegistrationRemoved(_ id: String) {
        guard persist != nil else { return }
        pendingOps.append(.deleteHARegistration(deviceId: id))
    }

    /// Tells observers that a device's HA registration or channel changed.
    func homeAssistantStatusChanged(_ id: String) {
        if let device = devices[id] { announceDevice(device) }
    }
}
