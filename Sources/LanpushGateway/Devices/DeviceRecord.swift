import LanpushCore

/// A device: its ledger, its live sessions and what it told us for the relay path.
/// A class so the ledger is mutated in place (a struct copy would copy-on-write every activity per update).
/// Loop thread only.
final class DeviceRecord {
    struct Registration: Equatable {
        var pushToken: String
        var pushURL: String?
        var registrationInfo: [String: JSONValue]
    }

    /// Where it is defined: the config file (read-only at run time) or the API (the store).
    enum Source: Equatable {
        /// `devices[index]` of the config file.
        case config(index: Int)
        case api
    }

    let id: String
    var name: String
    let source: Source
    /// SHA-256 of the token its clients authenticate with (`DeviceToken`).
    var tokenHash: String
    // Every change, frame and ack reaches the ledger through here, and a frame takes it inout inside the session's
    // inout access to its coalescer: the runtime's check that no two accesses overlap was ~5 % of a fan-out's
    // instructions with `StreamSession.coalescers`'s. Both are touched on the loop thread only, each access in one
    // statement or one closure; debug builds (the tests) keep the check.
    #if DEBUG
        var ledger: DeviceLedger
    #else
        @exclusivity(unchecked) var ledger: DeviceLedger
    #endif
    /// Its resume history's bytes as last counted into the directory's budget.
    var countedHistoryBytes = 0
    /// Device sessions, authenticated (observers are not here: they never make a device count as connected).
    var sessions: [UInt64] = []
    /// Those of `sessions` that subscribed: only they receive events, so only they make the device reachable on the
    /// LAN. A client that authenticates and never subscribes (a script stuck after its auth, whose socket library
    /// keeps answering pings) would otherwise hold every update and notification back from the relay for as long as
    /// its socket lives, where nothing ever reads them.
    var receiving: [UInt64] = []
    var registration: Registration?
    var liveActivityTokens: [String: JSONValue] = [:]
    var pushToStartToken: String?
    /// Whether its clients can show Live Activities (`register` frame's `supports_live_activities`; `nil`: never said).
    var supportsLiveActivities: Bool?
    /// How its plain notifications travel (config `devices[].notifications`).
    var notifications: NotificationRouting = .auto
    var lastSeen: Double?
    /// The newest seq any session of the device acknowledged: what reached it over the LAN.
    var deliveredSeq: UInt64 = 0
    /// The relay body per queued notification seq (`RelayHandOver`; an activity keeps its own, `Activity.relayBody`).
    var relayNotificationBodies = NotificationRelayBodies()
    /// Per activity tag, the newest seq the relay answered 2xx for: what the phone has through the relay path, so a
    /// drain never sends it again (a client that visits the LAN and acks nothing does not ack it either).
    var relayedSeq: [String: UInt64] = [:]
    /// HA-native mode: its mobile_app registration and local push channel; `nil` when the mode is off.
    var homeAssistant: HomeAssistantDevice?

    init(id: String, name: String, source: Source, tokenHash: String, ledger: DeviceLedger) {
        self.id = id
        self.name = name
        self.source = source
        self.tokenHash = tokenHash
        self.ledger = ledger
    }

    /// Reachable on the LAN: a subscribed session receives what is accepted for it, and nothing goes to the relay.
    var isConnected: Bool { !receiving.isEmpty }

    /// `GET /v1/devices`'s entry. `redacted`: for the read-only viewer, whose token a dashboard keeps (often in HA's
    /// `secrets.yaml`) — the push_token is a credential (with it, an unauthenticated relay post reaches the device),
    /// so the viewer sees its last characters only, and of the push_url its origin.
    func json(now: Double, redacted: Bool = false) -> JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(id), "name": .string(name), "sessions": .number(Double(sessions.count)),
            "connected": .bool(isConnected), "path": .string(isConnected ? "lan" : "none"),  // the relay's part: DeviceReport
            "epoch": .string(ledger.epoch), "seq": .number(Double(ledger.seq)),
            "activities": .number(Double(ledger.visibleActivities.count)),
            "queued_notifications": .number(Double(ledger.notifications.count)),
            "notifications": .string(notifications.rawValue), "source": .string(source == .api ? "api" : "config"),
        ]
        if let lastSeen { o["last_seen"] = .number(lastSeen.rounded()) }
        if let registration {
            var r: [String: JSONValue] = [
                "push_token": .string(redacted ? Self.redact(registration.pushToken) : registration.pushToken),
            ]
            if let url = registration.pushURL { r["push_url"] = .string(redacted ? Self.redactURL(url) : url) }
            o["registration"] = .object(r)
        }
        if !liveActivityTokens.isEmpty { o["live_activity_tokens"] = .number(Double(liveActivityTokens.count)) }
        if pushToStartToken != nil { o["push_to_start_token"] = true }
        if let supportsLiveActivities { o["supports_live_activities"] = .bool(supportsLiveActivities) }
        if let homeAssistant { o["home_assistant"] = homeAssistant.json }  // HA-native mode
        return .object(o)
    }

    /// `…` and the token's last 6 characters (enough to tell two registrations apart), or only `…` for a short one.
    static func redact(_ token: String) -> String {
        token.count > 12 ? "…" + token.suffix(6) : "…"
    }

    /// The URL's scheme and authority (`https://relay.example`): a path or query may hold a secret.
    static func redactURL(_ url: String) -> String {
        guard let origin = PushURLPolicy.Origin(url) else { return "…" }
        let host = origin.host.contains(":") ? "[\(origin.host)]" : origin.host
        return "\(origin.scheme)://\(host):\(origin.port)/…"
    }
}
