import Foundation
import LanpushCore
import Logging

/// An HTTP answer before it is written: status and JSON body.
struct HTTPAnswer {
    var status: Int
    var body: JSONValue

    static func error(_ status: Int, _ error: FieldError) -> HTTPAnswer {
        HTTPAnswer(status: status, body: error.json)
    }

    static func error(_ status: Int, field: String, rule: String, _ message: String) -> HTTPAnswer {
        HTTPAnswer(status: status, body: FieldError(field: field, rule: rule, message: message).json)
    }
}

/// What the HTTP ingest endpoints do to the hub. Loop thread only.
extension Hub {
    /// HA's relay body (`/api/sendPushNotification`, `/api/sendPush/android/v1`).
    func ingestRelay(_ body: JSONValue, path: String = Hub.iosRelayPath) -> HTTPAnswer {
        let now = clock()
        let request: RelayPushRequest
        do {
            request = try RelayPushRequest.decode(body)
        } catch {
            if error.field == "push_token" {
                metrics.reject("forbidden")
                // The relay's own answer for a missing token, plus our field/rule.
                var o = error.json.objectValue ?? [:]
                o["errorMessage"] = .string("You did not send a token!")
                return HTTPAnswer(status: 403, body: .object(o))
            }
            metrics.reject("validation")
            return .error(400, error)
        }
        let accepted: AcceptedPush
        do {
            accepted = try PayloadInterpreter.accept(request.notification, now: now)
        } catch {
            metrics.reject("validation")
            counters.record(request.pushToken, success: false, now: now)
            return .error(400, error)
        }
        if let confirmId = request.hassConfirmId {
            if let seen = recentConfirmIds[confirmId], now - seen < 60 {
                // HA re-posts after a local-push confirm timeout: accepted already, not applied twice.
                return relayAccepted(request, status: 201, now: now, count: false)
            }
            recentConfirmIds[confirmId] = now
        }
        guard let deviceId = deviceByPushToken[request.pushToken], let device = devices[deviceId] else {
            // A push_token no client registered: proxied to the upstream relay, paced. Never waits for it.
            relayUnknownToken(request, command: accepted.command, path: path, now: now)
            return relayAccepted(request, status: 202, now: now, warnings: accepted.warnings)
        }
        let webhookId = request.registrationInfo["webhook_id"]?.stringValue
        let event = request.notification.data["event"]?.stringValue.flatMap(LiveEvent.init(rawValue:))
        let command = accepted.command
        let liveActivityToken = request.liveActivityToken ?? command.tag.flatMap { device.liveActivityTokens[$0]?["token"]?.stringValue }
        let relay = RelayBody.forwarding(request.raw, acceptedAt: now, liveActivityToken: liveActivityToken, event: event)
        let routed = route(accepted, to: deviceId, webhookId: webhookId, relay: relay, path: path)
        if routed.refused {
            metrics.reject("no_relay")
            counters.record(request.pushToken, success: false, now: now)
            return .error(422, noRelay(accepted.command, device: deviceId, field: "push_token"))
        }
        noteWarnings(accepted, device: deviceId)
        return relayAccepted(request, status: routed.lan == .delivered ? 201 : 202, now: now, warnings: accepted.warnings)
    }

    private func relayAccepted(
        _ request: RelayPushRequest, status: Int, now: Double, count: Bool = true, warnings: [FieldWarning] = []
    ) -> HTTPAnswer {
        if count { counters.record(request.pushToken, success: true, now: now) }
        var body: [String: JSONValue] = [
            "messageId": .string(UUID().uuidString.lowercased()), "target": .string(request.pushToken),
            "rateLimits": counters.json(for: request.pushToken, now: now),
        ]
        if !warnings.isEmpty { body["warnings"] = .array(warnings.map(\.json)) }
        return HTTPAnswer(status: status, body: .object(body))
    }

    /// Why a payload that needs the relay was refused for a device without relay credentials.
    func noRelay(_ command: PushCommand, device: String, field: String) -> FieldError {
        let what: String
        if case .command(let c) = command {
            what = "'\(c.name)' is a companion-app command: only the relay reaches the companion app"
        } else {
            what = "this notification is routed to the relay (the device's `notifications` setting or data.lanpush.path)"
        }
        return FieldError(
            field: field, rule: "relay_credentials",
            message: "\(what), and device '\(device)' has no relay credentials (a registered push_token and push_url, or relay.upstream)")
    }

    /// Logs the warnings about an accepted payload when it starts an activity; on updates they are in the answer
    /// only (an automation that leaves the title out of every update would otherwise fill the log).
    func noteWarnings(_ accepted: AcceptedPush, device id: String) {
        guard !accepted.warnings.isEmpty else { return }
        if case .liveUpdate(let update) = accepted.command, let activity = devices[id]?.ledger.activities[update.tag],
            activity.generation != activity.lastSeq
        {
            return
        }
        for warning in accepted.warnings {
            logger.notice("accepted with a warning: \(warning.message)", metadata: [
                "device": "\(id)", "field": "\(warning.field)", "tag": "\(accepted.command.tag ?? "")",
            ])
        }
    }

    /// `POST /v1/push`: the notify service data plus `targets` (device ids or "all"; missing = all).
    func push(_ body: JSONValue) -> HTTPAnswer {
        guard let object = body.objectValue else {
            metrics.reject("validation")
            return .error(400, field: "", rule: "type", "the body must be a JSON object")
        }
        var targets: [String]
        switch object["targets"] {
        case nil, .null, .string("all"):
            targets = devices.keys.sorted()
        case .string(let one):
            targets = [one]
        case .array(let list):
            targets = []
            for (i, item) in list.enumerated() {
                guard let id = item.stringValue else {
                    metrics.reject("validation")
                    return .error(400, field: "targets[\(i)]", rule: "type", "targets[\(i)]: must be a device id string")
                }
                targets.append(id)
            }
        default:
            metrics.reject("validation")
            return .error(400, field: "targets", rule: "type", "targets: must be \"all\" or a list of device ids")
        }
        var rest = object
        rest.removeValue(forKey: "targets")
        let accepted: AcceptedPush
        let message: NotifyMessage
        let now = clock()
        do {
            message = try NotifyMessage.decode(rest)
            accepted = try PayloadInterpreter.accept(message, now: now)
        } catch {
            metrics.reject("validation")
            return .error(400, error)
        }
        let command = accepted.command
        var results = [JSONValue]()
        var known = 0
        var refused = [String]()
        for id in targets {
            guard let device = devices[id] else {
                results.append(["target": .string(id), "result": "unknown_target"])
                continue
            }
            known += 1
            let relay = RelayBody.native(
                message, pushToken: device.registration?.pushToken, registrationInfo: device.registration?.registrationInfo,
                acceptedAt: now, liveActivityToken: command.tag.flatMap { device.liveActivityTokens[$0]?["token"]?.stringValue })
            let routed = route(accepted, to: id, webhookId: nil, relay: relay)
            var result: [String: JSONValue] = ["target": .string(id), "result": .string(routed.result)]
            if routed.relay && routed.lan != .none && routed.result != "relay" { result["relay"] = true }
            if routed.refused { refused.append(id) }
            results.append(.object(result))
            if !routed.refused { noteWarnings(accepted, device: id) }
        }
        if known == 0 {
            metrics.reject("no_target")
            return HTTPAnswer(status: 404, body: [
                "message": "targets: no such device", "field": "targets", "rule": "exists", "results": .array(results),
            ])
        }
        if refused.count == known {
            metrics.reject("no_relay")
            var o = noRelay(command, device: refused.joined(separator: "', '"), field: "targets").json.objectValue ?? [:]
            o["results"] = .array(results)
            return HTTPAnswer(status: 422, body: .object(o))
        }
        var answer: [String: JSONValue] = ["results": .array(results)]
        if !accepted.warnings.isEmpty { answer["warnings"] = .array(accepted.warnings.map(\.json)) }
        return HTTPAnswer(status: 202, body: .object(answer))
    }

    func listActivities(tag: String?, device filter: String?) -> HTTPAnswer {
        if let filter, devices[filter] == nil {
            return .error(404, field: "device", rule: "exists", "device: no device '\(filter)'")
        }
        var items = [JSONValue]()
        for device in devices.values.sorted(by: { $0.id < $1.id }) where filter == nil || filter == device.id {
            for activity in device.ledger.visibleActivities where tag == nil || tag == activity.tag {
                guard case .object(var o) = activity.json else { continue }
                o["device_id"] = .string(device.id)
                items.append(.object(o))
            }
        }
        if let tag, items.isEmpty {
            return .error(404, field: "tag", rule: "exists", "tag: no activity '\(tag)'")
        }
        return HTTPAnswer(status: 200, body: ["activities": .array(items)])
    }

    static let maxDismissalInterval: Double = 86_400

    /// `DELETE /v1/activities[/{tag}]?dismissal=immediate|default|<seconds>&device=`. An ended activity that is
    /// still visible takes the new dismissal (the preview's *Dismiss*); a dismissed or unknown tag is 404.
    func endActivities(tag: String?, device filter: String?, dismissal text: String?) -> HTTPAnswer {
        let policy: DismissalPolicy
        switch text {
        case nil, "default": policy = .default
        case "immediate": policy = .immediate
        case let value?:
            // Bounded so the dismissal date stays a real time (a day is far beyond the system's 4 h anyway).
            guard let seconds = Double(value), seconds.isFinite, abs(seconds) <= Self.maxDismissalInterval else {
                return .error(400, field: "dismissal", rule: "enum",
                    "dismissal: use immediate, default or a number of seconds within ±\(Int(Self.maxDismissalInterval))")
            }
            policy = DismissalPolicy(interval: seconds)
        }
        if let filter, devices[filter] == nil {
            return .error(404, field: "device", rule: "exists", "device: no device '\(filter)'")
        }
        var ended = [JSONValue]()
        let now = clock()
        for device in devices.values.sorted(by: { $0.id < $1.id }) where filter == nil || filter == device.id {
            let changes: [Change]
            if let tag {
                changes = device.ledger.end(tag: tag, dismissal: policy, now: now).map { [$0] } ?? []
            } else {
                changes = device.ledger.endAll(dismissal: policy, now: now)
            }
            for change in changes { ended.append(["device_id": .string(device.id), "tag": .string(change.tag ?? "")]) }
            fanOut(changes, device: device.id)
        }
        if let tag, ended.isEmpty {
            return .error(404, field: "tag", rule: "exists", "tag: no live or ended activity '\(tag)'")
        }
        return HTTPAnswer(status: 200, body: ["ended": .array(ended)])
    }

    func listDevices() -> HTTPAnswer {
        let now = clock()
        return HTTPAnswer(status: 200, body: ["devices": .array(devices.values.sorted { $0.id < $1.id }.map { device in
            guard case .object(var o) = device.json(now: now) else { return device.json(now: now) }
            if let relay = relayStatus(of: device.id) {
                o["relay"] = relay
                if relay["token_invalid"] == true { o["path"] = "none" }
            }
            return .object(o)
        })])
    }

    func health() -> HTTPAnswer {
        HTTPAnswer(status: 200, body: [
            "status": "ok", "version": .string(LanpushVersion.current), "sessions": .number(Double(sessions.count)),
            "devices": .number(Double(devices.count)), "epoch": .string(epoch),
        ])
    }
}
