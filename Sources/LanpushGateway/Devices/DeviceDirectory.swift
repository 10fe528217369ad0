import LanpushCore
import LanpushStore

/// Every device the gateway serves — those of the config file and those added at run time — and the two ways to
/// find one: by the token a client authenticates with (through its hash), and by the `push_token` HA puts in its
/// relay body. Loop thread only.
///
/// The maps are private: a push_token is routed to exactly one device, and moving it (a client registering the
/// token another device had) drops the other device's registration here, in one place.
final class DeviceDirectory {
    private var records: [String: DeviceRecord] = [:]
    private var byTokenHash: [String: String] = [:]
    private var byPushToken: [String: String] = [:]
    /// The devices in id order (the order of every listing).
    private(set) var sorted: [DeviceRecord] = []
    /// Ids defined both in the config file and at run time: the config's definition wins (reported at start).
    private(set) var shadowed: [String] = []
    private let epoch: String
    private let queueBytes: Int
    private let stored: StoredState?
    /// Per device, the seq its ledger goes on from (`StoredState.resumeSeqs`).
    private let resumeSeqs: [String: UInt64]
    /// Every device's resume history together: kept under `limits.resume_history_bytes` by `settleHistory(of:)`.
    private var historyBudget: ResumeHistoryBudget
    /// Counts the devices added and removed: a record found by id while it stays the same is still the one the
    /// directory holds under that id (`device(of:)`).
    private(set) var changes: UInt64 = 0

    /// `stored`: what the store held at start; `unclean`: the previous run did not stop cleanly, so every device
    /// starts the new `epoch` (clients resuming get a snapshot, no seq is reused with other content).
    init(config: GatewayConfig, stored: StoredState?, epoch: String) {
        self.epoch = epoch
        self.queueBytes = config.limits.notificationQueueBytes
        self.historyBudget = ResumeHistoryBudget(limit: config.limits.resumeHistoryBytes)
        self.stored = stored
        self.resumeSeqs = stored?.resumeSeqs() ?? [:]
        for (index, d) in config.devices.enumerated() {
            let device = make(id: d.id, name: d.name, source: .config(index: index), tokenHash: DeviceToken.hash(d.token))
            device.notifications = d.notifications
            insert(device)
        }
        for row in stored?.managedDevices ?? [] {
            guard records[row.id] == nil else {
                shadowed.append(row.id)
                continue
            }
            let device = make(id: row.id, name: row.name, source: .api, tokenHash: row.tokenHash)
            device.notifications = NotificationRouting(rawValue: row.notifications) ?? .auto
            insert(device)
        }
        resort()
    }

    /// A device record with what the store kept of it (its seq, epoch, queue, activities, registration).
    private func make(id: String, name: String, source: DeviceRecord.Source, tokenHash: String) -> DeviceRecord {
        let row = stored?.devices[id]
        let unclean = stored?.wasUnclean ?? false
        let ledger = DeviceLedger(
            deviceId: id, epoch: row.map { unclean ? epoch : $0.epoch } ?? epoch, seq: resumeSeqs[id] ?? 0,
            activities: stored?.activities[id] ?? [], notifications: stored?.notifications[id] ?? [],
            notificationQueueBytes: queueBytes)
        let device = DeviceRecord(id: id, name: name, source: source, tokenHash: tokenHash, ledger: ledger)
        if let row {
            if let token = row.pushToken {
                device.registration = .init(pushToken: token, pushURL: row.pushURL, registrationInfo: row.registrationInfo)
                byPushToken[token] = id
            }
            device.liveActivityTokens = row.liveActivityTokens
            device.pushToStartToken = row.pushToStartToken
            device.lastSeen = row.lastSeen
            device.supportsLiveActivities = row.supportsLiveActivities
        }
        return device
    }

    private func insert(_ device: DeviceRecord) {
        changes &+= 1
        records[device.id] = device
        byTokenHash[device.tokenHash] = device.id
    }

    private func resort() {
        sorted = records.values.sorted { $0.id < $1.id }
    }

    subscript(id: String) -> DeviceRecord? { records[id] }

    var count: Int { records.count }

    var connectedCount: Int { sorted.reduce(0) { $0 + ($1.isConnected ? 1 : 0) } }

    // MARK: Finding

    /// The device whose client token this is (device sessions authenticate with it).
    func device(presenting token: String) -> DeviceRecord? {
        guard !token.isEmpty else { return nil }
        return byTokenHash[DeviceToken.hash(token)].flatMap { records[$0] }
    }

    /// The device HA's relay body addresses by its `push_token`.
    func device(forPushToken token: String) -> DeviceRecord? {
        byPushToken[token].flatMap { records[$0] }
    }

    // MARK: Devices at run time

    /// A new device (its id is free): it can authenticate with the token whose hash is given at once.
    func add(id: String, name: String, tokenHash: String, notifications: NotificationRouting) -> DeviceRecord {
        let device = DeviceRecord(
            id: id, name: name, source: .api, tokenHash: tokenHash,
            ledger: DeviceLedger(deviceId: id, epoch: epoch, notificationQueueBytes: queueBytes))
        device.notifications = notifications
        insert(device)
        resort()
        return device
    }

    /// A new token for the device: the old one stops working now.
    func setToken(hash: String, of device: DeviceRecord) {
        byTokenHash.removeValue(forKey: device.tokenHash)
        device.tokenHash = hash
        byTokenHash[hash] = device.id
    }

    /// Forgets a device and every route to it; returns it (its sessions are the caller's to close).
    @discardableResult
    func remove(_ id: String) -> DeviceRecord? {
        guard let device = records.removeValue(forKey: id) else { return nil }
        changes &+= 1
        historyBudget.add(-device.countedHistoryBytes)
        device.countedHistoryBytes = 0
        byTokenHash.removeValue(forKey: device.tokenHash)
        byPushToken = byPushToken.filter { $0.value != id }
        resort()
        return device
    }

    // MARK: Resume histories

    /// What every device's resume history weighs together (estimated bytes; a metric).
    var historyBytes: Int { historyBudget.total }

    /// The device's ledger recorded changes: its history's growth is counted and, past the budget, the biggest
    /// histories lose their oldest changes. Call after every ledger change, before the changes are fanned out.
    func settleHistory(of device: DeviceRecord) {
        count(device)
        guard historyBudget.isOver else { return }
        let sizes = sorted.map(\.countedHistoryBytes)
        guard let level = ResumeHistoryBudget.level(sizes: sizes, target: historyBudget.target) else { return }
        for other in sorted where other.countedHistoryBytes > level {
            other.ledger.trimHistory(toBytes: level)
            count(other)
        }
    }

    private func count(_ device: DeviceRecord) {
        let bytes = device.ledger.history.bytes
        historyBudget.add(bytes - device.countedHistoryBytes)
        device.countedHistoryBytes = bytes
    }

    // MARK: Relay routes

    /// A client of `device` registered its relay credentials; the push_token routes to it from now on. A push_token
    /// belongs to the device that registered it first, until that device registers another, unregisters, or is
    /// removed (or the admin clears its registration): a claim from another device is refused with the owner's id,
    /// so no device can take another's notifications.
    func register(_ registration: DeviceRecord.Registration, for device: DeviceRecord) -> Result<Void, TokenClaimed> {
        if let owner = byPushToken[registration.pushToken], owner != device.id, records[owner] != nil {
            return .failure(TokenClaimed(owner: owner))
        }
        if let old = device.registration?.pushToken, old != registration.pushToken, byPushToken[old] == device.id {
            byPushToken.removeValue(forKey: old)
        }
        device.registration = registration
        byPushToken[registration.pushToken] = device.id
        return .success(())
    }

    /// The device lets its push_token go (`unregister`, or the admin): HA's relay bodies with it route nowhere.
    func unregister(_ device: DeviceRecord) {
        if let token = device.registration?.pushToken, byPushToken[token] == device.id { byPushToken.removeValue(forKey: token) }
        device.registration = nil
    }

    struct TokenClaimed: Error, Equatable {
        let owner: String
    }

    /// HA-native mode: HA's push_url fallback for its own registration's token reaches `id`, without making it the
    /// device's relay registration (that push_url is lanpush itself).
    func route(pushToken token: String, to id: String) {
        guard records[id] != nil else { return }
        byPushToken[token] = id
    }
}

extension DeviceDirectory {
    /// A device session's record, kept on the session until a device is added or removed: each frame written and
    /// each ack read asks for it, and a lookup by id hashes the id every time.
    func device(of session: StreamSession) -> DeviceRecord? {
        guard let id = session.deviceId else { return nil }
        if let found = session.foundDevice, found.changes == changes { return found.record }
        let record = self[id]
        session.foundDevice = (changes, record)
        return record
    }
}
