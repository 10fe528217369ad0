import LanpushCore
import Logging

/// Devices at run time: add, rename or re-route, give a new token, remove. A device of the config file is read-only
/// here (the file is the user's; it wins). Loop thread only.
struct DeviceCommands {
    let directory: DeviceDirectory
    let sessions: SessionRegistry
    let journal: Journal
    let relay: RelayHandOver
    let report: DeviceReport
    let events: DeviceEvents
    let metrics: GatewayMetrics
    let logger: Logger
    let clock: () -> Double
    let window: Int

    enum Failure: Error, Equatable {
        case invalid(FieldError)
        /// The id is taken (by a device of the config file when `configKey` is set).
        case exists(id: String, configKey: String?)
        /// A device of the config file: change it there.
        case readOnly(id: String, configKey: String)
        case notFound(String)
    }

    /// Device ids: what the config file allows, and what URLs and the store take as they are.
    static func validateId(_ id: String) -> Bool {
        id.utf8.count <= 64 && !id.isEmpty && id.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F || b == 0x2E
        }
    }

    /// The store's text columns end at a NUL (SQLite's C strings): such a name would come back cut after a restart.
    static func refuseNUL(_ name: String?) -> Failure? {
        guard let name, name.utf8.contains(0) else { return nil }
        return .invalid(FieldError(field: "name", rule: "nul", message: "name: must not contain NUL characters"))
    }

    /// A new device with a new token (returned once: only its hash is kept).
    func add(id: String, name: String?, notifications: NotificationRouting = .auto) -> Result<(DeviceRecord, token: String), Failure> {
        guard Self.validateId(id) else {
            return .failure(.invalid(FieldError(field: "id", rule: "pattern", message: "id: use 1-64 letters, digits, '.', '-' or '_'")))
        }
        if let existing = directory[id] { return .failure(.exists(id: id, configKey: configKey(existing))) }
        if let refused = Self.refuseNUL(name) { return .failure(refused) }
        let token = DeviceToken.make()
        let device = directory.add(
            id: id, name: (name?.isEmpty ?? true) ? id : name!, tokenHash: DeviceToken.hash(token), notifications: notifications)
        // Observers of every device see the new one from now on.
        for observer in sessions.observers(of: id) where observer.subscribed && !observer.follows(id) {
            observer.coalescers[id] = Coalescer.subscribe(ledger: device.ledger, resume: nil, window: 1 << 30).0
            observer.transport.requestWritable()
        }
        journal.recordManaged(device, createdAt: clock())
        journal.record(device: device)
        report.announce(device)
        events.added(device)
        logger.info("device added", metadata: ["device": "\(id)"])
        return .success((device, token))
    }

    func update(id: String, name: String?, notifications: NotificationRouting?) -> Result<DeviceRecord, Failure> {
        let device: DeviceRecord
        switch writable(id) {
        case .success(let d): device = d
        case .failure(let f): return .failure(f)
        }
        if let refused = Self.refuseNUL(name) { return .failure(refused) }
        if let name, !name.isEmpty { device.name = name }
        if let notifications { device.notifications = notifications }
        journal.recordManaged(device, createdAt: clock())
        report.announce(device)
        return .success(device)
    }

    /// A new token: the old one stops working at once and the device's sessions are closed with 4001.
    func rotate(id: String, closing reason: String = "token replaced") -> Result<(DeviceRecord, token: String), Failure> {
        let device: DeviceRecord
        switch writable(id) {
        case .success(let d): device = d
        case .failure(let f): return .failure(f)
        }
        let token = DeviceToken.make()
        directory.setToken(hash: DeviceToken.hash(token), of: device)
        closeSessions(of: device, reason: reason)
        journal.recordManaged(device, createdAt: clock())
        logger.info("device token replaced", metadata: ["device": "\(id)"])
        return .success((device, token))
    }

    /// Removes a device: its sessions close with 4001; its activities, queue and relay items are dropped.
    func remove(id: String) -> Result<Void, Failure> {
        let device: DeviceRecord
        switch writable(id) {
        case .success(let d): device = d
        case .failure(let f): return .failure(f)
        }
        closeSessions(of: device, reason: "device removed")
        directory.remove(id)
        relay.forget(device)
        journal.recordRemoved(device: id)
        metrics.devicesConnected.record(directory.connectedCount)
        sessions.announceRemoved(id)
        for observer in sessions.observers(of: id) { observer.coalescers.removeValue(forKey: id) }
        events.removed(device)
        logger.info("device removed", metadata: ["device": "\(id)"])
        return .success(())
    }

    /// Clears the device's relay registration (config devices too: their registration comes from their clients, not
    /// the file), so another device may register its push_token.
    func clearRegistration(id: String) -> Result<DeviceRecord, Failure> {
        guard let device = directory[id] else { return .failure(.notFound(id)) }
        directory.unregister(device)
        journal.record(device: device)
        report.announce(device)
        logger.info("device registration cleared by the admin", metadata: ["device": "\(id)"])
        return .success(device)
    }

    private func writable(_ id: String) -> Result<DeviceRecord, Failure> {
        guard let device = directory[id] else { return .failure(.notFound(id)) }
        if let key = configKey(device) { return .failure(.readOnly(id: id, configKey: key)) }
        return .success(device)
    }

    private func configKey(_ device: DeviceRecord) -> String? {
        if case .config(let index) = device.source { return "devices[\(index)]" }
        return nil
    }

    private func closeSessions(of device: DeviceRecord, reason: String) {
        for sid in device.sessions {
            if let session = sessions[sid] {
                session.queueControl(["type": "auth_invalid", "message": .string(reason)])
                sessions.close(session, code: .authInvalid, reason: reason)
            }
        }
    }
}
