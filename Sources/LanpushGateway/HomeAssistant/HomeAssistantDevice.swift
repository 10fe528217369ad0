import LanpushCore
import LanpushStore

/// One lanpush device as HA-native mode sees it: its mobile_app registration with Home Assistant and its local
/// push channel. Shown under `home_assistant` in `GET /v1/devices` (and the observers' `device` frames).
/// Loop thread only.
final class HomeAssistantDevice {
    enum Registration: String {
        /// No webhook_id yet (and nothing under way).
        case none
        /// Looking for (stale) config entries of this device before registering.
        case checking
        case registering
        case registered
        /// `update_registration` under way (the device's name or push_url changed).
        case updating
        case error
    }

    /// Its entities in HA (`HomeAssistantSensorSync`).
    enum Sensors: String {
        case none
        case registering
        case registered
        /// No longer exposed: every entity shows `unavailable`.
        case unavailable
        case error
    }

    enum Channel: String {
        /// No connection to HA, or not subscribed yet.
        case down
        /// Connected, waiting for HA to finish starting before subscribing.
        case waiting
        case subscribing
        case subscribed
        case error
    }

    let id: String
    weak var link: HomeAssistantLink?
    /// The name from lanpush's config: what the registration's `device_name` should be.
    var name: String
    let exposed: Bool
    let haDeviceId: String
    /// What HA holds (the stored row); `nil` until registered.
    var row: HARegistrationRow?
    var registration: Registration
    var channel: Channel = .down
    /// The id of the `mobile_app/push_notification_channel` message while subscribed (HA's event ids).
    var subscriptionId: Int?
    var lastError: String?
    var events: UInt64 = 0
    var confirms: UInt64 = 0
    var confirmErrors: UInt64 = 0
    var rejected: UInt64 = 0
    var lastEventAt: Double?
    /// Confirms waiting for the store commit or HA's answer.
    var pendingConfirms = 0
    /// `not_found` answers to a subscription while HA shows the entry as not loaded yet (HA still starting).
    var notFoundRetries = 0
    var sensors: Sensors = .none
    /// `update_sensor_states` calls HA accepted, and why the last sensor call failed.
    var sensorUpdates: UInt64 = 0
    var sensorError: String?
    /// Live Activity bookkeeping calls HA accepted (`live_activity_token`, `live_activity_dismissed`).
    var liveActivityCalls: UInt64 = 0

    init(id: String, name: String, exposed: Bool, row: HARegistrationRow?) {
        self.id = id
        self.name = name
        self.exposed = exposed
        self.haDeviceId = row?.haDeviceId ?? HomeAssistantSettings.haDeviceId(id)
        self.row = row
        self.registration = row == nil ? .none : .registered
    }

    var notifyService: String { "notify.mobile_app_\(HomeAssistantSettings.slug(row?.deviceName ?? name))" }

    var json: JSONValue {
        guard exposed else { return sensors == .unavailable ? ["exposed": false, "sensors": "unavailable"] : ["exposed": false] }
        var o: [String: JSONValue] = [
            "exposed": true, "connection": .string(link?.state.rawValue ?? "stopped"), "device_id": .string(haDeviceId), "registration": .string(registration.rawValue),
            "channel": .string(channel.rawValue), "events": .number(Double(events)), "confirms": .number(Double(confirms)),
            "confirm_errors": .number(Double(confirmErrors)), "rejected": .number(Double(rejected)),
            "pending_confirms": .number(Double(pendingConfirms)), "sensors": .string(sensors.rawValue),
            "sensor_updates": .number(Double(sensorUpdates)), "live_activity_calls": .number(Double(liveActivityCalls)),
        ]
        if let row {
            o["webhook_id"] = .string(row.webhookId)
            o["device_name"] = .string(row.deviceName)
            o["notify_service"] = .string(notifyService)
            o["registered_at"] = .number(row.registeredAt.rounded())
            if !row.pushURL.isEmpty { o["push_url"] = .string(row.pushURL) }
        }
        if let version = link?.haVersion {
            o["ha_version"] = .string(version)
            // Whether this HA gets the Live Activity bookkeeping (it has the webhooks from that release on).
            o["live_activities"] = .bool(HomeAssistantVersion.hasLiveActivityWebhooks(version))
        }
        if let sensorError { o["sensor_error"] = .string(sensorError) }
        if link?.state != .ready, let error = link?.lastError { o["connection_error"] = .string(error) }
        if let lastEventAt { o["last_event_at"] = .number(lastEventAt.rounded()) }
        if let lastError { o["last_error"] = .string(lastError) }
        return .object(o)
    }
}
