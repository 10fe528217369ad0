/// A frame of the LAN client protocol from the gateway to a client (docs/PROTOCOL.md).
public enum OutboundEvent: Sendable, Hashable {
    case start(seq: UInt64, tag: String, attributes: ActivityAttributes, view: ClientView, alert: ActivityAlert?)
    /// `staleDateRemoved`: the client holds a stale date the activity no longer has (stale dates belong to each
    /// update): the frame says `"stale_date": null`, because an absent key means "unchanged".
    case update(
        seq: UInt64, tag: String, patch: [String: JSONValue], view: ClientView, silent: Bool, alert: ActivityAlert?,
        staleDateRemoved: Bool = false)
    case end(seq: UInt64, tag: String, patch: [String: JSONValue], view: ClientView, staleDateRemoved: Bool = false)
    case lifecycle(seq: UInt64, tag: String, phase: ActivityPhase)
    case notification(seq: UInt64, NotifyMessage)
    case clear(seq: UInt64, tag: String)
    case snapshot(epoch: String, seq: UInt64, activities: [Activity])
    /// The device's notification queue overflowed (bounded in bytes): `count` notifications this session was
    /// never sent, the newest with seq `through`, will not arrive. Carries no seq of its own and takes no ack.
    case notificationsDropped(count: Int, through: UInt64)

    public var seq: UInt64 {
        switch self {
        case .start(let seq, _, _, _, _), .update(let seq, _, _, _, _, _, _), .end(let seq, _, _, _, _),
            .lifecycle(let seq, _, _), .notification(let seq, _), .clear(let seq, _), .snapshot(_, let seq, _),
            .notificationsDropped(_, let seq):
            return seq
        }
    }

    /// The size of its frame on the wire: how the gateway weighs what it keeps in memory per device (the
    /// notification queue, the resume history), so both bounds are in the same unit.
    public var frameBytes: Int { json.serializedCount }

    /// The frame in `version`: v1's object, or v2's array for the frames about one activity.
    public func json(_ version: ProtocolVersion) -> JSONValue {
        switch form {
        case .activity(let frame): version == .v1 ? frame.object : frame.array
        case .other(let json): json
        }
    }

    /// The frame as lanpush.v1 writes it.
    public var json: JSONValue {
        switch form {
        case .activity(let frame): frame.object
        case .other(let json): json
        }
    }

    /// A frame about one activity in parts: its body (the one big member: `start`'s state, `update`'s and `end`'s
    /// patch, `lifecycle`'s phase) and every member but type, seq, tag and body — an update's `"phase":"active"`
    /// left out, as lanpush.v2 leaves it out. v1 writes the parts as one object, v2 as `CompactFrame`'s array, so
    /// a v2 frame is not v1's object taken apart again (a copy of it and four removals, every frame).
    private struct ActivityFrame {
        let type: String
        let seq: UInt64
        let tag: String
        let bodyKey: String
        let body: JSONValue
        let extras: [String: JSONValue]

        var object: JSONValue {
            var o = extras
            o.reserveCapacity(extras.count + 5)
            o["type"] = .string(type)
            o["seq"] = .number(Double(seq))
            o["tag"] = .string(tag)
            o[bodyKey] = body
            if type == "update", o["phase"] == nil { o["phase"] = "active" }
            return .object(o)
        }

        var array: JSONValue {
            var items: [JSONValue] = [.string(type), .number(Double(seq)), .string(tag), body]
            if !extras.isEmpty { items.append(.object(extras)) }
            return .array(items)
        }
    }

    /// What a frame is made of: an activity's parts, or (every other frame) its one form in both versions.
    private enum Form {
        case activity(ActivityFrame)
        case other(JSONValue)
    }

    private var form: Form {
        var extras: [String: JSONValue] = [:]
        switch self {
        case .start(let seq, let tag, let attributes, let view, let alert):
            extras["attributes"] = attributes.json
            if view.phase != .active { extras["phase"] = .string(view.phase.rawValue) }
            if let date = view.dismissalDate { extras["dismissal_date"] = .number(date.rounded()) }
            Self.addProperties(view, to: &extras)
            if let alert { extras["alert"] = alert.json }
            return .activity(ActivityFrame(type: "start", seq: seq, tag: tag, bodyKey: "state", body: .object(view.state), extras: extras))
        case .update(let seq, let tag, let patch, let view, let silent, let alert, let staleDateRemoved):
            if view.phase != .active { extras["phase"] = .string(view.phase.rawValue) }
            Self.addProperties(view, to: &extras)
            if silent { extras["silent"] = true }
            if let alert { extras["alert"] = alert.json }
            if staleDateRemoved { extras["stale_date"] = .null }
            return .activity(ActivityFrame(type: "update", seq: seq, tag: tag, bodyKey: "patch", body: .object(patch), extras: extras))
        case .end(let seq, let tag, let patch, let view, let staleDateRemoved):
            if let date = view.dismissalDate { extras["dismissal_date"] = .number(date.rounded()) }
            // Ended and dismissed in one step (a clear_notification, as on the phone): the card goes at once.
            if view.phase == .dismissed { extras["phase"] = "dismissed" }
            Self.addProperties(view, to: &extras)
            if staleDateRemoved { extras["stale_date"] = .null }
            return .activity(ActivityFrame(type: "end", seq: seq, tag: tag, bodyKey: "patch", body: .object(patch), extras: extras))
        case .lifecycle(let seq, let tag, let phase):
            return .activity(ActivityFrame(type: "lifecycle", seq: seq, tag: tag, bodyKey: "phase", body: .string(phase.rawValue), extras: extras))
        case .notification(let seq, let n):
            var o: [String: JSONValue] = ["type": "notification", "seq": .number(Double(seq)), "data": .object(n.data)]
            if let title = n.title { o["title"] = .string(title) }
            if let message = n.message { o["message"] = .string(message) }
            return .other(.object(o))
        case .clear(let seq, let tag):
            return .other(["type": "clear", "seq": .number(Double(seq)), "tag": .string(tag)])
        case .snapshot(let epoch, let seq, let activities):
            let items: [JSONValue] = activities.map { a in
                var o: [String: JSONValue] = [
                    "tag": .string(a.tag), "attributes": a.attributes.json, "state": .object(a.state),
                    "phase": .string(a.phase.rawValue),
                ]
                Self.addProperties(a.view, to: &o)
                if let date = a.dismissalDate { o["dismissal_date"] = .number(date.rounded()) }
                return .object(o)
            }
            return .other(["type": "snapshot", "epoch": .string(epoch), "seq": .number(Double(seq)), "activities": .array(items)])
        case .notificationsDropped(let count, let through):
            return .other(["type": "notifications_dropped", "count": .number(Double(count)), "through": .number(Double(through))])
        }
    }

    private static func addProperties(_ view: ClientView, to o: inout [String: JSONValue]) {
        if let stale = view.staleDate { o["stale_date"] = .number(stale) }
        if let score = view.relevanceScore { o["relevance_score"] = .number(score) }
    }
}
