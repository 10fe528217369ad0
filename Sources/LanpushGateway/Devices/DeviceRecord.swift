import LanpushCore

/// A device: its ledger, its live sessions and what it told us for the relay path.
/// A class so the ledger is mutated in place (a struct copy would copy-on-write every activity per update).
/// Loop thread only.
final class DeviceRecord {
    typealias Registration = DeviceRelayState.Registration

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
    var ledger: DeviceLedger
    /// Its resume history's bytes as last counted into the directory's budget.
    var countedHistoryBytes = 0
    /// Device sessions, authenticated (observers are not here: they never make a device count as connected).
    var sessions: [UInt64] = []
    /// Those of `sessions` that subscribed: only they receive events, so only they make the device reachable on the
    /// LAN. A client that authenticates and never subscribes (a script stuck after its auth, whose socket library
    /// keeps answering pings) would otherwise hold every update and notification back from the relay for as long as
    /// its socket lives, where nothing ever reads them.
    var receiving: [UInt64] = []
    /// Its relay path: credentials, activity tokens, what the relay carried and shows.
    var relay = DeviceRelayState()
    /// Whether its clients can show Live Activities (`register` frame's `supports_live_activities`; `nil`: never said).
    var supportsLiveActivities: Bool?
    /// How its plain notifications travel (config `devices[].notifications`).
    var notifications: NotificationRouting = .auto
    /// The HA notify action that reaches the person while the device is gone (`devices[].fallback`, or the devices
    /// API): the relay path goes through it instead of a push_url.
    var fallback: String?
    var lastSeen: Double?
    /// The newest seq any session of the device acknowledged: what reached it over the LAN.
    var deliveredSeq: UInt64 = 0
    /// HA-native mode: its mobile_app registration and local push channel; `nil` when the mode is off.
    var homeAssistant: HomeAssistantDevice?

    init(id: String, name: String, source: Source, tokenHash: String, ledger: DeviceLedger) {
        self.id = id
        self.name = name
        self.source = source
        self.tokenHash = tokenHash
        self.ledger = ledger
    }

    /// The resume points a session's frames made unsafe (`Coalescer.next`); nearly always none, and then the ledger
    /// is not touched.
    func markUnsafeResumePoints(_ seqs: [UInt64]) {
        for seq in seqs { ledger.markUnsafeResumePoint(seq) }
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
        if let fallback { o["fallback"] = .string(fallback) }
        if let lastSeen { o["last_seen"] = .number(lastSeen.rounded()) }
        if let registration = relay.registration {
            var r: [String: JSONValue] = [
                "push_token": .string(redacted ? Self.redact(registration.pushToken) : registration.pushToken),
            ]
            if let url = registration.pushURL { r["push_url"] = .string(redacted ? Self.redactURL(url) : url) }
            o["registration"] = .object(r)
        }
        if !relay.liveActivityTokens.isEmpty { o["live_activity_tokens"] = .number(Double(relay.liveActivityTokens.count)) }
        if relay.pushToStartToken != nil { o["push_to_start_token"] = true }
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
