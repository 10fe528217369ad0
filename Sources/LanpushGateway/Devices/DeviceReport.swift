import LanpushCore

/// What `GET /v1/devices` and the observers' `device` frames say about a device: its record, plus what the relay
/// path knows of it. Loop thread only.
struct DeviceReport {
    let sessions: SessionRegistry
    let relay: RelayHandOver
    let events: DeviceEvents
    let clock: () -> Double

    func json(_ device: DeviceRecord) -> JSONValue {
        guard case .object(var o) = device.json(now: clock()) else { return device.json(now: clock()) }
        // Gone, it is on the relay path when it has relay credentials (its push_url, or the upstream) the relay has
        // not refused (403).
        if !device.isConnected { o["path"] = relay.isReachable(device) ? "relay" : "none" }
        if let status = relay.status(of: device.id) { o["relay"] = status }
        return .object(o)
    }

    /// Tells observers the device's sessions, path or registration changed.
    func announce(_ device: DeviceRecord) {
        sessions.announce(json(device), of: device.id)
        events.changed(device)
    }
}
