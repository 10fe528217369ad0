import LanpushCore

/// The state in wire names (docs/CLIENTS.md, "Protocol vectors"): what a store writes and the vectors spell out.
/// Keys are absent when unset; a dismissed activity is never written (it is removed).
extension ClientActivity {
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "tag": .string(tag), "attributes": attributes.json, "state": .object(state),
            "phase": .string(phase.rawValue),
        ]
        if let staleDate { o["stale_date"] = .number(staleDate) }
        if let relevanceScore { o["relevance_score"] = .number(relevanceScore) }
        if let dismissalDate { o["dismissal_date"] = .number(dismissalDate) }
        return .object(o)
    }

    /// An activity as a snapshot entry or a `start` frame carries it; nil when it has no tag or attributes.
    /// `phase` is the frame's (a `start` leaves it out when active).
    init?(wire o: [String: JSONValue], phase: ActivityPhase) {
        guard let tag = o["tag"]?.stringValue, let attributes = ActivityAttributes(wire: o["attributes"], tag: tag) else {
            return nil
        }
        self.init(
            tag: tag, attributes: attributes, state: o["state"]?.objectValue ?? [:],
            phase: phase == .dismissed ? .ended : phase, staleDate: o["stale_date"]?.numberValue,
            relevanceScore: o["relevance_score"]?.numberValue, dismissalDate: o["dismissal_date"]?.numberValue)
    }

    init?(json: JSONValue) {
        guard let o = json.objectValue, let phase = o["phase"]?.stringValue.flatMap(ActivityPhase.init(rawValue:)) else {
            return nil
        }
        self.init(wire: o, phase: phase)
    }
}

extension ActivityAttributes {
    /// `{"tag","title","started_at","webhook_id"?}`; a missing title reads as empty (HA may start one without).
    init?(wire value: JSONValue?, tag: String) {
        guard let o = value?.objectValue else { return nil }
        self.init(
            tag: o["tag"]?.stringValue ?? tag, title: o["title"]?.stringValue ?? "",
            startedAt: o["started_at"]?.numberValue ?? 0, webhookId: o["webhook_id"]?.stringValue)
    }
}

extension HeldNotification {
    public var json: JSONValue {
        var o: [String: JSONValue] = ["seq": .number(Double(seq)), "data": .object(data)]
        if let title { o["title"] = .string(title) }
        if let message { o["message"] = .string(message) }
        return .object(o)
    }

    init?(json: JSONValue) {
        guard let o = json.objectValue, let seq = o["seq"]?.numberValue.flatMap(UInt64.init(exactly:)) else { return nil }
        self.init(
            seq: seq, title: o["title"]?.stringValue, message: o["message"]?.stringValue, data: o["data"]?.objectValue ?? [:])
    }
}

extension DeviceState {
    public var json: JSONValue {
        [
            "epoch": epoch.map(JSONValue.string) ?? .null, "seq": .number(Double(seq)),
            "activities": .object(activities.mapValues(\.json)), "notifications": .array(notifications.map(\.json)),
        ]
    }

    /// Reads a stored state back; nil for anything that is not one (another version wrote it, or it is damaged):
    /// the client then starts afresh and gets a snapshot.
    public init?(json: JSONValue) {
        guard let o = json.objectValue, let seq = o["seq"]?.numberValue.flatMap(UInt64.init(exactly:)),
            let activities = o["activities"]?.objectValue, let notifications = o["notifications"]?.arrayValue
        else { return nil }
        let epoch: String?
        switch o["epoch"] {
        case .string(let e)?: epoch = e
        case .null?, nil: epoch = nil
        default: return nil
        }
        var held: [String: ClientActivity] = [:]
        for (tag, value) in activities {
            guard let activity = ClientActivity(json: value) else { return nil }
            held[tag] = activity
        }
        var list: [HeldNotification] = []
        for value in notifications {
            guard let n = HeldNotification(json: value) else { return nil }
            list.append(n)
        }
        self.init(epoch: epoch, seq: seq, activities: held, notifications: list)
    }
}
