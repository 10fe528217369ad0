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
        guard version != .v1, case .object(let o) = json else { return json }
        return version.frame(o)
    }

    /// The frame as lanpush.v1 writes it.
    public var json: JSONValue {
        switch self {
        case .start(let seq, let tag, let attributes, let view, let alert):
            var o: [String: JSONValue] = [
                "type": "start", "seq": .number(Double(seq)), "tag": .string(tag), "attributes": attributes.json,
                "state": .object(view.state),
            ]
            if view.phase != .active { o["phase"] = .string(view.phase.rawValue) }
            if let date = view.dismissalDate { o["dismissal_date"] = .number(date.rounded()) }
            Self.addProperties(view, to: &o)
            if let alert { o["alert"] = alert.json }
            return .object(o)
        case .update(let seq, let tag, let patch, let view, let silent, let alert, let staleDateRemoved):
            var o: [String: JSONValue] = [
                "type": "update", "seq": .number(Double(seq)), "tag": .string(tag), "patch": .object(patch),
                "phase": .string(view.phase.rawValue),
            ]
            Self.addProperties(view, to: &o)
            if silent { o["silent"] = true }
            if let alert { o["alert"] = alert.json }
            if staleDateRemoved { o["stale_date"] = .null }
            return .object(o)
        case .end(let seq, let tag, let patch, let view, let staleDateRemoved):
            var o: [String: JSONValue] = [
                "type": "end", "seq": .number(Double(seq)), "tag": .string(tag), "patch": .object(patch),
            ]
            if let date = view.dismissalDate { o["dismissal_date"] = .number(date.rounded()) }
            // Ended and dismissed in one step (a clear_notification, as on the phone): the card goes at once.
            if view.phase == .dismissed { o["phase"] = "dismissed" }
            Self.addProperties(view, to: &o)
            if staleDateRemoved { o["stale_date"] = .null }
            return .object(o)
        case .lifecycle(let seq, let tag, let phase):
            return ["type": "lifecycle", "seq": .number(Double(seq)), "tag": .string(tag), "phase": .string(phase.rawValue)]
        case .notification(let seq, let n):
            var o: [String: JSONValue] = ["type": "notification", "seq": .number(Double(seq)), "data": .object(n.data)]
            if let title = n.title { o["title"] = .string(title) }
            if let message = n.message { o["message"] = .string(message) }
            return .object(o)
        case .clear(let seq, let tag):
            return ["type": "clear", "seq": .number(Double(seq)), "tag": .string(tag)]
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
            return ["type": "snapshot", "epoch": .string(epoch), "seq": .number(Double(seq)), "activities": .array(items)]
        case .notificationsDropped(let count, let through):
            return ["type": "notifications_dropped", "count": .number(Double(count)), "through": .number(Double(through))]
        }
    }

    private static func addProperties(_ view: ClientView, to o: inout [String: JSONValue]) {
        if let stale = view.staleDate { o["stale_date"] = .number(stale) }
        if let score = view.relevanceScore { o["relevance_score"] = .number(score) }
    }
}
