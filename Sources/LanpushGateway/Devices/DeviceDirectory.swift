import LanpushCore
import LanpushStore

/// Every device the gateway serves, and the two ways to find one: by the token a client authenticates with, and by
/// the `push_token` HA puts in its relay body. Loop thread only.
///
/// The maps are private: a push_token is routed to exactly one device, and moving it (a client registering the
/// token another device had) drops the other device's registration here, in one place.
final class DeviceDirectory {
    private var records: [String: DeviceRecord] = [:]
    private var byToken: [String: String] = [:]
    private var byPushToken: [String: String] = [:]
    /// The devices in id order (the order of every listing).
    private(set) var sorted: [DeviceRecord] = []

    /// `stored`: what the store held at start; `unclean`: the previous run did not stop cleanly, so every device
    /// starts the new `epoch` (clients resuming get a snapshot, no seq is reused with other content).
    init(config: GatewayConfig, stored: StoredState?, epoch: String) {
        let unclean = stored?.wasUnclean ?? false
        for d in config.devices {
            let row = stored?.devices[d.id]
            let ledger = DeviceLedger(
                deviceId: d.id, epoch: row.map { unclean ? epoch : $0.epoch } ?? epoch, seq: row?.seq ?? 0,
                activities: stored?.activities[d.id] ?? [], notifications: stored?.notifications[d.id] ?? [],
                notificationQueueBytes: config.limits.notificationQueueBytes)
            let device = DeviceRecord(id: d.id, name: d.name, ledger: ledger)
            device.notifications = d.notifications
            if let row {
                if let token = row.pushToken {
                    device.registration = .init(pushToken: token, pushURL: row.pushURL, registrationInfo: row.registrationInfo)
                    byPushToken[token] = d.id
                }
                device.liveActivityTokens = row.liveActivityTokens
                device.pushToStartToken = row.pushToStartToken
                device.lastSeen = row.lastSeen
                device.supportsLiveActivities = row.supportsLiveActivities
            }
            records[d.id] = device
            byToken[d.token] = d.id
        }
        sorted = records.values.sorted { $0.id < $1.id }
    }

    subscript(id: String) -> DeviceRecord? { records[id] }

    var count: Int { records.count }

    var connectedCount: Int { sorted.reduce(0) { $0 + ($1.isConnected ? 1 : 0) } }

    /// The device whose client token this is (device sessions authenticate with it).
    func device(presenting token: String) -> DeviceRecord? {
        byToken[token].flatMap { records[$0] }
    }

    /// The device HA's relay body addresses by its `push_token`.
    func device(forPushToken token: String) -> DeviceRecord? {
        byPushToken[token].flatMap { records[$0] }
    }

    /// A client of `device` registered its relay credentials. The push_token routes to it from now on; a device that
    /// had the same token loses its registration, which is returned (its store row must be rewritten).
    @discardableResult
    func register(_ registration: DeviceRecord.Registration, for device: DeviceRecord) -> DeviceRecord? {
        if let old = device.registration?.pushToken, old != registration.pushToken {
            byPushToken.removeValue(forKey: old)
        }
        var previous: DeviceRecord?
        if let other = byPushToken[registration.pushToken], other != device.id, let owner = records[other] {
            owner.registration = nil
            previous = owner
        }
        device.registration = registration
        byPushToken[registration.pushToken] = device.id
        return previous
    }

    /// HA-native mode: HA's push_url fallback for its own registration's token reaches `id`, without making it the
    /// device's relay registration (that push_url is lanpush itself).
    func route(pushToken token: String, to id: String) {
        guard records[id] != nil else { return }
        byPushToken[token] = id
    }
}
