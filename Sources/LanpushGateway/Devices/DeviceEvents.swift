import LanpushCore

/// What the gateway's core tells HA-native mode about its devices, so Home Assistant sees what lanpush sees: a
/// device's observable state may have changed (sessions, path, activities, queued notifications, relay quota), or
/// one of its clients reported something HA keeps for its own apps (Live Activity tokens and dismissals, the
/// push-to-start token, whether it shows Live Activities). Loop thread only.
///
/// One listener or none: without HA-native mode nothing listens and a signal costs a nil check. `changed` only says
/// "look again"; the listener reads the state itself when it publishes (and publishes only what differs).
final class DeviceEvents {
    enum Report: Equatable {
        /// A client reported an activity's own push token (`live_activity_token` frame).
        case liveActivityToken(tag: String, token: String, expiresAt: Double?)
        /// The user dismissed an activity on a client (`dismissed` frame).
        case dismissed(tag: String)
        /// A new push-to-start token (`push_to_start_token` frame).
        case pushToStartToken
        /// What the device's clients say of Live Activities changed (`register` frame, `supports_live_activities`).
        case capabilities
    }

    var onChange: ((DeviceRecord) -> Void)?
    var onReport: ((DeviceRecord, Report) -> Void)?
    /// A device was added or removed at run time (the API, pairing): HA-native mode registers it or removes it.
    var onAdded: ((DeviceRecord) -> Void)?
    var onRemoved: ((DeviceRecord) -> Void)?

    func changed(_ device: DeviceRecord) {
        onChange?(device)
    }

    func reported(_ device: DeviceRecord, _ report: Report) {
        onReport?(device, report)
    }

    func added(_ device: DeviceRecord) {
        onAdded?(device)
    }

    func removed(_ device: DeviceRecord) {
        onRemoved?(device)
    }
}
