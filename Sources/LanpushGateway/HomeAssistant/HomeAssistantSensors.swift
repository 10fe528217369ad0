import Foundation
import LanpushCore

/// The entities HA-native mode gives each exposed device, registered through the mobile_app webhook HA's own apps use
/// (`register_sensor`, then `update_sensor_states`). Their unique ids are `lanpush-<device>-<sensor>`: the same on
/// every start of either side, and HA keys an entity by webhook_id + unique id, so registering again updates the
/// entity instead of adding one.
enum HomeAssistantSensor: String, CaseIterable {
    /// A LAN session of the device is live (binary, device class `connectivity`).
    case connected
    /// Where its live updates go now: `lan`, `relay` or `none` (as `GET /v1/devices` says).
    case path
    /// Live activities it shows (not yet dismissed).
    case activities
    /// Plain notifications waiting for its sessions' acknowledgement.
    case queuedNotifications = "queued_notifications"
    /// The relay's daily quota left for its push token (unknown until the relay answered once today).
    case relayRemaining = "relay_remaining"
    /// When that quota resets.
    case relayResetsAt = "relay_resets_at"
    /// When a LAN session of it last connected or went away.
    case lastSeen = "last_seen"

    var type: String { self == .connected ? "binary_sensor" : "sensor" }

    /// HA names the entity "<device name> <name>" (so `binary_sensor.kitchen_lan_connected`).
    var name: String {
        switch self {
        case .connected: return "LAN connected"
        case .path: return "Delivery path"
        case .activities: return "Live activities"
        case .queuedNotifications: return "Queued notifications"
        case .relayRemaining: return "Relay quota remaining"
        case .relayResetsAt: return "Relay quota resets"
        case .lastSeen: return "Last seen"
        }
    }

    var deviceClass: String? {
        switch self {
        case .connected: return "connectivity"
        case .relayResetsAt, .lastSeen: return "timestamp"
        default: return nil
        }
    }

    /// Counts get long-term statistics in HA.
    var stateClass: String? {
        switch self {
        case .activities, .queuedNotifications, .relayRemaining: return "measurement"
        default: return nil
        }
    }

    var entityCategory: String? {
        switch self {
        case .relayResetsAt, .lastSeen: return "diagnostic"
        default: return nil
        }
    }

    func uniqueId(device: String) -> String { "\(HomeAssistantSettings.haDeviceId(device))-\(rawValue)" }

    /// `register_sensor`'s data: the entity's definition and its current value. Registering an existing entity
    /// updates it (HA 2025.4: "Re-register for … of existing sensor").
    func registration(device: String, _ value: SensorValue) -> JSONValue {
        var o: [String: JSONValue] = [
            "type": .string(type), "unique_id": .string(uniqueId(device: device)), "name": .string(name),
            "state": value.state, "icon": .string(value.icon), "attributes": .object(value.attributes),
        ]
        if let deviceClass { o["device_class"] = .string(deviceClass) }
        if let stateClass { o["state_class"] = .string(stateClass) }
        if let entityCategory { o["entity_category"] = .string(entityCategory) }
        return .object(o)
    }

    /// One entry of `update_sensor_states`. Icon and attributes always go along: HA resets those an update leaves out.
    func update(device: String, _ value: SensorValue) -> JSONValue {
        [
            "type": .string(type), "unique_id": .string(uniqueId(device: device)), "state": value.state,
            "icon": .string(value.icon), "attributes": .object(value.attributes),
        ]
    }
}

/// What an entity shows: state, icon, attributes.
struct SensorValue: Equatable {
    var state: JSONValue
    var icon: String
    var attributes: [String: JSONValue] = [:]
}

/// Every sensor's value for one device, read from its `GET /v1/devices` entry: HA shows what that endpoint says.
struct DeviceSensorValues: Equatable {
    var values: [HomeAssistantSensor: SensorValue]

    init(values: [HomeAssistantSensor: SensorValue]) {
        self.values = values
    }

    init(status: JSONValue) {
        let connected = status["connected"]?.boolValue ?? false
        let path = status["path"]?.stringValue ?? "none"
        let relay = status["relay"]
        values = [
            .connected: SensorValue(
                state: .bool(connected), icon: connected ? "mdi:lan-connect" : "mdi:lan-disconnect",
                attributes: ["sessions": status["sessions"] ?? 0]),
            .path: SensorValue(
                state: .string(path),
                icon: path == "lan" ? "mdi:lan" : path == "relay" ? "mdi:cloud-outline" : "mdi:cloud-off-outline"),
            .activities: SensorValue(state: status["activities"] ?? 0, icon: "mdi:list-status"),
            .queuedNotifications: SensorValue(state: status["queued_notifications"] ?? 0, icon: "mdi:tray-full"),
            .relayRemaining: SensorValue(state: relay?["remaining"] ?? .null, icon: "mdi:counter"),
            .relayResetsAt: SensorValue(state: Self.timestamp(relay?["resets_at"]), icon: "mdi:timer-refresh-outline"),
            .lastSeen: SensorValue(state: Self.timestamp(status["last_seen"]), icon: "mdi:clock-outline"),
        ]
    }

    /// What a device no longer exposed to HA shows: HA greys every entity out (state `unavailable`).
    static let unavailable = DeviceSensorValues(values: Dictionary(uniqueKeysWithValues: HomeAssistantSensor.allCases.map {
        ($0, SensorValue(state: "unavailable", icon: "mdi:lan-pending"))
    }))

    /// The sensors whose value differs from what HA holds (`published`), in a fixed order.
    func changed(since published: [HomeAssistantSensor: SensorValue]) -> [HomeAssistantSensor] {
        HomeAssistantSensor.allCases.filter { values[$0] != published[$0] }
    }

    /// The next time a value changes by itself: the relay quota is forgotten once its reset time passes.
    var nextReset: Double? { values[.relayResetsAt].flatMap { $0.state.stringValue }.flatMap(ISO8601Timestamp.unixSeconds) }

    /// Unix seconds → the ISO 8601 text a timestamp sensor takes (`null`: unknown).
    static func timestamp(_ seconds: JSONValue?) -> JSONValue {
        guard let t = seconds?.numberValue, t.isFinite else { return .null }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return .string(formatter.string(from: Date(timeIntervalSince1970: t.rounded())))
    }
}

/// At most one sensor update per device per `interval`: the first change after a quiet spell goes at once, changes
/// within the interval wait for its end and go as one update (a session that flaps costs two updates, not twenty).
struct SensorThrottle {
    let interval: Double
    private(set) var lastSent: Double?
    /// When the update already scheduled goes (`nil`: none is).
    private(set) var pendingAt: Double?

    init(interval: Double) {
        self.interval = interval
    }

    /// A change at `now`: when its update should go; `nil` when one is already scheduled (it will carry this one).
    mutating func changed(at now: Double) -> Double? {
        guard pendingAt == nil else { return nil }
        let at = max(now, (lastSent ?? -.infinity) + interval)
        pendingAt = at
        return at
    }

    /// The scheduled update's time came; `sent`: something differed and an update left now.
    mutating func fired(at now: Double, sent: Bool) {
        pendingAt = nil
        if sent { lastSent = now }
    }
}
