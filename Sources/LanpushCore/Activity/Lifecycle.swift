/// The lifecycle rules of the Scripting app's LiveActivity API and docs/PROTOCOL.md as pure functions of (activity, input, now).
public enum Lifecycle {
    /// Apple ends any activity 8 hours after it started.
    public static let maximumDuration: Double = 8 * 3600

    /// Applies a live update to the activity under its tag: replaces the content of a live one, in place (so
    /// the activity's box is reused while nothing else holds it), or starts a new one over an ended or dismissed
    /// one (a live update after an end starts a new one). Returns whether it started one.
    public static func apply(
        _ update: LiveUpdate, to activity: inout Activity, seq: UInt64, now: Double, webhookId: String?
    ) -> Bool {
        if activity.phase.isLive {
            replaceContent(of: &activity, with: update, seq: seq, now: now)
            return false
        }
        activity = start(update, seq: seq, now: now, webhookId: webhookId)
        return true
    }

    /// The activity a live update starts when there is none under its tag.
    public static func start(_ update: LiveUpdate, seq: UInt64, now: Double, webhookId: String?) -> Activity {
        let attributes = ActivityAttributes(
            tag: update.tag, title: update.title ?? "", startedAt: now, webhookId: webhookId)
        var activity = Activity(
            generation: seq, attributes: attributes, state: update.state, staleDate: update.staleDate,
            relevanceScore: update.relevanceScore, updatedAt: now, lastSeq: seq, stateBytes: update.stateBytes,
            stateID: update.stateID)
        if let stale = update.staleDate, stale <= now { activity.phase = .stale }
        return activity
    }

    private static func replaceContent(of activity: inout Activity, with update: LiveUpdate, seq: UInt64, now: Double) {
        activity.replaceState(update.state, bytes: update.stateBytes, id: update.stateID)
        // ActivityKit's `ActivityContent`: every update carries its own stale date, and one without has none.
        // So an update of a stale activity makes it active again unless its own date has passed too.
        activity.staleDate = update.staleDate
        activity.phase = .active
        if let score = update.relevanceScore { activity.relevanceScore = score }
        activity.updatedAt = now
        activity.lastSeq = seq
        if let stale = activity.staleDate, stale <= now { activity.phase = .stale }
    }

    /// Ends a live activity, or gives an ended one that is still visible a new dismissal (the user or an automation
    /// dismisses it early); `nil` when it is already dismissed.
    public static func end(
        _ activity: Activity, dismissal: DismissalPolicy, seq: UInt64, now: Double,
        staleDate: Double? = nil, relevanceScore: Double? = nil
    ) -> Activity? {
        guard activity.phase != .dismissed else { return nil }
        var ended = activity
        if activity.phase.isLive {
            ended.phase = .ended
            ended.endedAt = now
            ended.dismissalDate = dismissal.dismissalDate(endedAt: now)
        } else {
            ended.dismissalDate = dismissal.dismissalDate(endedAt: activity.endedAt ?? now, now: now)
        }
        if let staleDate { ended.staleDate = staleDate }
        if let relevanceScore { ended.relevanceScore = relevanceScore }
        ended.updatedAt = now
        ended.lastSeq = seq
        if let date = ended.dismissalDate, date <= now { ended.phase = .dismissed }
        return ended
    }

    /// The transition time has brought, if any: stale date passed, 8 h ceiling reached, dismissal due.
    public enum Transition: Sendable, Hashable {
        case becameStale
        case expired  // Apple's 8 h ceiling: ended with the default dismissal policy
        case dismissed
    }

    public static func transition(of activity: Activity, now: Double) -> Transition? {
        switch activity.phase {
        case .active, .stale:
            if now >= activity.attributes.startedAt + maximumDuration { return .expired }
            if activity.phase == .active, let stale = activity.staleDate, now >= stale { return .becameStale }
            return nil
        case .ended:
            if let date = activity.dismissalDate, now >= date { return .dismissed }
            return nil
        case .dismissed:
            return nil
        }
    }

    /// When `transition(of:now:)` will next return something, for timer scheduling.
    public static func nextDeadline(of activity: Activity) -> Double? {
        switch activity.phase {
        case .active:
            let ceiling = activity.attributes.startedAt + maximumDuration
            if let stale = activity.staleDate { return min(stale, ceiling) }
            return ceiling
        case .stale:
            return activity.attributes.startedAt + maximumDuration
        case .ended:
            return activity.dismissalDate
        case .dismissed:
            // Due at once: a dismissed activity is removed (from the ledger and the store) on the next tick.
            return activity.dismissalDate ?? activity.updatedAt
        }
    }
}
