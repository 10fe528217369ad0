import Foundation
import LanpushCore

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
        let command: PushCommand
        do {
            command = try PayloadInterpreter.interpret(request.notification, now: now)
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
            relayUnknownToken(request, command: command, path: path, now: now)
            return relayAccepted(request, status: 202, now: now)
        }
        let webhookId = request.registrationInfo["webhook_id"]?.stringValue
        let event = request.notification.data["event"]?.stringValue.flatMap(LiveEvent.init(rawValue:))
        let liveActivityToken = request.liveActivityToken ?? command.tag.flatMap { device.liveActivityTokens[$0]?["token"]?.stringValue }
        let relay = RelayBody.forwarding(request.raw, acceptedAt: now, liveActivityToken: liveActivityToken, event: event)
        let connected = apply(command, to: deviceId, webhookId: webhookId, relay: relay, path: path)
        return relayAccepted(request, status: connected ? 201 : 202, now: now)
    }

    private func relayAccepted(_ request: RelayPushRequest, status: Int, now: Double, count: Bool = true) -> HTTPAnswer {
        if count { counters.record(request.pushToken, success: true, now: now) }
        return HTTPAnswer(status: status, body: [
            "messageId": .string(UUID().uuidString.lowercased()), "target": .string(request.pushToken),
            "rateLimits": counters.json(for: request.pushToken, now: now),
        ])
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
        let command: PushCommand
        let message: NotifyMessage
        let now = clock()
        do {
            message = try NotifyMessage.decode(rest)
            command = try PayloadInterpreter.interpret(message, now: now)
        } catch {
            metrics.reject("validation")
            return .error(400, error)
        }
        var results = [JSONValue]()
        var known = 0
        for id in targets {
            guard devices[id] != nil else {
                results.append(["target": .string(id), "result": "unknown_target"])
                continue
            }
            known += 1
            let device = devices[id]!
            let relay = RelayBody.native(
                message, pushToken: device.registration?.pushToken, registrationInfo: device.registration?.registrationInfo,
                acceptedAt: now, liveActivityToken: command.tag.flatMap { device.liveActivityTokens[$0]?["token"]?.stringValue })
            let delivered = apply(command, to: id, webhookId: nil, relay: relay)
            let result = delivered ? "delivered" : relayReachable(device) ? "relay" : "queued"
            results.append(["target": .string(id), "result": .string(result)])
        }
        if known == 0 {
            metrics.reject("no_target")
            return HTTPAnswer(status: 404, body: [
                "message": "targets: no such device", "field": "targets", "rule": "exists", "results": .array(results),
            ])
        }
        return HTTPAnswer(status: 202, body: ["results": .array(results)])
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

    /// `DELETE /v1/activities[/{tag}]?dismissal=immediate|default|<seconds>&device=`.
    func endActivities(tag: String?, device filter: String?, dismissal text: String?) -> HTTPAnswer {
        let policy: DismissalPolicy
        switch text {
        case nil, "default": policy = .default
        case "immediate": policy = .immediate
        case let value?:
            guard let seconds = Double(value), seconds.isFinite else {
                return .error(400, field: "dismissal", rule: "enum", "dismissal: use immediate, default or a number of seconds")
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
            return .error(404, field: "tag", rule: "exists", "tag: no live activity '\(tag)'")
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
