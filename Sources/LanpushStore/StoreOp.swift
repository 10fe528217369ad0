import LanpushCore

/// One change to durable state, captured on the loop thread and written at the turn's end (on the loop, or later by
/// the group-commit writer). Values, not references: the loop may keep going while a writer serializes them.
public enum StoreOp: Sendable {
    case device(DeviceRow)
    case upsertActivity(deviceId: String, Activity)
    case deleteActivity(deviceId: String, tag: String)
    case insertNotification(deviceId: String, QueuedNotification)
    /// Drops a device's queued notifications with seq <= `through`.
    case deleteNotifications(deviceId: String, through: UInt64)
    /// Drops one queued notification (the queue overflowed).
    case deleteNotification(deviceId: String, seq: UInt64)
    case upsertOutbox(OutboxRow)
    case deleteOutbox(deviceId: String, slot: String)
    case meta(key: String, value: String)
    /// The relay outbox as a whole (what the pacer has not had answered), replacing what was stored.
    case replaceOutbox([OutboxRow])
    /// HA-native mode (schema v2): a device's mobile_app registration with Home Assistant.
    case haRegistration(HARegistrationRow)
    case deleteHARegistration(deviceId: String)
    /// A device added at run time (schema v3), or its new name, routing or token hash.
    case managedDevice(ManagedDeviceRow)
    /// A device removed at run time: it and everything it had but its HA registration (kept until HA has let the
    /// device go too).
    case removeDevice(id: String)

    /// Ops with the same key in one batch collapse to the last one: the heart of group commit.
    var key: String? {
        switch self {
        case .device(let row): return "d|\(row.id)"
        case .upsertActivity(let d, let a): return "a|\(d)|\(a.tag)"
        case .deleteActivity(let d, let tag): return "a|\(d)|\(tag)"
        case .upsertOutbox(let row): return "o|\(row.deviceId)|\(row.slot)"
        case .deleteOutbox(let d, let slot): return "o|\(d)|\(slot)"
        case .meta(let key, _): return "m|\(key)"
        case .replaceOutbox: return "outbox"
        case .haRegistration(let row): return "h|\(row.deviceId)"
        case .deleteHARegistration(let d): return "h|\(d)"
        case .managedDevice(let row): return "md|\(row.id)"
        // A removal is never collapsed: it must run between what came before it and a re-added device after it.
        case .insertNotification, .deleteNotifications, .deleteNotification, .removeDevice: return nil
        }
    }
}

/// What the store keeps of a device besides its activities and notifications.
public struct DeviceRow: Sendable, Hashable {
    public var id: String
    public var epoch: String
    public var seq: UInt64
    public var pushToken: String?
    public var pushURL: String?
    public var registrationInfo: [String: JSONValue]
    public var liveActivityTokens: [String: JSONValue]
    public var pushToStartToken: String?
    public var lastSeen: Double?
    /// What its clients' `register` frames said of Live Activities (`nil`: nothing yet; schema v4).
    public var supportsLiveActivities: Bool?
    /// What the relay path keeps of it beside the credentials (the gateway's `DeviceRelayState.stored`; schema v6).
    public var relayState: JSONValue?

    public init(
        id: String, epoch: String, seq: UInt64, pushToken: String? = nil, pushURL: String? = nil,
        registrationInfo: [String: JSONValue] = [:], liveActivityTokens: [String: JSONValue] = [:],
        pushToStartToken: String? = nil, lastSeen: Double? = nil, supportsLiveActivities: Bool? = nil,
        relayState: JSONValue? = nil
    ) {
        self.relayState = relayState
        self.id = id
        self.epoch = epoch
        self.seq = seq
        self.pushToken = pushToken
        self.pushURL = pushURL
        self.registrationInfo = registrationInfo
        self.liveActivityTokens = liveActivityTokens
        self.pushToStartToken = pushToStartToken
        self.lastSeen = lastSeen
        self.supportsLiveActivities = supportsLiveActivities
    }
}

/// A relay send waiting in the durable outbox: the latest body per (device, slot).
public struct OutboxRow: Sendable, Hashable {
    public var deviceId: String
    /// The tag for activity slots, `n:<seq>` for queued notifications.
    public var slot: String
    public var kind: String
    public var url: String
    public var body: JSONValue
    public var seq: UInt64

    public init(deviceId: String, slot: String, kind: String, url: String, body: JSONValue, seq: UInt64) {
        self.deviceId = deviceId
        self.slot = slot
        self.kind = kind
        self.url = url
        self.body = body
        self.seq = seq
    }
}

/// Everything read back at start-up.
public struct StoredState: Sendable {
    public var devices: [String: DeviceRow] = [:]
    public var activities: [String: [Activity]] = [:]
    public var notifications: [String: [QueuedNotification]] = [:]
    public var outbox: [OutboxRow] = []
    public var meta: [String: String] = [:]
    /// HA-native mode (schema v2): mobile_app registrations by lanpush device id.
    public var haRegistrations: [String: HARegistrationRow] = [:]
    /// Devices added at run time, in id order.
    public var managedDevices: [ManagedDeviceRow] = []

    /// The previous run did not shut down cleanly (crash, kill -9, power loss).
    public var wasUnclean: Bool { meta["running"] == "1" }

    /// Per device, the seq its ledger goes on from: the highest its row, queued notifications, activities and relay
    /// outbox hold. A device row is rewritten when the device changes and at a clean stop, not each time its seq
    /// moves (that would cost a row and a WAL frame in every commit), so after an unclean stop the rows written with
    /// a change can be ahead of it. Going on from the highest keeps every new seq above each one still stored: a
    /// new notification never replaces a queued one, nor does the relay take a new update for one it already sent.
    public func resumeSeqs() -> [String: UInt64] {
        var seqs = devices.mapValues(\.seq)
        func raise(_ device: String, to seq: UInt64) { seqs[device] = max(seqs[device] ?? 0, seq) }
        for (device, queued) in notifications { for n in queued { raise(device, to: n.seq) } }
        for (device, list) in activities { for a in list { raise(device, to: a.lastSeq) } }
        for row in outbox { raise(row.deviceId, to: row.seq) }
        return seqs
    }
}

/// HA-native mode: what Home Assistant gave lanpush for one device (`POST /api/mobile_app/registrations`).
/// The webhook_id is re-used across restarts (a second registration would make a second config entry in HA);
/// `deviceName` / `pushURL` are what HA holds, so a change in lanpush's config triggers `update_registration`.
public struct HARegistrationRow: Sendable, Hashable {
    public var deviceId: String
    /// The `device_id` lanpush registered with (`lanpush-<id>`).
    public var haDeviceId: String
    public var webhookId: String
    public var deviceName: String
    /// The `app_data.push_token` HA sends on the push_url fallback: it routes to this device.
    public var pushToken: String
    public var pushURL: String
    /// The HA base URL it was registered with (informational).
    public var haURL: String
    public var registeredAt: Double
    public var updatedAt: Double
    /// The `app_data` HA holds (schema v4); `nil` for a registration stored before: v2's fields only
    /// (`push_websocket_channel`, and `push_url` + `push_token` when `pushURL` is set).
    public var appData: [String: JSONValue]?

    public init(
        deviceId: String, haDeviceId: String, webhookId: String, deviceName: String, pushToken: String, pushURL: String,
        haURL: String, registeredAt: Double, updatedAt: Double, appData: [String: JSONValue]? = nil
    ) {
        self.deviceId = deviceId
        self.haDeviceId = haDeviceId
        self.webhookId = webhookId
        self.deviceName = deviceName
        self.pushToken = pushToken
        self.pushURL = pushURL
        self.haURL = haURL
        self.registeredAt = registeredAt
        self.updatedAt = updatedAt
        self.appData = appData
    }
}

/// A device added at run time (`POST /v1/devices`, `lanpush device add`, pairing): its token only as a SHA-256 hash.
public struct ManagedDeviceRow: Sendable, Hashable {
    public var id: String
    public var name: String
    /// Lowercase hex SHA-256 of the token: enough for a long random secret, and useless to whoever reads the file.
    public var tokenHash: String
    /// `auto`, `lan`, `relay` or `both`.
    public var notifications: String
    public var createdAt: Double
    /// The HA action it falls back to while gone (`notify.mobile_app_…`; schema v6).
    public var fallback: String?

    public init(id: String, name: String, tokenHash: String, notifications: String, createdAt: Double, fallback: String? = nil) {
        self.fallback = fallback
        self.id = id
        self.name = name
        self.tokenHash = tokenHash
        self.notifications = notifications
        self.createdAt = createdAt
    }
}
