import LanpushCore

/// Applies one server frame to a device's state: the rules of docs/PROTOCOL.md and docs/CLIENTS.md ("Wire details"),
/// patches through the core's own `MergePatch`. Pure; every language's client agrees with it on the shared protocol
/// vectors.
public struct StateReducer: Sendable {
    /// Plain notifications held at most (the oldest go first): the gateway's queue holds about as many.
    public var maxNotifications: Int

    public init(maxNotifications: Int = 100) {
        self.maxNotifications = maxNotifications
    }

    /// `now`: Unix seconds; an ended activity whose dismissal date is not after it is removed.
    public func reduce(_ state: DeviceState, _ frame: ServerFrame, now: Double) -> StateReduction {
        var r = Reduction(prev: state, now: now, limit: maxNotifications)
        r.apply(frame)
        if r.resync != nil { return StateReduction(state: state, changes: [], ack: nil, resync: r.resync) }
        return StateReduction(state: r.next, changes: r.changes, ack: r.ack, resync: nil)
    }
}

private struct Reduction {
    let prev: DeviceState
    let now: Double
    let limit: Int
    var next: DeviceState
    var changes: [StateChange] = []
    var ack: UInt64?
    var resync: String?

    init(prev: DeviceState, now: Double, limit: Int) {
        self.prev = prev
        self.now = now
        self.limit = limit
        self.next = prev
    }

    mutating func apply(_ f: ServerFrame) {
        switch f.type {
        case "snapshot":
            return snapshot(f)
        case "replay":
            let epoch = f["epoch"]?.stringValue ?? next.epoch ?? ""
            next.epoch = epoch
            changes.append(.replay(epoch: epoch, from: ServerFrame.integer(f["from"]) ?? 0))
            return
        case "synced":
            changes.append(.synced(seq: f.seq ?? next.seq))
            return
        case "notifications_dropped":
            let count = f["count"]?.numberValue.flatMap { Int(exactly: $0) } ?? 0
            changes.append(.notificationsDropped(count: count, through: ServerFrame.integer(f["through"]) ?? 0))
            return
        case "start": start(f)
        case "update": update(f)
        case "end": end(f)
        case "lifecycle": lifecycle(f)
        case "notification": notification(f)
        case "clear": clear(f.tag ?? "")
        default: return
        }
        guard let seq = f.seq else { return }
        next.seq = max(next.seq, seq)
        ack = seq
    }

    /// Gone for good: dismissed, or ended with its dismissal date reached.
    func gone(_ phase: ActivityPhase, _ dismissalDate: Double?) -> Bool {
        phase == .dismissed || (phase == .ended && dismissalDate.map { $0 <= now } ?? false)
    }

    mutating func put(_ tag: String, _ current: ClientActivity?, _ cause: ActivityCause, alert: ActivityAlert? = nil, silent: Bool = false) {
        let previous = prev.activities[tag]
        next.activities[tag] = current
        if previous == nil && current == nil { return }
        changes.append(.activity(ActivityChange(tag: tag, previous: previous, current: current, cause: cause, alert: alert, silent: silent)))
    }

    mutating func snapshot(_ f: ServerFrame) {
        let epoch = f["epoch"]?.stringValue ?? ""
        let seq = f.seq ?? 0
        next.epoch = epoch
        next.seq = seq
        ack = seq
        var incoming: [String: ClientActivity] = [:]
        for item in f["activities"]?.arrayValue ?? [] {
            guard let o = item.objectValue, let phase = o["phase"]?.stringValue.flatMap(ActivityPhase.init(rawValue:)),
                !gone(phase, o["dismissal_date"]?.numberValue), let a = ClientActivity(wire: o, phase: phase)
            else { continue }
            incoming[a.tag] = a
        }
        for tag in Set(prev.activities.keys).union(incoming.keys).sorted() {
            let previous = prev.activities[tag]
            let current = incoming[tag]
            if previous == current { continue }
            put(tag, current, .snapshot)
            if let current, current.phase == .ended, previous?.phase != .ended {
                changes.append(.ended(tag: tag, activity: current))
            }
            if current == nil, let previous { changes.append(.dismissed(tag: tag, activity: previous)) }
        }
        changes.append(.snapshot(epoch: epoch, seq: seq))
    }

    mutating func start(_ f: ServerFrame) {
        let phase = f.phase ?? .active
        guard let tag = f.tag, let activity = ClientActivity(wire: f.object, phase: phase) else { return }
        if gone(phase, f["dismissal_date"]?.numberValue) {
            // Started and gone while the client was away: nothing to show; whatever it held under the tag is over.
            if let previous = prev.activities[tag] {
                put(tag, nil, .start)
                changes.append(.dismissed(tag: tag, activity: previous))
            }
            return
        }
        put(tag, activity, .start, alert: Self.alert(f["alert"]))
        if activity.phase == .ended { changes.append(.ended(tag: tag, activity: activity)) }
    }

    mutating func update(_ f: ServerFrame) {
        let tag = f.tag ?? ""
        guard var a = prev.activities[tag], a.phase != .ended else {
            resync = "update of '\(tag)' (seq \(f.seq.map(String.init) ?? "?")) that the client does not hold live"
            return
        }
        a.state = MergePatch.apply(f["patch"]?.objectValue ?? [:], to: a.state)
        a.phase = f.phase == .stale ? .stale : .active
        if let stale = f["stale_date"] { a.staleDate = stale.numberValue }  // null: removed (absent: unchanged)
        if let score = f["relevance_score"]?.numberValue { a.relevanceScore = score }
        put(tag, a, .update, alert: Self.alert(f["alert"]), silent: f["silent"]?.boolValue == true)
    }

    mutating func end(_ f: ServerFrame) {
        let tag = f.tag ?? ""
        guard var a = prev.activities[tag] else {
            resync = "end of '\(tag)' (seq \(f.seq.map(String.init) ?? "?")) that the client does not hold"
            return
        }
        a.state = MergePatch.apply(f["patch"]?.objectValue ?? [:], to: a.state)
        a.phase = .ended
        if let date = f["dismissal_date"]?.numberValue { a.dismissalDate = date }
        if let stale = f["stale_date"] { a.staleDate = stale.numberValue }  // null: removed (absent: unchanged)
        if let score = f["relevance_score"]?.numberValue { a.relevanceScore = score }
        if gone(f.phase == .dismissed ? .dismissed : .ended, a.dismissalDate) {
            // Ended and dismissed at once (a clear_notification, as on the phone): the final view, then gone.
            put(tag, nil, .end)
            changes.append(.ended(tag: tag, activity: a))
            changes.append(.dismissed(tag: tag, activity: a))
            return
        }
        put(tag, a, .end)
        changes.append(.ended(tag: tag, activity: a))
    }

    mutating func lifecycle(_ f: ServerFrame) {
        guard let tag = f.tag, let held = prev.activities[tag], let phase = f.phase else { return }
        switch phase {
        case .dismissed:
            put(tag, nil, .lifecycle)
            changes.append(.dismissed(tag: tag, activity: held))
        case .ended:
            var ended = held
            ended.phase = .ended
            put(tag, ended, .lifecycle)
            changes.append(.ended(tag: tag, activity: ended))
        case .active, .stale:
            if held.phase == .ended || held.phase == phase { return }
            var changed = held
            changed.phase = phase
            put(tag, changed, .lifecycle)
        }
    }

    mutating func notification(_ f: ServerFrame) {
        guard let seq = f.seq else { return }
        let n = HeldNotification(
            seq: seq, title: f["title"]?.stringValue, message: f["message"]?.stringValue, data: f["data"]?.objectValue ?? [:])
        // A snapshot is preceded by the queued notifications the client "may not have": skip the ones it has.
        if prev.notifications.contains(n) { return }
        next.notifications.append(n)
        if next.notifications.count > limit { next.notifications.removeFirst(next.notifications.count - limit) }
        changes.append(.notification(n))
    }

    mutating func clear(_ tag: String) {
        let removed = prev.notifications.filter { $0.tag == tag }
        if !removed.isEmpty { next.notifications.removeAll { $0.tag == tag } }
        changes.append(.clear(tag: tag, removed: removed))
    }

    static func alert(_ value: JSONValue?) -> ActivityAlert? {
        guard let o = value?.objectValue else { return nil }
        return ActivityAlert(title: o["title"]?.stringValue ?? "", body: o["body"]?.stringValue ?? "", sound: o["sound"]?.stringValue)
    }
}
