import LanpushCore

/// What `GET /v1/devices` and the observers' `device` frames say about a device: its record, plus what the relay
/// path knows of it. Loop thread only.
struct DeviceReport {
    let sessions: SessionRegistry
    let relay: RelayHandOver
    let events: DeviceEvents
    let clock: () -> Double

    /// The whole entry, as the admin sees it.
    func json(_ device: DeviceRecord) -> JSONValue { json(device, for: .admin) }

    /// The entry as `grant` may see it (the viewer: relay credentials redacted).
    func json(_ device: DeviceRecord, for grant: AccessControl.Grant) -> JSONValue {
        let base = device.json(now: clock(), redacted: grant != .admin)
        guard case .object(var o) = base else { return base }
        // Gone, it is on the relay path when it has relay credentials (its push_url, or the upstream) the relay has
        // not refused (403).
        if !device.isConnected { o["path"] = relay.isReachable(device) ? "relay" : "none" }
        if let status = relay.status(of: device.id) { o["relay"] = status }
        return .object(o)
    }

    /// Tells observers the device's sessions, path or registration changed (each as its token may see it).
    func announce(_ device: DeviceRecord) {
        sessions.announce(admin: { json(device, for: .admin) }, viewer: { json(device, for: .viewer) }, of: device.id)
        events.changed(device)
    }
}
