/// The versions of the LAN client protocol the gateway speaks (docs/PROTOCOL.md). A session speaks one, chosen by
/// the WebSocket subprotocol or, for a socket that cannot offer subprotocols, by the `auth` frame's `version`.
public enum ProtocolVersion: String, Sendable, CaseIterable {
    case v1 = "lanpush.v1"
    /// v1 with the frames about one activity (`start`, `update`, `end`, `lifecycle`) as compact arrays.
    case v2 = "lanpush.v2"

    /// The subprotocol names, newest first: the order a client offers them in.
    public static let subprotocols = [v2.rawValue, v1.rawValue]

    /// A server frame in this version, from its v1 object.
    public func frame(_ v1: [String: JSONValue]) -> JSONValue {
        switch self {
        case .v1: .object(v1)
        case .v2: CompactFrame.array(v1) ?? .object(v1)
        }
    }
}

/// lanpush.v2's form of the frames about one activity: `[type, seq, tag, body]` or `[type, seq, tag, body, extras]`.
///
/// These frames are most of what a live activity sends, and in v1 their keys (`type`, `seq`, `tag`, `patch`,
/// `phase`) weighed about as much as the change itself. The body is the frame's one big member (`start`'s state,
/// `update`'s and `end`'s patch, `lifecycle`'s phase); `extras` holds every other member unchanged and is left out
/// when empty. An `update` leaves out `"phase":"active"`: an update makes an activity active, so only a merged
/// update that ends stale needs to say so.
public enum CompactFrame {
    /// The member that becomes the body, per frame type.
    static let bodies: [String: String] = ["start": "state", "update": "patch", "end": "patch", "lifecycle": "phase"]

    /// The array form of a v1 frame, or `nil` for a frame that keeps its object form.
    public static func array(_ v1: [String: JSONValue]) -> JSONValue? {
        guard let type = v1["type"]?.stringValue, let bodyKey = bodies[type],
            let seq = v1["seq"], let tag = v1["tag"], let body = v1[bodyKey]
        else { return nil }
        var extras = v1
        for key in ["type", "seq", "tag", bodyKey] { extras.removeValue(forKey: key) }
        if type == "update", extras["phase"] == "active" { extras.removeValue(forKey: "phase") }
        var items: [JSONValue] = [.string(type), seq, tag, body]
        if !extras.isEmpty { items.append(.object(extras)) }
        return .array(items)
    }

    /// The v1 object a v2 array frame stands for (what a client applies), or `nil` for an array that is no such
    /// frame: fewer than four or more than five items, another type, a seq that is no number, a tag that is no
    /// string, extras that are no object, or a body of the wrong kind.
    public static func object(_ frame: [JSONValue]) -> [String: JSONValue]? {
        guard frame.count == 4 || frame.count == 5, let type = frame[0].stringValue, let bodyKey = bodies[type],
            frame[1].numberValue != nil, frame[2].stringValue != nil
        else { return nil }
        let body = frame[3]
        guard type == "lifecycle" ? body.stringValue != nil : body.objectValue != nil else { return nil }
        var object: [String: JSONValue] = [:]
        if frame.count == 5 {
            guard let extras = frame[4].objectValue else { return nil }
            object = extras
        }
        object["type"] = frame[0]
        object["seq"] = frame[1]
        object["tag"] = frame[2]
        object[bodyKey] = body
        if type == "update", object["phase"] == nil { object["phase"] = "active" }
        return object
    }

    /// Where the seq's digits start in an encoded array frame of this type: after `["type",`.
    static func seqOffset(type: String) -> Int { type.utf8.count + 4 }
}
