import LanpushCore
import LanpushStore
import Logging

/// Each exposed device's mobile_app registration with HA: keep the stored one (updating it in place when the
/// device's name or push_url changed), or find and remove a leftover of a lost state before registering anew.
/// Loop thread only.
///
/// Per device: with a stored webhook_id, `update_registration` if what HA holds (name, app_data) differs, and it is
/// registered;
/// without one, look for config entries of this device (a lost state leaves one behind: the device registry's
/// device with identifier `("mobile_app", "lanpush-<id>")` names them — HA's config entry API does not show unique
/// ids), remove them, then `POST /api/mobile_app/registrations` and store the webhook_id.
///
/// Registration happens only through that check, so an answer lost on the way (timeout) never leaves a second
/// registration: the retry finds and removes the first. A subscription answered "not found" while HA runs means the
/// registration is gone (deleted in HA, or another HA): `verify` does the same check, then registers again.
final class HomeAssistantRegistrar {
    private let settings: HomeAssistantSettings
    private let connection: HomeAssistantConnection
    private let rest: HomeAssistantREST
    private let core: GatewayCore
    private let logger: Logger
    weak var context: HomeAssistantLinkContext?

    init(settings: HomeAssistantSettings, connection: HomeAssistantConnection, rest: HomeAssistantREST, core: GatewayCore, logger: Logger) {
        self.settings = settings
        self.connection = connection
        self.rest = rest
        self.core = core
        self.logger = logger
    }

    /// Brings `devices` to "registered": kept, updated, or checked and registered.
    func reconcile(_ devices: [HomeAssistantDevice]) {
        guard connection.state == .ready else { return }
        var toRegister: [HomeAssistantDevice] = []
        for d in devices {
            if d.row != nil {
                refresh(d)
                context?.registered(d)
            } else if d.registration == .none || d.registration == .error {
                d.registration = .checking
                toRegister.append(d)
                context?.statusChanged(d)
            }
        }
        guard !toRegister.isEmpty else { return }
        lookUp(failed: { why in for d in toRegister { self.context?.failed(d, why, retryIn: 30) } }) { [weak self] entries in
            guard let self else { return }
            for d in toRegister where d.row == nil {
                let leftovers = entries(d.haDeviceId).map(\.id)
                if !leftovers.isEmpty {
                    self.logger.warning("HA has a registration of this device that lanpush no longer knows (its state was lost); replacing it", metadata: [
                        "device": "\(d.id)", "entries": "\(leftovers.joined(separator: ","))",
                    ])
                }
                self.removeEntries(leftovers, of: d.id) { [weak self] _ in self?.register(d) }
            }
        }
    }

    /// `update_registration` when what HA holds of the device (its name, its app_data) is not what it should be.
    func refresh(_ d: HomeAssistantDevice) {
        guard let row = d.row, row.deviceName != d.name || heldAppData(row) != appData(d, pushToken: row.pushToken) else { return }
        updateRegistration(d)
    }

    /// Registrations of devices no longer in lanpush (its config, or removed at run time): their HA devices go too
    /// (HA deletes the device, its notify action and its entities with the config entry), then the stored row. A row whose entries cannot be
    /// removed (the token is not an admin's) stays, and is tried again on the next connection.
    func retire(_ rows: [HARegistrationRow], then: @escaping (HARegistrationRow) -> Void) {
        guard !rows.isEmpty else { return }
        lookUp(failed: { why in self.logger.error("cannot remove the HA devices of removed lanpush devices: \(why)") }) { [weak self] entries in
            guard let self else { return }
            for row in rows {
                let ids = entries(row.haDeviceId).map(\.id)
                self.removeEntries(ids, of: row.deviceId) { [weak self] removed in
                    guard let self else { return }
                    guard removed else {
                        return self.logger.error("a device removed from lanpush is still in HA: delete it there (Settings → Devices), or give lanpush an admin's token", metadata: [
                            "device": "\(row.deviceId)", "device_name": "\(row.deviceName)",
                        ])
                    }
                    self.core.journal.recordRegistrationRemoved(device: row.deviceId)
                    self.logger.info("device removed from lanpush: its HA device is removed too", metadata: [
                        "device": "\(row.deviceId)", "device_name": "\(row.deviceName)", "entries": "\(ids.count)",
                    ])
                    then(row)
                }
            }
        }
    }

    /// HA answered "not found" for the device's webhook_id while running: deleted in HA, another HA, or HA has not
    /// loaded the entry yet.
    func verify(_ d: HomeAssistantDevice) {
        lookUp(failed: { why in self.context?.failed(d, why, retryIn: 30) }) { [weak self, weak d] entries in
            guard let self, let d, let row = d.row else { return }
            let found = entries(d.haDeviceId)
            if found.isEmpty {
                self.logger.warning("the HA registration of this device is gone (deleted in HA?); registering it again", metadata: [
                    "device": "\(d.id)", "old_webhook": "\(row.webhookId.prefix(8))…",
                ])
                self.forget(d)
                self.register(d)
            } else if found.contains(where: { $0.state != "loaded" }) && d.notFoundRetries < 30 {
                // HA is still setting the entry up (it answers not_found until then): try again shortly.
                d.notFoundRetries += 1
                self.connection.later(2) { [weak self, weak d] in
                    guard let self, let d else { return }
                    self.context?.registered(d)
                }
            } else {
                // Loaded, yet our webhook_id is unknown: HA has another registration of this device. Replace it.
                self.logger.warning("HA's registration of this device is not the one lanpush stored; replacing it", metadata: ["device": "\(d.id)"])
                self.forget(d)
                self.removeEntries(found.map(\.id), of: d.id) { [weak self] _ in self?.register(d) }
            }
        }
    }

    // MARK: Looking up HA's registrations

    /// `config/device_registry/list` (which config entries hold each mobile_app device) and `config_entries/get`
    /// (their states): `then` gets a lookup from an HA `device_id` to its entries (id, state).
    private func lookUp(failed: @escaping (String) -> Void, then: @escaping ((String) -> [(id: String, state: String)]) -> Void) {
        connection.request("config/device_registry/list") { [weak self] answer in
            guard let self else { return }
            guard answer.success, let list = answer.result?.arrayValue else {
                return failed("cannot list HA's device registry: \(answer.code) \(answer.message)")
            }
            var owned: [String: [String]] = [:]
            for entry in list {
                let entryIds = entry["config_entries"]?.arrayValue?.compactMap(\.stringValue) ?? []
                for identifier in entry["identifiers"]?.arrayValue ?? [] {
                    guard let pair = identifier.arrayValue, pair.count == 2, pair[0].stringValue == "mobile_app",
                        let haDeviceId = pair[1].stringValue
                    else { continue }
                    owned[haDeviceId, default: []].append(contentsOf: entryIds)
                }
            }
            self.connection.request("config_entries/get", ["domain": "mobile_app"]) { answer in
                guard answer.success, let entries = answer.result?.arrayValue else {
                    return failed("cannot list HA's mobile_app config entries: \(answer.code) \(answer.message)")
                }
                var states: [String: String] = [:]
                for entry in entries {
                    if let id = entry["entry_id"]?.stringValue { states[id] = entry["state"]?.stringValue ?? "?" }
                }
                then { haDeviceId in (owned[haDeviceId] ?? []).compactMap { id in states[id].map { (id, $0) } } }
            }
        }
    }

    /// Drops the stored registration (it is no longer valid in HA) before registering anew.
    private func forget(_ d: HomeAssistantDevice) {
        d.row = nil
        d.registration = .none
        core.journal.recordRegistrationRemoved(device: d.id)
    }

    /// `DELETE /api/config/config_entries/entry/<id>` for each (admin token needed), then `then` on the loop with
    /// whether every one is gone.
    private func removeEntries(_ ids: [String], of device: String, allRemoved: Bool = true, then: @escaping (Bool) -> Void) {
        guard let first = ids.first else { return then(allRemoved) }
        rest.send("DELETE", "/config/config_entries/entry/\(first)") { [weak self] response in
            guard let self else { return }
            let removed = response.status == 200 || response.status == 404
            if removed {
                self.logger.info("removed an HA registration", metadata: ["device": "\(device)", "entry": "\(first)"])
            } else {
                // Not fatal for a replacement: the new registration still works; HA keeps a dangling entry.
                self.logger.error("cannot remove an HA registration (needs an admin token)", metadata: [
                    "device": "\(device)", "entry": "\(first)", "answer": "\(response.summary)",
                ])
            }
            self.removeEntries(Array(ids.dropFirst()), of: device, allRemoved: allRemoved && removed, then: then)
        }
    }

    // MARK: Registering

    /// What the registration's `app_data` should hold: the local push channel and the push_url fallback, and for an
    /// HA with the Live Activity bookkeeping (`HomeAssistantLiveActivities`) what the device's clients reported.
    private func appData(_ d: HomeAssistantDevice, pushToken: String) -> [String: JSONValue] {
        var o = Self.baseAppData(pushURL: settings.pushURL ?? "", pushToken: pushToken)
        if HomeAssistantVersion.hasLiveActivityWebhooks(connection.haVersion), let record = core.directory[d.id] {
            if let supports = record.supportsLiveActivities { o["supports_live_activities"] = .bool(supports) }
            if let token = record.relay.pushToStartToken { o["start_live_activity_token"] = .string(token) }
        }
        return o
    }

    static func baseAppData(pushURL: String, pushToken: String) -> [String: JSONValue] {
        var o: [String: JSONValue] = ["push_websocket_channel": true]
        if !pushURL.isEmpty {
            o["push_url"] = .string(pushURL)
            o["push_token"] = .string(pushToken)
        }
        return o
    }

    /// What HA holds: as stored, or for a registration stored before app_data was, what lanpush sent then.
    private func heldAppData(_ row: HARegistrationRow) -> [String: JSONValue] {
        row.appData ?? Self.baseAppData(pushURL: row.pushURL, pushToken: row.pushToken)
    }

    private func registrationFields(_ d: HomeAssistantDevice, appData: [String: JSONValue]) -> [String: JSONValue] {
        [
            "app_version": .string(LanpushVersion.current), "device_name": .string(d.name), "manufacturer": "lanpush",
            "model": "lanpush LAN device", "os_version": .string(LanpushVersion.current), "app_data": .object(appData),
        ]
    }

    /// `POST /api/mobile_app/registrations`. Only ever called after the config entry check.
    private func register(_ d: HomeAssistantDevice) {
        guard connection.state == .ready, d.row == nil else { return }
        let pushToken = StateDirectory.randomToken()
        // HA may post to the push_url as soon as the registration exists.
        core.directory.route(pushToken: pushToken, to: d.id)
        d.registration = .registering
        context?.statusChanged(d)
        let appData = appData(d, pushToken: pushToken)
        var body = registrationFields(d, appData: appData)
        body["device_id"] = .string(d.haDeviceId)
        body["app_id"] = .string(HomeAssistantSettings.appId)
        body["app_name"] = "lanpush"
        body["os_name"] = "lanpush"
        body["supports_encryption"] = false
        let name = d.name
        let pushURL = settings.pushURL ?? ""
        rest.send("POST", "/mobile_app/registrations", body: .object(body)) { [weak self, weak d] response in
            guard let self, let d else { return }
            self.registered(d, response: response, name: name, pushToken: pushToken, pushURL: pushURL, appData: appData)
        }
    }

    private func registered(
        _ d: HomeAssistantDevice, response: HomeAssistantREST.Response, name: String, pushToken: String, pushURL: String,
        appData: [String: JSONValue]
    ) {
        guard response.status == 200 || response.status == 201, let webhookId = response.body?["webhook_id"]?.stringValue,
            !webhookId.isEmpty
        else {
            // Retried through the entry check: if HA did register it (an answer lost), that entry is replaced.
            d.registration = .error
            context?.failed(d, "registration failed: \(response.summary)", retryIn: 30)
            return
        }
        let now = core.clock()
        let row = HARegistrationRow(
            deviceId: d.id, haDeviceId: d.haDeviceId, webhookId: webhookId, deviceName: name, pushToken: pushToken,
            pushURL: pushURL, haURL: settings.baseURL, registeredAt: now, updatedAt: now, appData: appData)
        d.row = row
        d.registration = .registered
        d.lastError = nil
        core.metrics.haRegistrations.increment()
        core.journal.recordRegistration(row)
        logger.info("registered with Home Assistant", metadata: [
            "device": "\(d.id)", "device_name": "\(name)", "notify_service": "\(d.notifyService)",
        ])
        context?.statusChanged(d)
        if connection.state == .ready {
            refresh(d)
            context?.registered(d)
        }
    }

    /// The mobile_app webhook's `update_registration` (the device's name or app_data changed): HA renames the
    /// device and reloads notify, so the service becomes `notify.mobile_app_<new name>`. Same webhook_id.
    private func updateRegistration(_ d: HomeAssistantDevice) {
        guard let row = d.row, d.registration != .updating else { return }
        d.registration = .updating
        context?.statusChanged(d)
        let name = d.name
        let pushURL = settings.pushURL ?? ""
        let appData = appData(d, pushToken: row.pushToken)
        let data = JSONValue.object(registrationFields(d, appData: appData))
        rest.webhook(row.webhookId, "update_registration", data) { [weak self, weak d] response in
            guard let self, let d else { return }
            // HA answers an unknown webhook with 200 and no body: success is the registration echoed back.
            guard response.status == 200, response.body?["device_name"]?.stringValue == name, var row = d.row else {
                d.registration = d.row == nil ? .none : .registered
                d.lastError = "update_registration failed: \(response.summary)"
                self.logger.error("HA-native mode: update_registration failed", metadata: [
                    "device": "\(d.id)", "answer": "\(response.summary)",
                ])
                self.context?.statusChanged(d)
                return
            }
            row.deviceName = name
            row.pushURL = pushURL
            row.appData = appData
            row.updatedAt = self.core.clock()
            d.row = row
            d.registration = .registered
            self.core.journal.recordRegistration(row)
            self.logger.info("updated the HA registration", metadata: [
                "device": "\(d.id)", "device_name": "\(name)", "notify_service": "\(d.notifyService)",
            ])
            self.context?.statusChanged(d)
            self.refresh(d)  // something changed again while it was under way
        }
    }
}
