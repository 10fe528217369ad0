import Foundation
import LanpushCore

/// The two ingest endpoints: HA's relay body (`/api/sendPushNotification`, `/api/sendPush/android/v1`), answered as
/// HA's relay answers, and `POST /v1/push`, answered with a result per target. Loop thread only.
final class IngestEndpoints {
    private let ingest: Ingest
    private let relay: RelayHandOver
    private let metrics: GatewayMetrics
    private let clock: () -> Double
    private let allDevices: () -> [String]
    private let directory: DeviceDirectory
    /// lanpush's own per-push_token counters for the UTC day, shaped as the relay's `rateLimits`.
    private(set) var counters: RateLimitCounters

    init(ingest: Ingest, relay: RelayHandOver, directory: DeviceDirectory, quota: Int, metrics: GatewayMetrics,
         clock: @escaping () -> Double, allDevices: @escaping () -> [String]) {
        self.directory = directory
        self.ingest = ingest
        self.relay = relay
        self.metrics = metrics
        self.clock = clock
        self.allDevices = allDevices
        self.counters = RateLimitCounters(maximum: quota)
    }

    /// 201 when a LAN session carries it, 202 when it is queued or on the relay path (HA treats both as success),
    /// with `warnings` for what was read as the apps read it (`LenientPayload`) or could not be done (a command for
    /// a device without relay credentials); 403 without a push_token (the relay's own answer), 400 for a body that
    /// is no JSON object or a push_token longer than any device may register, 404 for a push_token no device
    /// registered (unless `relay.proxy_unknown_tokens`).
    func relayIngest(_ body: JSONValue, path: String, from peer: String = "") -> APIResponse {
        let now = clock()
        // Refused before anything is kept of it: no device can have registered it.
        if let token = body["push_token"]?.stringValue, token.utf8.count > ClientFrame.maxPushToken {
            metrics.reject("validation")
            return .error(400, field: "push_token", rule: "max_length",
                "push_token: at most \(ClientFrame.maxPushToken) bytes (no device can have registered a longer one)")
        }
        let request: IngestRequest
        do {
            request = try IngestRequest.relayBody(body, path: path, peer: peer, now: now)
        } catch {
            if error.field == "push_token" {
                metrics.reject("forbidden")
                return .error(403, error, extra: ["errorMessage": "You did not send a token!"])
            }
            metrics.reject("validation")
            if let token = body["push_token"]?.stringValue, isKnown(token) { counters.record(token, success: false, now: now) }
            return .error(400, error)
        }
        guard case .relayBody(let relayRequest, _, _) = request.source else {
            return .error(500, field: "", rule: "internal", "internal error")
        }
        let token = relayRequest.pushToken
        switch ingest.submit(request) {
        case .unknownToken:
            metrics.reject("unknown_token")
            return .error(404, field: "push_token", rule: "registered",
                "push_token: no device registered it (and relay.proxy_unknown_tokens is off)")
        case .proxyThrottled(let wait):
            metrics.reject("proxy_throttled")
            let seconds = AuthThrottle.seconds(wait)
            var answer = APIResponse.error(429, field: "push_token", rule: "proxy_per_minute",
                "too many relay bodies for unregistered push_tokens from this address; try again in \(seconds) s",
                extra: ["errorType": "RateLimited", "target": .string(token)])
            answer.headers.append(.init(name: "Retry-After", value: "\(seconds)"))
            return answer
        case .duplicate:
            // HA re-posts after a local-push confirm timeout: accepted already, not applied twice.
            return accepted(token, status: 201, now: now, count: false, warnings: [])
        case .proxied:
            return accepted(token, status: 202, now: now, relayed: true, warnings: request.accepted.warnings)
        case .routed(let results):
            let routed = results.first?.routed
            if routed?.refused ?? true {
                // HA's relay takes it (a command, a notification routed to the relay): answered as accepted, with why
                // nothing could be done, as HA only logs a refusal anyway.
                metrics.reject("no_relay")
                let why = Ingest.noRelay(request.command, device: results.first?.target ?? "", field: "push_token")
                return accepted(token, status: 202, now: now, warnings: request.accepted.warnings + [
                    FieldWarning(field: why.field, rule: why.rule, message: why.message),
                ])
            }
            return accepted(
                token, status: routed?.lan == .delivered ? 201 : 202, now: now, relayed: routed?.relay ?? false,
                warnings: request.accepted.warnings)
        }
    }

    /// A push_token some device registered (or HA-native mode routes): only those get counters of their own.
    private func isKnown(_ token: String) -> Bool { directory.device(forPushToken: token) != nil }

    /// `relayed`: it went to the relay path, so `remaining` counts it until the relay itself says how many are left.
    private func accepted(
        _ token: String, status: Int, now: Double, count: Bool = true, relayed: Bool = false, warnings: [FieldWarning]
    ) -> APIResponse {
        if count { counters.record(token, success: true, relayed: relayed, now: now) }
        var body: [String: JSONValue] = [
            "messageId": .string(UUID().uuidString.lowercased()), "target": .string(token),
            "rateLimits": counters.json(for: token, remaining: relay.remainingByToken[token], now: now),
        ]
        if !warnings.isEmpty { body["warnings"] = .array(warnings.map(\.json)) }
        return .json(status, .object(body))
    }

    /// 202 with a result per target (`delivered`, `queued`, `relay`, `no_relay`, `unknown_target`); 404 when no
    /// target exists; 422 when every target needed relay credentials it lacks.
    func push(_ body: JSONValue) -> APIResponse {
        let request: IngestRequest
        do {
            request = try IngestRequest.native(body, allDevices: allDevices, now: clock())
        } catch {
            metrics.reject("validation")
            return .error(400, error)
        }
        guard case .routed(let outcome) = ingest.submit(request) else { return .error(500, field: "", rule: "internal", "internal error") }
        let results = outcome.map { TargetResult(target: $0.target, routed: $0.routed) }
        switch Ingest.verdict(outcome, command: request.command) {
        case .refused(let error) where error.rule == "exists":
            metrics.reject("no_target")
            return .error(404, error).adding("results", .array(results.map(\.json)))
        case .refused(let error):
            metrics.reject("no_relay")
            return .error(422, error, extra: ["results": .array(results.map(\.json))])
        case .accepted:
            return APIResponse(
                status: 202, contentType: "application/json",
                body: TargetResult.answer(results, warnings: request.accepted.warnings.map(\.json)))
        }
    }
}

extension APIResponse {
    /// The same JSON answer with one more member.
    func adding(_ key: String, _ value: JSONValue) -> APIResponse {
        guard case .object(var o)? = json else { return self }
        o[key] = value
        return .json(status, .object(o))
    }
}
