import LanpushCore
import LanpushLWS

/// Maps HTTP requests to hub operations: authentication, content checks, JSON in and out.
/// Every answer is JSON (DESIGN.md §10) except `/metrics` (Prometheus text). Loop thread only.
struct Router {
    let hub: Hub
    let renderMetrics: () -> String
    let page: (String) -> (contentType: String, body: [UInt8])?

    enum Access {
        case open, read, write
    }

    /// Answers once whatever the request changed is committed to the store (accepted = committed).
    func handle(_ request: HTTPRequest, _ response: HTTPResponse) {
        let answer = route(request)
        hub.commit { committed in
            guard committed else {
                response.respond(status: 503, body: HTTPAnswer.error(
                    503, field: "store", rule: "durable", "the update could not be stored; retry").body.serializedBytes())
                return
            }
            switch answer {
            case .json(let a):
                response.respond(status: a.status, body: a.body.serializedBytes())
            case .raw(let status, let contentType, let body):
                // Pages and metrics change with every release and every scrape: never served from a cache.
                response.respond(status: status, headers: [("Cache-Control", "no-cache")], body: body, contentType: contentType)
            }
        }
    }

    enum Answer {
        case json(HTTPAnswer)
        case raw(Int, String, [UInt8])
    }

    private func reject(_ status: Int, _ reason: String, field: String, rule: String, _ message: String) -> Answer {
        hub.metrics.reject(reason)
        hub.logger.info("rejected request", metadata: ["status": "\(status)", "reason": "\(reason)", "field": "\(field)"])
        return .json(.error(status, field: field, rule: rule, message))
    }

    func route(_ request: HTTPRequest) -> Answer {
        var path = request.path
        // A page may be asked for with a trailing slash ("/preview/"); an API path may not.
        if path.count > 1, path.hasSuffix("/"), page(String(path.dropLast())) != nil { path.removeLast() }
        // An empty segment is never meant: lws cuts a decoded path at `%00`, so `DELETE /v1/activities/%00` arrives
        // as "/v1/activities/" — which must not read as "every activity".
        if path.utf8.contains(0) || (path != "/" && path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().contains("")) {
            let shown = path.map { $0 == "\0" ? "%00" : String($0) }.joined()
            return reject(400, "bad_path", field: "path", rule: "segment",
                "path: empty segments and NUL bytes are not allowed (got '\(shown)')")
        }
        let segments = path.split(separator: "/").map(String.init)
        switch (request.method, segments) {
        case (.get, ["healthz"]), (.head, ["healthz"]):
            return .json(hub.health())
        case (.get, ["metrics"]):
            if !hub.config.openMetrics, let denied = authorize(request, .read) { return denied }
            return .raw(200, "text/plain; version=0.0.4; charset=utf-8", Array(renderMetrics().utf8))
        case (.post, ["api", "sendPushNotification"]), (.post, ["api", "sendPush", "android", "v1"]):
            // HA's relay-compatible ingest: no auth header (the push_token is the credential), like the relay.
            return withJSONBody(request) { .json(hub.ingestRelay($0, path: path)) }
        case (.post, ["v1", "push"]):
            if let denied = authorize(request, .write) { return denied }
            return withJSONBody(request) { .json(hub.push($0)) }
        case (.get, _) where segments.count <= 3 && segments.starts(with: ["v1", "activities"]):
            if let denied = authorize(request, .read) { return denied }
            return .json(hub.listActivities(tag: segments.count == 3 ? segments[2] : nil, device: request.query["device"]))
        case (.delete, _) where segments.count <= 3 && segments.starts(with: ["v1", "activities"]):
            if let denied = authorize(request, .write) { return denied }
            return .json(hub.endActivities(
                tag: segments.count == 3 ? segments[2] : nil, device: request.query["device"], dismissal: request.query["dismissal"]))
        case (.get, ["v1", "devices"]):
            if let denied = authorize(request, .read) { return denied }
            return .json(hub.listDevices())
        case (.get, _) where page(path) != nil:
            let p = page(path)!
            return .raw(200, p.contentType, p.body)
        default:
            if Self.isKnown(segments) {
                return reject(405, "method", field: "method", rule: "method", "method \(request.method.rawValue) is not allowed on \(path)")
            }
            return reject(404, "not_found", field: "path", rule: "exists", "no such endpoint: \(path)")
        }
    }

    static let knownPaths: [[String]] = [
        ["healthz"], ["metrics"], ["api", "sendPushNotification"], ["api", "sendPush", "android", "v1"], ["v1", "push"],
        ["v1", "activities"], ["v1", "activities", "*"], ["v1", "devices"],
    ]

    static func isKnown(_ segments: [String]) -> Bool {
        knownPaths.contains { pattern in
            pattern.count == segments.count && zip(pattern, segments).allSatisfy { $0 == "*" || $0 == $1 }
        }
    }

    private func withJSONBody(_ request: HTTPRequest, _ body: (JSONValue) -> Answer) -> Answer {
        let type = request.header("content-type")?.lowercased() ?? ""
        guard type.hasPrefix("application/json") || type.hasSuffix("+json") else {
            return reject(400, "content_type", field: "content-type", rule: "content_type",
                "Content-Type must be application/json (got '\(type.isEmpty ? "none" : type)')")
        }
        do {
            return body(try JSONValue.parse(request.body))
        } catch {
            return reject(400, "invalid_json", field: "body", rule: "json", "the body is not valid JSON: \(error)")
        }
    }

    /// `nil` when allowed; otherwise the 401 answer.
    private func authorize(_ request: HTTPRequest, _ access: Access) -> Answer? {
        let header = request.header("authorization") ?? ""
        let token = header.lowercased().hasPrefix("bearer ") ? String(header.dropFirst(7)).trimmingSpaces : ""
        let config = hub.config
        let ok: Bool
        switch access {
        case .open: ok = true
        case .read: ok = !token.isEmpty && (sameSecret(token, config.adminToken) || sameSecret(token, config.viewerToken))
        case .write: ok = !token.isEmpty && sameSecret(token, config.adminToken)
        }
        if ok { return nil }
        let message = token.isEmpty
            ? "missing bearer token (Authorization: Bearer <token>)"
            : (access == .write && token == config.viewerToken ? "the viewer token cannot write" : "invalid token")
        return reject(401, "auth", field: "authorization", rule: "auth", message)
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}

/// Compares a presented token with a configured one in time independent of where they differ, so response
/// timing on the LAN does not reveal a token's prefix. No configured secret (`nil`) matches nothing.
func sameSecret(_ presented: String, _ secret: String?) -> Bool {
    guard let secret else { return false }
    let a = Array(presented.utf8), b = Array(secret.utf8)
    var diff = UInt8(truncatingIfNeeded: a.count ^ b.count)
    for i in 0..<max(a.count, b.count) {
        diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
    }
    return diff == 0 && a.count == b.count
}
