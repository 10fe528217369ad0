import LanpushCore

/// Why an activity's view changed.
public enum ActivityCause: String, Sendable, Hashable {
    case snapshot, start, update, end, lifecycle
}

/// An activity's previous and new view: what a UI redraws from.
public struct ActivityChange: Sendable, Hashable {
    public var tag: String
    /// What was shown before this frame (nil: nothing under the tag).
    public var previous: ClientActivity?
    /// What to show now (nil: it is gone).
    public var current: ClientActivity?
    public var cause: ActivityCause
    /// Belongs to this one event: show it once, never replay it.
    public var alert: ActivityAlert?
    /// Every change merged into this update was silent.
    public var silent: Bool

    public init(
        tag: String, previous: ClientActivity?, current: ClientActivity?, cause: ActivityCause,
        alert: ActivityAlert? = nil, silent: Bool = false
    ) {
        self.tag = tag
        self.previous = previous
        self.current = current
        self.cause = cause
        self.alert = alert
        self.silent = silent
    }
}

/// What one frame did to a device's state, in order: produced by `StateReducer` and handed to the app as events.
public enum StateChange: Sendable, Hashable {
    case activity(ActivityChange)
    /// The activity ended (or an ended one got a new dismissal date): show it until `dismissalDate`.
    case ended(tag: String, activity: ClientActivity)
    /// The activity is gone: its last view.
    case dismissed(tag: String, activity: ClientActivity)
    case notification(HeldNotification)
    /// The held notifications with this tag were cleared.
    case clear(tag: String, removed: [HeldNotification])
    /// The gateway's notification queue overflowed: `count` notifications up to seq `through` will never arrive.
    case notificationsDropped(count: Int, through: UInt64)
    case snapshot(epoch: String, seq: UInt64)
    case replay(epoch: String, from: UInt64)
    case synced(seq: UInt64)
}

/// The result of applying one frame.
public struct StateReduction: Sendable, Hashable {
    public var state: DeviceState
    public var changes: [StateChange]
    /// The seq to acknowledge once the changes were handled; nil when the frame needs no ack.
    public var ack: UInt64?
    /// Set when the frame cannot be applied to what the client holds (an update of an activity it never saw): the
    /// client drops its resume point and subscribes afresh to get a snapshot. `state` is then unchanged.
    public var resync: String?
}
