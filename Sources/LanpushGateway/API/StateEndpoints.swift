import LanpushCore

/// The read-and-end endpoints: activities (`GET` / `DELETE /v1/activities[/{tag}]`), devices and health. Loop
/// thread only.
struct StateEndpoints {
    let activities: ActivityCommands
    let directory: DeviceDirectory
    let report: DeviceReport
    let sessions: SessionRegistry
    let epoch: String

    /// A dismissal interval beyond a day means no real time (the system keeps an ended card 4 h at most anyway).
    static let maxDismissalInterval: Double = 86_400

    func activities(tag: String?, device: String?) -> APIResponse {
        switch activities.list(tag: tag, device: device) {
        case .success(let items): return .json(200, ["activities": .array(items)])
        case .failure(let failure): return Self.notFound(failure, live: false)
        }
    }

    /// `?dismissal=immediate|default|<seconds>&device=`. An ended activity that is still visible takes the new
    /// dismissal; a dismissed or unknown tag is 404.
    func endActivities(tag: String?, device: String?, dismissal text: String?) -> APIResponse {
        let policy: DismissalPolicy
        switch text {
        case nil, "default": policy = .default
        case "immediate": policy = .immediate
        case let value?:
            guard let seconds = Double(value), seconds.isFinite, abs(seconds) <= Self.maxDismissalInterval else {
                return .error(400, field: "dismissal", rule: "enum",
                    "dismissal: use immediate, default or a number of seconds within ±\(Int(Self.maxDismissalInterval))")
            }
            policy = DismissalPolicy(interval: seconds)
        }
        switch activities.end(tag: tag, device: device, dismissal: policy) {
        case .success(let ended):
            return .json(200, ["ended": .array(ended.map { ["device_id": .string($0.device), "tag": .string($0.tag)] })])
        case .failure(let failure):
            return Self.notFound(failure, live: true)
        }
    }

    private static func notFound(_ failure: ActivityCommands.Failure, live: Bool) -> APIResponse {
        switch failure {
        case .noDevice(let id):
            return .error(404, field: "device", rule: "exists", "device: no device '\(id)'")
        case .noActivity(let tag):
            return .error(404, field: "tag", rule: "exists", "tag: no \(live ? "live or ended " : "")activity '\(tag)'")
        }
    }

    func devices(for grant: AccessControl.Grant) -> APIResponse {
        .json(200, ["devices": .array(directory.sorted.map { report.json($0, for: grant) })])
    }

    func device(_ id: String, for grant: AccessControl.Grant) -> APIResponse {
        guard let device = directory[id] else { return .error(404, field: "device", rule: "exists", "device: no device '\(id)'") }
        return .json(200, report.json(device, for: grant))
    }

    func health() -> APIResponse {
        .json(200, [
            "status": "ok", "version": .string(LanpushVersion.current), "sessions": .number(Double(sessions.count)),
            "devices": .number(Double(directory.count)), "epoch": .string(epoch),
        ])
    }
}
