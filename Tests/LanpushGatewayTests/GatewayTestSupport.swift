import LanpushCore
import LanpushTesting

@testable import LanpushGateway

/// Shared vocabulary of the in-process gateway tests: HA-shaped payloads, relay registrations, and reading
/// `GET /v1/devices` through the real router.
enum Payload {
    static let iosInfo: JSONValue = [
        "app_id": "io.robbie.HomeAssistant", "app_version": "2025.1", "os_version": "18.2", "webhook_id": "hook-1",
    ]
    static let androidInfo: JSONValue = [
        "app_id": "io.homeassistant.companion.android", "app_version": "2025.1", "os_version": "16", "webhook_id": "hook-2",
    ]
    /// Where a registered device's relay requests go (recorded, never reached).
    static let pushURL = "http://relay.test/api/sendPushNotification"

    /// `data` of a live update.
    static func live(_ tag: String, _ extra: [String: JSONValue] = [:]) -> JSONValue {
        var data: [String: JSONValue] = ["tag": .string(tag), "live_update": true]
        for (k, v) in extra { data[k] = v }
        return .object(data)
    }

    /// A `/v1/push` body: `targets` plus notify service data.
    static func push(
        _ targets: [String]? = nil, title: String? = nil, message: String, data: JSONValue = [:]
    ) -> JSONValue {
        var body: [String: JSONValue] = ["message": .string(message), "data": data]
        if let targets { body["targets"] = .array(targets.map { .string($0) }) }
        if let title { body["title"] = .string(title) }
        return .object(body)
    }

    /// A live update for `targets` through `/v1/push`.
    static func liveUpdate(_ targets: [String], tag: String, title: String? = "Washer", message: String, _ extra: [String: JSONValue] = [:]) -> JSONValue {
        push(targets, title: title, message: message, data: live(tag, extra))
    }
}

extension TestSession {
    /// The `type` of every frame received, in order.
    var types: [String] { frames.compactMap { $0["type"]?.stringValue } }

    /// The frames of the protocol's events (what takes an ack).
    var events: [JSONValue] {
        frames.filter { ["start", "update", "end", "lifecycle", "notification", "clear"].contains($0["type"]?.stringValue ?? "") }
    }

    /// Registers relay credentials over the protocol, as a companion-app client of the device would.
    func register(_ pushToken: String, pushURL: String? = Payload.pushURL, info: JSONValue = Payload.iosInfo) {
        var frame: [String: JSONValue] = ["type": "register", "push_token": .string(pushToken), "registration_info": info]
        if let pushURL { frame["push_url"] = .string(pushURL) }
        send(.object(frame))
    }

    /// The `message` of every `error` frame.
    var errors: [String] { frames("error").compactMap { $0["message"]?.stringValue } }
}

extension TestGateway {
    /// The device's entry in `GET /v1/devices`, as an operator would read it.
    func device(_ id: String) -> JSONValue? {
        request(.get, "/v1/devices").json["devices"]?.arrayValue?.first { $0["id"]?.stringValue == id }
    }

    /// A device with relay credentials and no LAN session: a client registered `pushToken` and went away.
    @discardableResult
    func goneDevice(_ id: String = "phone", pushToken: String = "tok-phone", info: JSONValue = Payload.iosInfo,
                    pushURL: String? = Payload.pushURL) -> TestSession {
        let s = connect(id)
        s.register(pushToken, pushURL: pushURL, info: info)
        s.close()
        return s
    }

    /// The relay requests that left for `tag`.
    func relayed(_ tag: String) -> [RelayItem] { relayRequests.filter { $0.tag == tag } }
}

extension GatewayConfig {
    /// The test gateway's config with `relay.proxy_unknown_tokens` on: relay bodies for push_tokens no device
    /// registered go to the upstream.
    static func proxying(devices: [String] = ["phone", "tablet"]) -> GatewayConfig {
        var config = TestGateway.defaultConfig(devices: devices)
        config.relay.proxyUnknownTokens = true
        return config
    }
}
