import Foundation
import LanpushCore
import LanpushLWS
import Logging

/// Maps HTTP requests to the API's endpoints: path checks, authentication, content checks, JSON in; an
/// `APIResponse` out. The only layer that speaks HTTP status codes. Loop thread only. A class: a struct of this many
/// references was copied (each one retained and released) on every request.
final class Router {
    enum Access {
        case open, read, write
    }

    let ingest: IngestEndpoints
    let state: StateEndpoints
    let devices: DeviceEndpoints
    let access: AccessControl
    let throttle: AuthThrottle
    let clock: () -> Double
    let openMetrics: Bool
    let metrics: GatewayMetrics
    let logger: Logger
    let renderMetrics: () -> String
    /// The files lanpushd serves from its binary (the live preview, the wall view), by path.
    let page: (String) -> PageAsset?
    /// Which `Host` names and `Origin`s are served (DNS rebinding, cross-site requests).
    let hosts: HostAllowList
    /// This gateway's id, as it marks the relay requests it sends (`RelayClient.hopHeader`).
    let gatewayId: String

    init(
        ingest: IngestEndpoints, state: StateEndpoints, devices: DeviceEndpoints, access: AccessControl, throttle: AuthThrottle,
        clock: @escaping () -> Double, openMetrics: Bool, metrics: GatewayMetrics, logger: Logger,
        renderMetrics: @escaping () -> String, page: @escaping (String) -> PageAsset?, hosts: HostAllowList,
        gatewayId: String
    ) {
        self.hosts = hosts
        self.gatewayId = gatewayId
        self.ingest = ingest
        self.state = state
        self.devices = devices
        self.access = access
        self.throttle = throttle
        self.clock = clock
        self.openMetrics = openMetrics
        self.metrics = metrics
        self.logger = logger
        self.renderMetrics = renderMetrics
        self.page = page
    }

    static let knownPaths: [[String]] = [
        ["healthz"], ["metrics"], ["api", "sendPushNotification"], ["api", "sendPush", "android", "v1"], ["v1", "push"],
        ["v1", "activities"], ["v1", "activities", "*"], ["v1", "devices"], ["v1", "devices", "*"],
        ["v1", "devices", "*", "token"], ["v1", "devices", "*", "registration"], ["v1", "pairings"], ["v1", "pair"],
    ]

    /// The segments of the paths without a parameter, found by one lookup: splitting "/v1/push" into strings was
    /// ~2,500 instructions, 2.5 % of an HTTP notification.
    private static let fixedPaths: [String: [String]] = Dictionary(
        uniqueKeysWithValues: knownPaths.filter { !$0.contains("*") }.map { ("/" + $0.joined(separator: "/"), $0) })

    func route(_ request: HTTPRequest) -> APIResponse {
        if let refused = hosts.refusal(host: request.header("host"), origin: request.header("origin")) {
            return reject(403, refused.field, field: refused.field, rule: refused.field == "host" ? "allowed_hosts" : "same_origin",
                refused.message)
        }
        var path = request.path
        // A page may be asked for with a trailing slash ("/preview/"); an API path may not.
        if path.utf8.count > 1, path.hasSuffix("/"), page(String(path.dropLast())) != nil { path.removeLast() }
        // An empty segment is never meant: lws cuts a decoded path at `%00`, so `DELETE /v1/activities/%00` arrives
        // as "/v1/activities/" — which must not read as "every activity".
        // Split on the UTF-8 bytes: splitting by Character cost ~4,700 instructions for "/v1/push", 2 % of an ingest.
        let segments = Self.fixedPaths[path] ?? (path == "/"
            ? []
            : path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
                .map { String(decoding: $0, as: UTF8.self) })
        if path.utf8.contains(0) || segments.contains("") {
            let shown = path.map { $0 == "\0" ? "%00" : String($0) }.joined()
            return reject(400, "bad_path", field: "path", rule: "segment",
                "path: empty segments and NUL bytes are not allowed (got '\(shown)')")
        }
        switch (request.method, segments) {
        case (.get, ["healthz"]), (.head, ["healthz"]):
            return state.health()
        case (.get, ["metrics"]):
            if !openMetrics, let denied = authorize(request, .read) { return denied }
            return .uncached("text/plain; version=0.0.4; charset=utf-8", Array(renderMetrics().utf8))
        case (.post, ["api", "sendPushNotification"]), (.post, ["api", "sendPush", "android", "v1"]):
            // A request this gateway relayed, come back (a push_url naming it by a name it does not know): never
            // relayed again.
            if let hops = request.header(RelayClient.hopHeader),
               hops.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == gatewayId })
            {
                return reject(508, "relay_loop", field: RelayClient.hopHeader, rule: "loop",
                    "this request was relayed by this gateway and came back to it: a push_url points here")
            }
            // HA's relay-compatible ingest: no auth header (the push_token is the credential), like the relay.
            return withJSONBody(request) { ingest.relayIngest($0, path: path, from: request.remoteAddress) }
        case (.post, ["v1", "push"]):
            if let denied = authorize(request, .write) { return denied }
            return withJSONBody(request) { ingest.push($0) }
        case (.get, _) where segments.count <= 3 && segments.starts(with: ["v1", "activities"]):
            if let denied = authorize(request, .read) { return denied }
            return state.activities(tag: segments.count == 3 ? segments[2] : nil, device: request.query["device"])
        case (.delete, _) where segments.count <= 3 && segments.starts(with: ["v1", "activities"]):
            if let denied = authorize(request, .write) { return denied }
            return state.endActivities(
                tag: segments.count == 3 ? segments[2] : nil, device: request.query["device"], dismissal: request.query["dismissal"])
        case (.get, ["v1", "devices"]):
            if let denied = authorize(request, .read) { return denied }
            return state.devices(for: grant(request))
        case (.get, _) where Self.matches(segments, ["v1", "devices", "*"]):
            if let denied = authorize(request, .read) { return denied }
            return state.device(segments[2], for: grant(request))
        case (.post, ["v1", "devices"]):
            if let denied = authorize(request, .write) { return denied }
            return withJSONBody(request) { devices.add($0) }
        case (.patch, _) where Self.matches(segments, ["v1", "devices", "*"]):
            if let denied = authorize(request, .write) { return denied }
            return withJSONBody(request) { devices.update(segments[2], $0) }
        case (.post, _) where Self.matches(segments, ["v1", "devices", "*", "token"]):
            if let denied = authorize(request, .write) { return denied }
            return devices.rotate(segments[2])
        case (.delete, _) where Self.matches(segments, ["v1", "devices", "*"]):
            if let denied = authorize(request, .write) { return denied }
            return devices.remove(segments[2])
        case (.delete, _) where Self.matches(segments, ["v1", "devices", "*", "registration"]):
            if let denied = authorize(request, .write) { return denied }
            return devices.clearRegistration(segments[2])
        case (.post, ["v1", "pairings"]):
            if let denied = authorize(request, .write) { return denied }
            return withJSONBody(request) { devices.pair($0, host: request.header("host")) }
        case (.post, ["v1", "pair"]):
            // No token: the code is the credential (throttled per address and across addresses).
            return withJSONBody(request) { devices.redeem($0, from: request.remoteAddress) }
        case (.get, _) where page(path) != nil:
            return page(path)!.response(ifNoneMatch: request.header("if-none-match"))
        default:
            if Self.isKnown(segments) {
                return reject(405, "method", field: "method", rule: "method", "method \(request.method.rawValue) is not allowed on \(path)")
            }
            return reject(404, "not_found", field: "path", rule: "exists", "no such endpoint: \(path)")
        }
    }

    static func throttled(_ wait: Double, metrics: GatewayMetrics) -> APIResponse {
        metrics.reject("throttled")
        let seconds = AuthThrottle.seconds(wait)
        var answer = APIResponse.error(429, field: "authorization", rule: "throttled",
            "too many failed authentications from this address; try again in \(seconds) s")
        answer.headers.append(.init(name: "Retry-After", value: "\(seconds)"))
        return answer
    }

    static func isKnown(_ segments: [String]) -> Bool {
        knownPaths.contains { matches(segments, $0) }
    }

    /// `*` matches any one segment.
    static func matches(_ segments: [String], _ pattern: [String]) -> Bool {
        pattern.count == segments.count && zip(pattern, segments).allSatisfy { $0 == "*" || $0 == $1 }
    }

    private func reject(_ status: Int, _ reason: String, field: String, rule: String, _ message: String) -> APIResponse {
        metrics.reject(reason)
        logger.info("rejected request", metadata: ["status": "\(status)", "reason": "\(reason)", "field": "\(field)"])
        return .error(status, field: field, rule: rule, message)
    }

    private func withJSONBody(_ request: HTTPRequest, _ body: (JSONValue) -> APIResponse) -> APIResponse {
        let type = request.header("content-type") ?? ""
        guard Self.isJSON(type) else {
            let shown = type.lowercased()
            return reject(400, "content_type", field: "content-type", rule: "content_type",
                "Content-Type must be application/json (got '\(shown.isEmpty ? "none" : shown)')")
        }
        do {
            return body(try JSONValue.parse(request.body))
        } catch {
            return reject(400, "invalid_json", field: "body", rule: "json", "the body is not valid JSON: \(error)")
        }
    }

    /// Who the request's bearer token is (`authorize` already let it read).
    private func grant(_ request: HTTPRequest) -> AccessControl.Grant {
        access.grant(for: Self.bearerToken(request.header("authorization") ?? "")) ?? .viewer
    }

    /// `nil` when allowed; otherwise the 401 answer (429 for an address refused after too many bad tokens).
    private func authorize(_ request: HTTPRequest, _ needed: Access) -> APIResponse? {
        let header = request.header("authorization") ?? ""
        let token = Self.bearerToken(header)
        if let wait = throttle.retryAfter(request.remoteAddress, now: clock()) {
            return Self.throttled(wait, metrics: metrics)
        }
        let grant = access.grant(for: token)
        if grant == nil, !token.isEmpty { throttle.failed(request.remoteAddress, now: clock()) }
        switch (needed, grant) {
        case (.open, _), (.read, .admin?), (.read, .viewer?), (.write, .admin?):
            return nil
        default:
            let message = token.isEmpty
                ? "missing bearer token (Authorization: Bearer <token>)"
                : (grant == .viewer ? "the viewer token cannot write" : "invalid token")
            return reject(401, "auth", field: "authorization", rule: "auth", message)
        }
    }
}

extension Router {
    /// `application/json`, in any case, with or without parameters (`; charset=utf-8`). Nothing else: a page on
    /// another site can send `text/plain` (or `text/plain;x=+json`) without a preflight, never `application/json`.
    /// On the bytes, with no lowered copy: every push asks.
    static func isJSON(_ contentType: String) -> Bool {
        var bytes = contentType.utf8[...]
        while bytes.first == 0x20 || bytes.first == 0x09 { bytes = bytes.dropFirst() }
        guard lowerASCIIEquals(bytes.prefix(16), "application/json") else { return false }
        let rest = bytes.dropFirst(16).drop { $0 == 0x20 || $0 == 0x09 }
        return rest.isEmpty || rest.first == UInt8(ascii: ";")
    }

    /// `part` in any case is `expected` (lower case).
    private static func lowerASCIIEquals(_ part: Substring.UTF8View, _ expected: StaticString) -> Bool {
        guard part.count == expected.utf8CodeUnitCount else { return false }
        var i = 0
        for byte in part {
            let lowered: UInt8 = byte >= 65 && byte <= 90 ? byte | 0x20 : byte
            guard lowered == expected.utf8Start[i] else { return false }
            i += 1
        }
        return true
    }

    /// The token of an `Authorization: Bearer <token>` value (scheme case-insensitive, blanks around the token
    /// ignored), or "". On the bytes: this runs for every authenticated request.
    static func bearerToken(_ header: String) -> String {
        var header = header
        return header.withUTF8 { bytes in
            let scheme: StaticString = "bearer "
            let count = scheme.utf8CodeUnitCount
            guard bytes.count >= count else { return "" }
            for i in 0..<count {
                let expected = scheme.utf8Start[i]
                guard expected == 0x20 ? bytes[i] == 0x20 : bytes[i] | 0x20 == expected else { return "" }
            }
            var start = count, end = bytes.count
            while start < end, bytes[start] == 0x20 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 { end -= 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
    }
}
