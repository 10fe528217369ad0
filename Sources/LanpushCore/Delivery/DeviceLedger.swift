/// Everything the gateway knows of one device's activities and notifications, and the sequence that orders
/// its changes. Pure: the caller (the loop-owned hub) passes the time and fans the returned changes out to
/// the device's sessions, the store and the relay path.
public struct DeviceLedger: Sendable {
    public let deviceId: String
    /// Changes whenever the sequence restarts (an unclean restart): clients with another epoch get a snapshot.
    public private(set) var epoch: String
    public private(set) var seq: UInt64
    public private(set) var activities: [String: Activity] = [:]
    /// Seq-ordered plain notifications and clears not yet acknowledged.
    public private(set) var notifications: [QueuedNotification] = []
    public private(set) var history: ResumeHistory
    public let notificationLimit: Int
    /// Notifications dropped because the queue was full (the oldest goes first).
    public private(set) var droppedNotifications: UInt64 = 0

    public init(deviceId: String, epoch: String, seq: UInt64 = 0, historyCapacity: Int = 1024, notificationLimit: Int = 100) {
        self.deviceId = deviceId
        self.epoch = epoch
        self.seq = seq
        self.history = ResumeHistory(capacity: historyCapacity)
        self.notificationLimit = max(1, notificationLimit)
    }

    /// Rebuilds a ledger from stored state (after a restart).
    public init(
        deviceId: String, epoch: String, seq: UInt64, activities: [Activity], notifications: [QueuedNotification],
        historyCapacity: Int = 1024, notificationLimit: Int = 100
    ) {
        self.init(deviceId: deviceId, epoch: epoch, seq: seq, historyCapacity: historyCapacity, notificationLimit: notificationLimit)
        for activity in activities { self.activities[activity.tag] = activity }
        self.notifications = notifications.sorted { $0.seq < $1.seq }
    }

    private mutating func nextSeq() -> UInt64 {
        seq += 1
        return seq
    }

    private mutating func record(_ seq: UInt64, tag: String?) {
        history.append(.init(seq: seq, tag: tag, before: tag.flatMap { visibleView(of: $0) }))
    }

    private func visibleView(of tag: String) -> ClientView? {
        guard let activity = activities[tag], activity.phase != .dismissed else { return nil }
        return activity.view
    }

    /// Applies an interpreted payload and returns the change it made (an end of nothing live becomes a clear
    /// of a notification with that tag). A full notification queue drops its oldest entry.
    public mutating func apply(_ command: PushCommand, now: Double, webhookId: String? = nil) -> [Change] {
        switch command {
        case .liveUpdate(let update):
            let seq = nextSeq()
            record(seq, tag: update.tag)
            let (activity, started) = Lifecycle.apply(update, to: activities[update.tag], seq: seq, now: now, webhookId: webhookId)
            activities[update.tag] = activity
            if started { return [Change(seq: seq, kind: .start, tag: update.tag)] }
            return [Change(seq: seq, kind: .update, tag: update.tag, silent: update.silent, alert: update.alert)]
        case .end(let request):
            if let change = end(tag: request.tag, dismissal: request.dismissal, now: now, staleDate: request.staleDate, relevanceScore: request.relevanceScore) {
                return [change]
            }
            return [enqueue(.clear(tag: request.tag), now: now)]
        case .notification(let notification):
            return [enqueue(.notification(notification), now: now)]
        }
    }

    /// Ends the live activity under `tag`; `nil` if there is none.
    public mutating func end(
        tag: String, dismissal: DismissalPolicy, now: Double, staleDate: Double? = nil, relevanceScore: Double? = nil
    ) -> Change? {
        guard let activity = activities[tag], activity.phase.isLive else { return nil }
        let seq = nextSeq()
        record(seq, tag: tag)
        activities[tag] = Lifecycle.end(activity, dismissal: dismissal, seq: seq, now: now, staleDate: staleDate, relevanceScore: relevanceScore)
        return Change(seq: seq, kind: .end, tag: tag)
    }

    /// Ends every live activity (seed 004 `endAllActivities`).
    public mutating func endAll(dismissal: DismissalPolicy, now: Double) -> [Change] {
        activities.keys.sorted().compactMap { end(tag: $0, dismissal: dismissal, now: now) }
    }

    /// The user dismissed the activity on the device.
    public mutating func dismissedByUser(tag: String, now: Double) -> Change? {
        guard var activity = activities[tag], activity.phase != .dismissed else { return nil }
        let seq = nextSeq()
        record(seq, tag: tag)
        if activity.endedAt == nil { activity.endedAt = now }
        activity.dismissalDate = now
        activity.phase = .dismissed
        activity.updatedAt = now
        activity.lastSeq = seq
        activities[tag] = activity
        return Change(seq: seq, kind: .lifecycle, tag: tag)
    }

    /// Lets time act: stale dates, Apple's 8 h ceiling, dismissals that fall due.
    public mutating func advance(to now: Double) -> [Change] {
        var changes = [Change]()
        for tag in activities.keys.sorted() {
            guard let activity = activities[tag], let transition = Lifecycle.transition(of: activity, now: now) else { continue }
            switch transition {
            case .expired:
                if let change = end(tag: tag, dismissal: .default, now: now) { changes.append(change) }
            case .becameStale, .dismissed:
                let seq = nextSeq()
                record(seq, tag: tag)
                var next = activity
                next.phase = transition == .becameStale ? .stale : .dismissed
                next.updatedAt = now
                next.lastSeq = seq
                activities[tag] = next
                changes.append(Change(seq: seq, kind: .lifecycle, tag: tag))
            }
        }
        return changes
    }

    /// The earliest time `advance(to:)` has something to do.
    public var nextDeadline: Double? {
        activities.values.compactMap(Lifecycle.nextDeadline(of:)).min()
    }

    /// Forgets dismissed activities (housekeeping). A session that still shows one learns of the dismissal
    /// anyway: the coalescer treats a missing activity as dismissed. Returns the tags removed.
    @discardableResult
    public mutating func pruneDismissed() -> [String] {
        let gone = activities.filter { $0.value.phase == .dismissed }.map(\.key)
        for tag in gone { activities.removeValue(forKey: tag) }
        return gone.sorted()
    }

    private mutating func enqueue(_ body: QueuedNotification.Body, now: Double) -> Change {
        let seq = nextSeq()
        record(seq, tag: nil)
        notifications.append(QueuedNotification(seq: seq, body: body, acceptedAt: now))
        if notifications.count > notificationLimit {
            notifications.removeFirst(notifications.count - notificationLimit)
            droppedNotifications += 1
        }
        switch body {
        case .notification(let n): return Change(seq: seq, kind: .notification, tag: n.tag)
        case .clear(let tag): return Change(seq: seq, kind: .clear, tag: tag)
        }
    }

    /// Drops notifications every interested session has acknowledged.
    public mutating func pruneNotifications(through seq: UInt64) {
        if let firstKept = notifications.firstIndex(where: { $0.seq > seq }) {
            if firstKept > 0 { notifications.removeFirst(firstKept) }
        } else {
            notifications.removeAll()
        }
    }

    /// Drops notifications older than `age` seconds.
    public mutating func expireNotifications(olderThan cutoff: Double) {
        notifications.removeAll { $0.acceptedAt < cutoff }
    }

    public mutating func markUnsafeResumePoint(_ seq: UInt64) {
        history.markUnsafe(seq)
    }

    /// Starts a new epoch (after an unclean restart): no old seq can be resumed by replay.
    public mutating func startEpoch(_ newEpoch: String) {
        epoch = newEpoch
        history.reset()
    }

    /// Activities a snapshot shows: everything not yet dismissed, in a stable order.
    public var visibleActivities: [Activity] {
        activities.values.filter { $0.phase != .dismissed }.sorted { $0.tag < $1.tag }
    }
}
