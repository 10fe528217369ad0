/// Everything the gateway knows of one device's activities and notifications, and the sequence that orders
/// its changes. Pure: the caller (the gateway's loop-owned ingest) passes the time and fans the returned changes out to
/// the device's sessions, the store and the relay path.
public struct DeviceLedger: Sendable {
    public let deviceId: String
    /// Changes whenever the sequence restarts (an unclean restart): clients with another epoch get a snapshot.
    public private(set) var epoch: String
    public private(set) var seq: UInt64
    public private(set) var activities: [String: Activity] = [:] {
        // Any change of an activity may move the next deadline. A `didSet` that does not read `oldValue` still
        // lets an activity be changed in place through its slot.
        didSet { knownDeadline = nil }
    }
    /// `nextDeadline` as last worked out, until the activities change (`nil` = to be worked out again).
    private var knownDeadline: Double?? = nil
    /// Seq-ordered plain notifications and clears not yet acknowledged.
    public private(set) var notifications: [QueuedNotification] = []
    public private(set) var history: ResumeHistory
    /// The queue's bound, in bytes of frames: past it the oldest undelivered notification is dropped (the newest
    /// always stays). A sender is never refused and a client never disconnected for it.
    public let notificationQueueBytes: Int
    public private(set) var notificationBytes = 0
    /// Seqs of the notifications dropped from the queue, oldest first (the most recent `droppedMemory`): a
    /// session that had not been sent them is told how many it missed.
    public private(set) var droppedNotificationSeqs: [UInt64] = []
    /// Every notification dropped since start (a metric).
    public private(set) var droppedNotificationTotal: UInt64 = 0
    static let droppedMemory = 4096

    public static let defaultNotificationQueueBytes = 1 << 20

    public init(
        deviceId: String, epoch: String, seq: UInt64 = 0, historyCapacity: Int = 1024,
        notificationQueueBytes: Int = DeviceLedger.defaultNotificationQueueBytes
    ) {
        self.deviceId = deviceId
        self.epoch = epoch
        self.seq = seq
        self.history = ResumeHistory(capacity: historyCapacity)
        self.notificationQueueBytes = max(1, notificationQueueBytes)
    }

    /// Rebuilds a ledger from stored state (after a restart).
    public init(
        deviceId: String, epoch: String, seq: UInt64, activities: [Activity], notifications: [QueuedNotification],
        historyCapacity: Int = 1024, notificationQueueBytes: Int = DeviceLedger.defaultNotificationQueueBytes
    ) {
        self.init(
            deviceId: deviceId, epoch: epoch, seq: seq, historyCapacity: historyCapacity,
            notificationQueueBytes: notificationQueueBytes)
        for activity in activities { self.activities[activity.tag] = activity }
        self.notifications = notifications.sorted { $0.seq < $1.seq }
        self.notificationBytes = self.notifications.reduce(0) { $0 + $1.bytes }
    }

    private mutating func nextSeq() -> UInt64 {
        seq += 1
        return seq
    }

    @discardableResult
    private mutating func record(_ seq: UInt64, tag: String?) -> ClientView? {
        record(seq, tag: tag, before: tag.flatMap { activities[$0] })
    }

    /// Remembers the change with the view the client had of the tag before it (`before`'s, unless dismissed), and
    /// returns that view for the change's sessions (`Change.before`).
    @discardableResult
    private mutating func record(_ seq: UInt64, tag: String?, before: Activity?) -> ClientView? {
        record(seq, tag: tag, view: before?.visibleView, stateBytes: before?.stateBytes)
    }

    /// `record(_:tag:before:)` with the view already read (`stateBytes`: its state's size as JSON).
    @discardableResult
    private mutating func record(_ seq: UInt64, tag: String?, view: ClientView?, stateBytes: Int?) -> ClientView? {
        history.append(.init(seq: seq, tag: tag, before: view, stateBytes: stateBytes))
        return view
    }

    /// Applies an interpreted payload and returns the changes it made. A `clear_notification` ends (and, unless it
    /// names a dismissal, dismisses) the activity under its tag and clears the notifications with that tag: an end
    /// and a clear. A full notification queue drops its oldest entry. Companion-app commands change nothing here.
    /// `relayBody`: the payload as the relay takes it for this device, kept on the activity it starts, changes or ends
    /// (`Activity.deferredRelayBody`); `nil` keeps what the activity had.
    public mutating func apply(
        _ command: PushCommand, now: Double, webhookId: String? = nil, relayBody: DeferredJSON? = nil
    ) -> [Change] {
        switch command {
        case .liveUpdate(let update):
            let seq = nextSeq()
            // One lookup of the tag serves the history's view before the change, the change itself and its relay
            // body (an update goes to every device it targets, so each hash of the tag counts), and the activity is
            // changed in place through its slot.
            guard let slot = activities.index(forKey: update.tag) else {
                record(seq, tag: update.tag, before: nil)
                var activity = Lifecycle.start(update, seq: seq, now: now, webhookId: webhookId)
                activity.deferredRelayBody = relayBody
                activities[update.tag] = activity
                return [Change(seq: seq, kind: .start, tag: update.tag)]
            }
            // What the client held is read inside the same access as the change: the activity read out of its
            // slot for the history was a copy (its box retained and released) for every device of a fan-out.
            let (before, beforeBytes, started) = Self.applyUpdate(
                update, relayBody: relayBody, to: &activities.values[slot], seq: seq, now: now, webhookId: webhookId)
            record(seq, tag: update.tag, view: before, stateBytes: beforeBytes)
            if started {
                return [Change(seq: seq, kind: .start, tag: update.tag, before: before)]
            }
            return [
                Change(
                    seq: seq, kind: .update, tag: update.tag, silent: update.silent, alert: update.alert, before: before)
            ]
        case .end(let request):
            var changes = [Change]()
            if let change = end(tag: request.tag, dismissal: request.dismissal, now: now, staleDate: request.staleDate, relevanceScore: request.relevanceScore) {
                changes.append(change)
                if let relayBody { setRelayBody(relayBody, of: request.tag) }
            }
            changes.append(enqueue(.clear(tag: request.tag), now: now))
            return changes
        case .notification(let notification):
            return [enqueue(.notification(notification), now: now)]
        case .command:
            return []
        }
    }

    /// `Lifecycle.apply` and the relay body, in one access to the activity's slot; returns what a client held before
    /// (the view `record` keeps, with its state's size) and whether the update started a new activity.
    private static func applyUpdate(
        _ update: LiveUpdate, relayBody: DeferredJSON?, to activity: inout Activity, seq: UInt64, now: Double,
        webhookId: String?
    ) -> (before: ClientView?, beforeBytes: Int, started: Bool) {
        let before = activity.visibleView
        let beforeBytes = activity.stateBytes
        let started = Lifecycle.apply(update, to: &activity, seq: seq, now: now, webhookId: webhookId)
        if let relayBody { activity.deferredRelayBody = relayBody }
        return (before, beforeBytes, started)
    }

    /// Replaces the relay body of the activity under `tag` (an end the gateway made itself, which came with no
    /// payload of Home Assistant's); nothing when there is none.
    public mutating func setRelayBody(_ body: DeferredJSON, of tag: String) {
        guard let slot = activities.index(forKey: tag) else { return }
        activities.values[slot].deferredRelayBody = body
    }

    /// Ends the live activity under `tag`, or applies a new dismissal to an ended one still visible; `nil` when
    /// there is no activity under the tag or it is already dismissed.
    public mutating func end(
        tag: String, dismissal: DismissalPolicy, now: Double, staleDate: Double? = nil, relevanceScore: Double? = nil
    ) -> Change? {
        guard let activity = activities[tag], activity.phase != .dismissed else { return nil }
        let seq = nextSeq()
        let before = record(seq, tag: tag)
        activities[tag] = Lifecycle.end(activity, dismissal: dismissal, seq: seq, now: now, staleDate: staleDate, relevanceScore: relevanceScore)
        return Change(seq: seq, kind: .end, tag: tag, before: before)
    }

    /// Ends every activity not yet dismissed (the Scripting app's `endAllActivities`), ended ones included: they
    /// take the new dismissal.
    public mutating func endAll(dismissal: DismissalPolicy, now: Double) -> [Change] {
        activities.keys.sorted().compactMap { end(tag: $0, dismissal: dismissal, now: now) }
    }

    /// The user dismissed the activity on the device.
    public mutating func dismissedByUser(tag: String, now: Double) -> Change? {
        guard var activity = activities[tag], activity.phase != .dismissed else { return nil }
        let seq = nextSeq()
        let before = record(seq, tag: tag)
        if activity.endedAt == nil { activity.endedAt = now }
        activity.dismissalDate = now
        activity.phase = .dismissed
        activity.updatedAt = now
        activity.lastSeq = seq
        activities[tag] = activity
        return Change(seq: seq, kind: .lifecycle, tag: tag, before: before)
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
                let before = record(seq, tag: tag)
                var next = activity
                next.phase = transition == .becameStale ? .stale : .dismissed
                next.updatedAt = now
                next.lastSeq = seq
                activities[tag] = next
                changes.append(Change(seq: seq, kind: .lifecycle, tag: tag, before: before))
            }
        }
        return changes
    }

    /// The earliest time `advance(to:)` has something to do. Kept until the activities change: the loop asks every
    /// device four times a second, and walking each one's activities then cost a millisecond a tick with 1,000
    /// devices — a millisecond in which no request was read.
    public var nextDeadline: Double? {
        mutating get {
            if let knownDeadline { return knownDeadline }
            var earliest: Double?
            for activity in activities.values {
                guard let deadline = Lifecycle.nextDeadline(of: activity) else { continue }
                if earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
            }
            knownDeadline = .some(earliest)
            return earliest
        }
    }

    /// Forgets dismissed activities (housekeeping), except those `keeping` names. A session that still shows one
    /// learns of the dismissal anyway (the coalescer treats a missing activity as dismissed), but only as a bare
    /// dismissal: an activity ended and dismissed at once is kept while a session still owes its end (`keeping`),
    /// which carries the final state. Returns the tags removed.
    @discardableResult
    public mutating func pruneDismissed(keeping: (String) -> Bool = { _ in false }) -> [String] {
        let gone = activities.filter { $0.value.phase == .dismissed && !keeping($0.key) }.map(\.key)
        for tag in gone { activities.removeValue(forKey: tag) }
        return gone.sorted()
    }

    private mutating func enqueue(_ body: QueuedNotification.Body, now: Double) -> Change {
        let seq = nextSeq()
        record(seq, tag: nil)
        let queued = QueuedNotification(seq: seq, body: body, acceptedAt: now)
        notifications.append(queued)
        notificationBytes += queued.bytes
        if notificationBytes > notificationQueueBytes { dropOldestNotifications() }
        switch body {
        case .notification(let n): return Change(seq: seq, kind: .notification, tag: n.tag)
        case .clear(let tag): return Change(seq: seq, kind: .clear, tag: tag)
        }
    }

    private mutating func dropOldestNotifications() {
        var count = 0
        while notificationBytes > notificationQueueBytes, notifications.count - count > 1 {
            notificationBytes -= notifications[count].bytes
            droppedNotificationSeqs.append(notifications[count].seq)
            count += 1
        }
        notifications.removeFirst(count)
        droppedNotificationTotal += UInt64(count)
        if droppedNotificationSeqs.count > Self.droppedMemory {
            droppedNotificationSeqs.removeFirst(droppedNotificationSeqs.count - Self.droppedMemory)
        }
    }

    /// How many notifications with seq in `after+1 ... through` were dropped, and the newest of them.
    public func droppedNotifications(after seq: UInt64) -> (count: Int, through: UInt64)? {
        guard let newest = droppedNotificationSeqs.last, newest > seq else { return nil }
        var count = 0
        for dropped in droppedNotificationSeqs.reversed() {
            guard dropped > seq else { break }
            count += 1
        }
        return (count, newest)
    }

    /// Drops notifications every interested session has acknowledged.
    public mutating func pruneNotifications(through seq: UInt64) {
        let firstKept = notifications.firstIndex(where: { $0.seq > seq }) ?? notifications.count
        guard firstKept > 0 else { return }
        for i in 0..<firstKept { notificationBytes -= notifications[i].bytes }
        notifications.removeFirst(firstKept)
    }

    /// The gateway-wide budget takes memory back: the oldest changes go, and with them replay from before
    /// what stays (a resume from there gets a snapshot).
    public mutating func trimHistory(toBytes limit: Int) {
        history.dropOldest(whileBytesAbove: limit)
    }

    /// Every session of the device has acknowledged `seq`: the history forgets the changes only a resume from before
    /// it would replay. A client resumes from the highest seq it applied, which is never below what it acknowledged,
    /// so the history's memory goes to the devices whose clients are away or behind, not to those that keep up. One
    /// that resumes from further back all the same (it lost what it had applied) gets a snapshot.
    /// Returns whether anything went (the caller recounts the budget then).
    @discardableResult
    public mutating func forgetHistory(before seq: UInt64) -> Bool {
        guard let oldest = history.oldestSeq, oldest < seq else { return false }
        history.dropOlder(than: seq)
        return true
    }

    /// The loop's tick: a history that has gone quiet gives back the room it kept while busy.
    public mutating func releaseQuietHistoryRoom() {
        history.releaseRoomIfQuiet()
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
