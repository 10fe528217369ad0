import LanpushCore

/// A frame a LAN client sends (docs/PROTOCOL.md), decoded and checked in one place: the session protocol acts on
/// the typed value and never reads a client's JSON itself. A publisher's frames are items of its stream and are
/// decoded there (`PublisherFrame`).
enum ClientFrame {
    struct Auth {
        enum Role: Equatable {
            case device, observer, publisher
        }

        var token: String
        var role: Role
        /// An observer's one device (`nil`: every device).
        var device: String?
        /// The protocol version asked for (a socket that cannot offer subprotocols chooses here); `nil`: as is.
        var version: String?
        /// Seconds between keepalive pings the client asks for (clamped by the gateway); `nil`: the default.
        var keepalive: Double?
    }

    struct Register {
        /// `nil` with `supportsLiveActivities` set: a frame that says only that (the credentials stay as they are).
        var pushToken: String?
        var pushURL: String?
        var registrationInfo: [String: JSONValue]
        var supportsLiveActivities: Bool?
    }

    case auth(Auth)
    case ack(seq: UInt64)
    case subscribe(resume: (epoch: String, seq: UInt64)?)
    case register(Register)
    /// The device lets its push_token go.
    case unregister
    case liveActivityToken(tag: String, token: String, expiresAt: Double?)
    case pushToStartToken(String)
    case dismissed(tag: String)
    case ping

    /// Why a frame is refused: the `error` frame's message, and the field and rule it names when there is one.
    struct Refusal: Error, Equatable {
        var message: String
        var field: String?
        var rule: String?

        init(_ message: String, field: String? = nil, rule: String? = nil) {
            self.message = message
            self.field = field
            self.rule = rule
        }

        var frame: JSONValue {
            var o: [String: JSONValue] = ["type": "error", "message": .string(message)]
            if let field { o["field"] = .string(field) }
            if let rule { o["rule"] = .string(rule) }
            return .object(o)
        }
    }

    /// The longest push_token (HA's are ~160 characters) and push_url a client may register: the store and every
    /// relay body carry them.
    static let maxPushToken = 512
    static let maxPushURL = 2048
    /// The longest activity token and tag reported for the relay path.
    static let maxToken = 4096

    static func decode(_ bytes: [UInt8]) -> Result<ClientFrame, Refusal> {
        let message: [String: JSONValue]
        do {
            guard let object = try JSONValue.parse(bytes).objectValue else { return .failure(Refusal("a frame must be a JSON object")) }
            message = object
        } catch {
            return .failure(Refusal("invalid JSON: \(error)"))
        }
        guard let type = message["type"]?.stringValue else {
            return .failure(Refusal("field 'type' (string) is required", field: "type", rule: "required"))
        }
        do {
            return .success(try decode(type, message))
        } catch let refusal as Refusal {
            return .failure(refusal)
        } catch {
            return .failure(Refusal("\(error)"))
        }
    }

    private static func decode(_ type: String, _ m: [String: JSONValue]) throws -> ClientFrame {
        switch type {
        case "auth": return .auth(try auth(m))
        case "ack":
            guard let seq = wireSeq(m["seq"]) else { throw Refusal("ack: 'seq' must be an integer from 0 to 2^53", field: "seq", rule: "type") }
            return .ack(seq: seq)
        case "subscribe":
            guard let epoch = m["epoch"]?.stringValue, let raw = m["seq"], !raw.isNull else { return .subscribe(resume: nil) }
            guard let seq = wireSeq(raw) else {
                throw Refusal("subscribe: 'seq' must be an integer from 0 to 2^53", field: "seq", rule: "type")
            }
            return .subscribe(resume: (epoch, seq))
        case "register": return .register(try register(m))
        case "unregister": return .unregister
        case "live_activity_token":
            guard let tag = m["tag"]?.stringValue, let token = m["token"]?.stringValue else {
                throw Refusal("live_activity_token needs 'tag' and 'token'", field: "token", rule: "required")
            }
            try bounded(tag, "tag", maxToken)
            try bounded(token, "token", maxToken)
            var expiresAt: Double?
            if let raw = m["expires_at"], !raw.isNull {
                guard let seconds = unixSeconds(raw) else {
                    throw Refusal(
                        "live_activity_token: 'expires_at' must be a time in Unix seconds (or milliseconds)",
                        field: "expires_at", rule: "type")
                }
                expiresAt = seconds
            }
            return .liveActivityToken(tag: tag, token: token, expiresAt: expiresAt)
        case "push_to_start_token":
            guard let token = m["token"]?.stringValue, !token.utf8.contains(0) else {
                throw Refusal("push_to_start_token needs 'token' (without NUL characters)", field: "token", rule: "required")
            }
            try bounded(token, "token", maxToken)
            return .pushToStartToken(token)
        case "dismissed":
            guard let tag = m["tag"]?.stringValue else { throw Refusal("dismissed needs 'tag'", field: "tag", rule: "required") }
            return .dismissed(tag: tag)
        case "ping": return .ping
        default:
            throw Refusal("unknown message type '\(String(type.prefix(64)))'", field: "type", rule: "value")
        }
    }

    private static func auth(_ m: [String: JSONValue]) throws -> Auth {
        var auth = Auth(token: m["token"]?.stringValue ?? "", role: .device)
        switch m["role"]?.stringValue {
        case "observer": auth.role = .observer
        case "publisher": auth.role = .publisher
        default: break
        }
        auth.device = m["device"]?.stringValue
        if let asked = m["version"], !asked.isNull {
            guard let name = asked.stringValue else {
                throw Refusal("version: must be a string (e.g. \"lanpush.v2\")", field: "version", rule: "type")
            }
            auth.version = name
        }
        if let raw = m["keepalive"], !raw.isNull {
            // Not refused (an auth that fails stops a client for good): a keepalive that is no number of seconds
            // leaves the default, and the session says so (`SessionProtocol`).
            if let seconds = raw.numberValue, seconds.isFinite, seconds > 0 { auth.keepalive = seconds } else { auth.keepalive = .nan }
        }
        return auth
    }

    private static func register(_ m: [String: JSONValue]) throws -> Register {
        var frame = Register(registrationInfo: m["registration_info"]?.objectValue ?? [:])
        if let flag = m["supports_live_activities"], !flag.isNull {
            guard let value = flag.boolValue else {
                throw Refusal("'supports_live_activities' must be true or false", field: "supports_live_activities", rule: "type")
            }
            frame.supportsLiveActivities = value
        }
        let pushToken = m["push_token"]?.stringValue ?? ""
        guard !pushToken.isEmpty || (frame.supportsLiveActivities != nil && m["push_token"] == nil) else {
            throw Refusal(
                "register needs a non-empty 'push_token' (or only 'supports_live_activities')", field: "push_token",
                rule: "required")
        }
        if let url = m["push_url"], url.stringValue == nil, !url.isNull {
            throw Refusal("'push_url' must be a string", field: "push_url", rule: "type")
        }
        let pushURL = m["push_url"]?.stringValue
        // The store's text columns end at a NUL (SQLite's C strings): the credentials would come back cut after a restart.
        if pushToken.utf8.contains(0) || pushURL?.utf8.contains(0) == true {
            throw Refusal("'push_token' and 'push_url' must not contain NUL characters", field: "push_token", rule: "nul")
        }
        try bounded(pushToken, "push_token", maxPushToken)
        if let pushURL { try bounded(pushURL, "push_url", maxPushURL) }
        if let info = m["registration_info"], info.serializedBytes().count > maxPushURL {
            throw Refusal("'registration_info' must be at most \(maxPushURL) bytes of JSON", field: "registration_info", rule: "max_length")
        }
        frame.pushToken = pushToken.isEmpty ? nil : pushToken
        frame.pushURL = pushURL
        return frame
    }

    private static func bounded(_ value: String, _ field: String, _ limit: Int) throws {
        guard value.utf8.count <= limit else {
            throw Refusal("'\(field)' must be at most \(limit) bytes", field: field, rule: "max_length")
        }
    }

    /// A seq from a client frame: an integer a JSON number holds exactly. Anything else (1e20, 2^64, NaN from a
    /// hostile client) is refused before it reaches a conversion that would trap.
    static func wireSeq(_ value: JSONValue?) -> UInt64? {
        guard let n = value?.numberValue, n.isFinite, n >= 0, n <= 9_007_199_254_740_992, n == n.rounded(.down) else {
            return nil
        }
        return UInt64(n)
    }

    /// A positive time, seconds or (≥ 10^11, the Scripting app's unit) milliseconds, as for `stale_date`.
    static func unixSeconds(_ value: JSONValue) -> Double? {
        guard let n = value.numberValue, n.isFinite, n > 0, n < 1e14 else { return nil }
        return n >= 1e11 ? n / 1000 : n
    }
}
