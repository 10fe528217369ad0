import LanpushCore

/// The REST API's way to read and end activities: `GET` and `DELETE /v1/activities[/{tag}]`. Loop thread only.
struct ActivityCommands {
    let directory: DeviceDirectory
    let publish: PublishStep
    let clock: () -> Double

    enum Failure: Error, Equatable {
        case noDevice(String)
        case noActivity(String)
    }

    /// The activities not yet dismissed, on every device or `device`, of `tag` or all; each with its `device_id`.
    func list(tag: String?, device filter: String?) -> Result<[JSONValue], Failure> {
        if let filter, directory[filter] == nil { return .failure(.noDevice(filter)) }
        var items = [JSONValue]()
        for device in directory.sorted where filter == nil || filter == device.id {
            for activity in device.ledger.visibleActivities where tag == nil || tag == activity.tag {
                guard case .object(var o) = activity.json else { continue }
                o["device_id"] = .string(device.id)
                items.append(.object(o))
            }
        }
        if let tag, items.isEmpty { return .failure(.noActivity(tag)) }
        return .success(items)
    }

    /// Ends `tag` (or every activity) on every device or `device`. An ended activity still visible takes the new
    /// dismissal (the preview's *Dismiss*); returns the (device, tag) pairs it changed.
    func end(tag: String?, device filter: String?, dismissal policy: DismissalPolicy) -> Result<[(device: String, tag: String)], Failure> {
        if let filter, directory[filter] == nil { return .failure(.noDevice(filter)) }
        var ended = [(device: String, tag: String)]()
        let now = clock()
        for device in directory.sorted where filter == nil || filter == device.id {
            let changes: [Change]
            if let tag {
                changes = device.ledger.end(tag: tag, dismissal: policy, now: now).map { [$0] } ?? []
            } else {
                changes = device.ledger.endAll(dismissal: policy, now: now)
            }
            for change in changes { ended.append((device.id, change.tag ?? "")) }
            publish.publish(changes, of: device, relay: .gatewayEnds)
        }
        if let tag, ended.isEmpty { return .failure(.noActivity(tag)) }
        return .success(ended)
    }
}
