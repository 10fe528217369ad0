import LanpushCore

/// `register`: ties the device to the push_token HA uses for it and gives relay credentials for fallback.
/// A registration with only `supportsLiveActivities` is valid too (a client with no relay credentials of its own).
public struct Registration: Sendable, Hashable {
    public var pushToken: String?
    public var pushURL: String?
    public var registrationInfo: [String: JSONValue]?
    /// Whether this client shows Live Activities itself; told to the gateway (and, in HA-native mode, to HA).
    public var supportsLiveActivities: Bool?

    public init(
        pushToken: String? = nil, pushURL: String? = nil, registrationInfo: [String: JSONValue]? = nil,
        supportsLiveActivities: Bool? = nil
    ) {
        self.pushToken = pushToken
        self.pushURL = pushURL
        self.registrationInfo = registrationInfo
        self.supportsLiveActivities = supportsLiveActivities
    }
}

/// The frames a client sends (docs/PROTOCOL.md), built in one place so every sender spells them alike.
enum ClientFrame {
    static func auth(token: String, observer: Bool, device: String?, keepalive: Int? = nil) -> JSONValue {
        var o: [String: JSONValue] = ["type": "auth", "token": .string(token)]
        if let keepalive { o["keepalive"] = .number(Double(keepalive)) }
        if observer {
            o["role"] = "observer"
            if let device { o["device"] = .string(device) }
        }
        return .object(o)
    }

    /// `epoch` and `seq` only when the client holds an epoch: without them the gateway sends a snapshot.
    static func subscribe(resumeFrom state: DeviceState?) -> JSONValue {
        var o: [String: JSONValue] = ["type": "subscribe"]
        if let state, let epoch = state.epoch {
            o["epoch"] = .string(epoch)
            o["seq"] = .number(Double(state.seq))
        }
        return .object(o)
    }

    static func ack(_ seq: UInt64) -> JSONValue { ["type": "ack", "seq": .number(Double(seq))] }

    static func register(_ r: Registration) -> JSONValue {
        var o: [String: JSONValue] = ["type": "register"]
        if let token = r.pushToken { o["push_token"] = .string(token) }
        if let url = r.pushURL { o["push_url"] = .string(url) }
        if let info = r.registrationInfo { o["registration_info"] = .object(info) }
        if let supports = r.supportsLiveActivities { o["supports_live_activities"] = .bool(supports) }
        return .object(o)
    }

    static func dismissed(tag: String) -> JSONValue { ["type": "dismissed", "tag": .string(tag)] }

    /// `expiresAt`: Unix seconds (or milliseconds from 10^11 on, as the gateway reads it).
    static func liveActivityToken(tag: String, token: String, expiresAt: Double?) -> JSONValue {
        var o: [String: JSONValue] = ["type": "live_activity_token", "tag": .string(tag), "token": .string(token)]
        if let expiresAt { o["expires_at"] = .number(expiresAt) }
        return .object(o)
    }

    static func pushToStartToken(_ token: String) -> JSONValue {
        ["type": "push_to_start_token", "token": .string(token)]
    }

    static let ping: JSONValue = ["type": "ping"]
}
