/// What one session still has to be sent, and the credit it has to send it with.
///
/// Each tag is a slot. What the client holds of a tag (`ClientView`) is the ledger's current view of it, except
/// for a dirty slot: the device's ledger moved on, and the slot keeps what the client still holds (the change's
/// `before`). Whenever the session has credit, the dirty slot (or queued notification) holding the oldest
/// newest-change goes out as ONE frame that takes the client from what it holds to the current state, and the slot
/// is clean again. A fast reader therefore gets every change as it happens; a slow one gets fewer, merged frames;
/// memory is one pending record per dirty tag, never per update, and nothing for a tag the client is in step with
/// (a session kept a view of every tag before: ~225 bytes a tag and session, 2.2 MiB for 100 devices of 100 tags).
///
/// Frames go out in increasing seq: a slot's order key is the seq of its newest change (a slot that changes
/// again moves to the back), notifications keep their own seq.
public struct Coalescer: Sendable {
    struct Pending: Sendable, Hashable {
        var newest: UInt64
        var oldest: UInt64
        var allSilent: Bool
        /// What the client holds of the tag: the view before the oldest change not yet sent.
        var held: ClientView?
        /// Where the slot's live entry in `order` is: `orderBase` + its index.
        var orderSlot = 0
    }

    public let window: Int
    private var pending: [String: Pending] = [:]
    /// The alert a dirty slot's frame carries (the newest its changes brought), apart from `pending`: few changes have
    /// one, and each slot would carry room for one (48 bytes) through every lookup of a table that a burst grows to
    /// the number of tags.
    private var alerts: [String: ActivityAlert] = [:]
    /// FIFO of (key, tag). A slot that changes again moves to the back: its entry there is new, and the one it leaves
    /// is marked dead (key 0, never a change's seq), so the writer skips it without looking the tag up — at saturation
    /// a frame's slot had merged a few changes, and each left an entry that cost a hash of its tag to skip.
    private var order: [(key: UInt64, tag: String)] = []
    private var orderHead = 0
    /// Entries dropped from the front of `order` since it was last rebuilt (`Pending.orderSlot` counts from there).
    private var orderBase = 0
    /// Seq of the newest notification sent (or not needed by the client).
    public private(set) var notificationCursor: UInt64
    /// Sent, not yet acknowledged, in send order: (seq, sent at). At most `window` long.
    private var inFlight: [(seq: UInt64, sentAt: Double)] = []
    public private(set) var lastSentSeq: UInt64
    public private(set) var ackedSeq: UInt64
    /// The snapshot a `.snapshot` start begins with, built at subscribe time.
    private var snapshot: OutboundEvent?
    /// A `synced` frame is owed once every change up to this seq has gone out.
    private var syncTarget: UInt64?
    /// The newest dropped notification this session was told about (or had been sent before it was dropped).
    private var droppedReported: UInt64

    private init(window: Int, cursor: UInt64) {
        self.window = max(1, window)
        self.notificationCursor = cursor
        self.lastSentSeq = cursor
        self.ackedSeq = cursor
        self.droppedReported = cursor
    }

    /// How a session starts: with a snapshot (first frame), or by replay from its resume point.
    public enum Start: Sendable, Hashable {
        case snapshot
        case replay(from: UInt64)
    }

    /// Subscribes a session to `ledger`. With a resume point in the ledger's epoch that the history can
    /// serve, the slots start from what the client held at that seq and only the difference is sent;
    /// otherwise a snapshot of every visible activity goes out, preceded by the queued notifications the
    /// client may not have (their seqs are lower than the snapshot's).
    public static func subscribe(
        ledger: DeviceLedger, resume: (epoch: String, seq: UInt64)?, window: Int
    ) -> (Coalescer, Start) {
        if let resume, resume.epoch == ledger.epoch,
            let entries = ledger.history.changes(after: resume.seq, current: ledger.seq)
        {
            var c = Coalescer(window: window, cursor: resume.seq)
            var seen = Set<String>()
            // What the client held at `seq`: for each tag changed since, the view before its first change; for
            // the others, what the ledger holds now.
            for entry in entries {
                guard let tag = entry.tag else { continue }
                if seen.insert(tag).inserted {
                    c.pending[tag] = Pending(
                        newest: entry.seq, oldest: entry.seq, allSilent: false, held: entry.before)
                } else {
                    c.pending[tag]!.newest = entry.seq
                }
            }
            c.rebuildOrder()
            c.syncTarget = ledger.seq
            return (c, .replay(from: resume.seq))
        }
        let floor = resume.flatMap { $0.epoch == ledger.epoch && $0.seq <= ledger.seq ? $0.seq : nil } ?? 0
        var c = Coalescer(window: window, cursor: floor)
        // A client starting afresh never had what was dropped before it came: only a resuming one is told.
        if resume == nil, let newest = ledger.droppedNotificationSeqs.last { c.droppedReported = newest }
        c.snapshot = .snapshot(epoch: ledger.epoch, seq: ledger.seq, activities: ledger.visibleActivities)
        c.syncTarget = ledger.seq
        return (c, .snapshot)
    }

    /// `note(_:)` for each of `changes`; returns how many merged.
    public mutating func note(_ changes: [Change]) -> Int {
        var merged = 0
        for change in changes where note(change) { merged += 1 }
        return merged
    }

    /// Tells the session about an accepted change of its device (every session of every device an update goes to
    /// comes here). Returns true when the change merged into one still waiting to be sent (a coalesced update).
    @discardableResult
    public mutating func note(_ change: Change) -> Bool {
        guard change.kind.isSlot, let tag = change.tag else { return false }  // notifications are read from the ledger
        let seq = change.seq
        let silent = change.kind == .update && change.silent
        // By index: each hash of the tag counts.
        let slot = pending.index(forKey: tag)
        let orderSlot = orderBase + order.count
        if let slot {
            // In one access: reading a member through `pending.values[slot]` copies the entry (its held view
            // retained and released) before the next write.
            let left = Self.merge(seq: seq, silent: silent, orderSlot: orderSlot, into: &pending.values[slot]) - orderBase
            assert(left >= orderHead && left < order.count && order[left].tag == tag, "a slot's order entry is live")
            // Only a shortcut: an entry left unmarked is still passed over, its key no longer the slot's newest.
            if left >= orderHead, left < order.count { order[left].key = 0 }
        } else {
            // In step with the ledger until now: the client holds what the tag was before this change.
            pending[tag] = Pending(
                newest: seq, oldest: seq, allSilent: silent, held: change.before, orderSlot: orderSlot)
        }
        if change.alert != nil { alerts[tag] = change.alert }
        order.append((seq, tag))
        // A slow reader never drains `order`; rebuild it before dead entries outnumber live ones, so memory
        // stays proportional to the number of tags, not to the number of updates.
        if order.count - orderHead > 2 * pending.count + 16 { rebuildOrder() }
        return slot != nil
    }

    /// Returns the slot's order position before this change.
    private static func merge(seq: UInt64, silent: Bool, orderSlot: Int, into entry: inout Pending) -> Int {
        entry.newest = seq
        entry.allSilent = entry.allSilent && silent
        defer { entry.orderSlot = orderSlot }
        return entry.orderSlot
    }

    /// `order` anew from the slots, by their newest change: one live entry each.
    private mutating func rebuildOrder() {
        order = pending.map { (key: $0.value.newest, tag: $0.key) }.sorted { $0.key < $1.key }
        orderHead = 0
        orderBase = 0
        for (i, entry) in order.enumerated() { pending[entry.tag]!.orderSlot = i }
    }

    /// Entries this session holds: pending slots and order entries (for the O(tags) memory bound).
    public var footprint: (pending: Int, order: Int) {
        (pending.count, order.count - orderHead)
    }

    /// The room `pending` and `order` keep, used or not.
    var tableCapacity: (pending: Int, order: Int) { (pending.capacity, order.capacity) }

    public var hasCredit: Bool { inFlight.count < window }

    public var unacknowledged: Int { inFlight.count }

    /// When the oldest unacknowledged frame was sent (the ack timeout counts from it).
    public var oldestUnacknowledgedSentAt: Double? { inFlight.first?.sentAt }

    /// Number of tags with something to send.
    public var dirtySlots: Int { pending.count }

    /// Whether the client holds `tag` live and a change of it is still to be sent. When that change ended and
    /// dismissed it at once, its frame is an end with the final state, which only the ledger's activity can give.
    public func owesEnd(of tag: String) -> Bool {
        pending[tag]?.held?.phase.isLive == true
    }

    /// Notifications queued in the ledger that this session has not been sent.
    public func pendingNotifications(in ledger: DeviceLedger) -> Int {
        ledger.notifications.reduce(0) { $0 + ($1.seq > notificationCursor ? 1 : 0) }
    }

    /// Cumulative acknowledgement: every frame sent with seq <= `seq` is done.
    public mutating func acknowledge(_ seq: UInt64) {
        inFlight.removeAll { $0.seq <= seq }
        ackedSeq = max(ackedSeq, min(seq, lastSentSeq))
    }

    private mutating func sent(_ seq: UInt64, now: Double) {
        inFlight.append((seq, now))
        lastSentSeq = max(lastSentSeq, seq)
    }

    /// The next frame to send, if the session has credit and anything is due (call until the event is `nil`), and
    /// the seqs this call made unsafe to resume from: a frame that overtook older changes of other tags, so "I have
    /// that seq" no longer means "I have everything up to it". The caller marks them in the device's ledger
    /// (`DeviceLedger.markUnsafeResumePoint`), which the coalescer only reads; a resume from one gets a snapshot.
    /// `patches`, the loop's memo, shares one patch among the sessions a change fans out to.
    public mutating func next(
        ledger: DeviceLedger, now: Double, patches: PatchMemo? = nil
    ) -> (event: OutboundEvent?, unsafeResumePoints: [UInt64]) {
        if let newest = ledger.droppedNotificationSeqs.last, newest > max(droppedReported, notificationCursor) {
            let from = max(droppedReported, notificationCursor)
            droppedReported = newest
            if let missed = ledger.droppedNotifications(after: from) {
                return (.notificationsDropped(count: missed.count, through: missed.through), [])
            }
        }
        var unsafe: [UInt64] = []
        while hasCredit {
            let note = ledger.notifications.first { $0.seq > notificationCursor }
            if let frame = snapshot {
                // Queued notifications older than the snapshot go first, so seqs stay increasing and a
                // cumulative ack never covers a notification the client was not sent.
                if let note, note.seq <= frame.seq {
                    // The client does not hold the activities as of this seq until the snapshot arrives.
                    unsafe.append(note.seq)
                    notificationCursor = note.seq
                    sent(note.seq, now: now)
                    return (note.event, unsafe)
                }
                // Not in flight: it needs no ack (a quiet device's client that acks only events is never
                // closed for it), though an ack of its seq is still taken.
                snapshot = nil
                lastSentSeq = max(lastSentSeq, frame.seq)
                return (frame, unsafe)
            }
            let slot = peekSlot()
            if let note, slot.map({ note.seq < $0.key }) ?? true {
                if pending.values.contains(where: { $0.oldest < note.seq }) { unsafe.append(note.seq) }
                notificationCursor = note.seq
                sent(note.seq, now: now)
                return (note.event, unsafe)
            }
            guard let (key, tag, index) = slot else {
                compactOrder()
                return (nil, unsafe)
            }
            orderHead += 1
            let p = pending.remove(at: index).value
            // A merged frame overtaking older pending changes of other tags: "I have `key`" no longer means
            // "I have everything up to `key`", so a resume from it must be a snapshot.
            if pending.values.contains(where: { $0.oldest < key }) { unsafe.append(key) }
            let alert = alerts.isEmpty ? nil : alerts.removeValue(forKey: tag)
            if let frame = emit(
                tag: tag, key: key, pending: p, alert: alert, want: ledger.activities[tag], patches: patches)
            {
                sent(key, now: now)
                return (frame, unsafe)
            }
            // Nothing to send for this slot (e.g. an activity that came and went unseen): next one.
        }
        return (nil, unsafe)
    }

    /// The seq of a `synced` frame once it is due: every change up to the subscribe-time seq has been sent. Takes
    /// the device ledger's notification queue, all it depends on: the writer asks after every frame, and the queue is
    /// one reference where the ledger would be a copy of all its fields.
    public mutating func takeSynced(queued notifications: [QueuedNotification]) -> UInt64? {
        guard let target = syncTarget, snapshot == nil else { return nil }
        if pending.values.contains(where: { $0.oldest <= target }) { return nil }
        if notifications.contains(where: { $0.seq > notificationCursor && $0.seq <= target }) { return nil }
        syncTarget = nil
        return target
    }

    /// The oldest live order entry, with its slot's index in `pending` (valid until `pending` next changes).
    private mutating func peekSlot() -> (key: UInt64, tag: String, index: [String: Pending].Index)? {
        while orderHead < order.count {
            let entry = order[orderHead]
            if entry.key != 0, let index = pending.index(forKey: entry.tag), pending.values[index].newest == entry.key {
                return (entry.key, entry.tag, index)
            }
            orderHead += 1
        }
        return nil
    }

    /// Called with nothing left to send. A burst over many tags (an update to every device for each of 100 tags)
    /// grows `pending` and `order` to the number of tags, and a drained dictionary keeps its table: ~220 bytes
    /// a tag for every session, for as long as it lives. So tables larger than a steady trickle needs are let go; a
    /// session that keeps up holds one or two entries at a time and keeps its small ones.
    private mutating func compactOrder() {
        if pending.isEmpty, pending.capacity > Self.retainedCapacity { pending = [:] }
        if alerts.isEmpty, alerts.capacity > Self.retainedCapacity { alerts = [:] }
        if orderHead > 0, orderHead == order.count {
            orderBase += order.count
            order.removeAll(keepingCapacity: order.count <= Self.retainedCapacity)
            orderHead = 0
        } else if orderHead > 32, orderHead * 2 > order.count {
            orderBase += orderHead
            order.removeFirst(orderHead)
            orderHead = 0
        }
    }

    /// The largest drained table a session keeps (a dictionary of 8 buckets): room for the few tags a home updates
    /// at once. A table of 32 buckets, kept before, is ~3.6 KiB of `pending` slots a session, for as long as it
    /// lives, once a burst over a dozen tags went by (~36 MiB at 10,000 sessions).
    static let retainedCapacity = 8

    /// The one frame that takes the client's view of `tag` (`p.held`) to `want`: the ledger's, which is then what the
    /// client holds.
    private func emit(
        tag: String, key: UInt64, pending p: Pending, alert: ActivityAlert?, want: Activity?, patches: PatchMemo?
    ) -> OutboundEvent? {
        func diff(_ from: ClientView, _ to: ClientView) -> [String: JSONValue] {
            patches?.diff(from: from, to: to) ?? MergePatch.diff(from: from.state, to: to.state)
        }
        let has = p.held
        guard let want, want.phase != .dismissed else {
            guard let has, has.phase != .dismissed else { return nil }
            if let want, want.generation == has.generation, has.phase.isLive {
                // Ended and dismissed at once: one end frame with the final state, marked dismissed.
                return .end(
                    seq: key, tag: tag, patch: diff(has, want.view), view: want.view,
                    staleDateRemoved: has.staleDate != nil && want.view.staleDate == nil)
            }
            return .lifecycle(seq: key, tag: tag, phase: .dismissed)
        }
        let target = want.view
        guard let has, has.generation == want.generation else {
            // A new activity for the client (or one it never saw start): one start frame carries it whole,
            // ended ones included, and replaces whatever the client still shows under the tag.
            return .start(seq: key, tag: tag, attributes: want.attributes, view: target, alert: alert)
        }
        if want.phase == .ended, has.phase != .ended || has.dismissalDate != target.dismissalDate {
            // The second case: an ended activity given a new dismissal; the patch is empty.
            return .end(
                seq: key, tag: tag, patch: diff(has, target), view: target,
                staleDateRemoved: has.staleDate != nil && target.staleDate == nil)
        }
        if want.phase.isLive {
            // The patch is empty exactly when the two states are equal, and the sessions of a fan-out share it
            // (`PatchMemo`): comparing the states first walked both once more for every session.
            let patch = diff(has, target)
            if !patch.isEmpty || has.staleDate != target.staleDate || has.relevanceScore != target.relevanceScore
                || alert != nil
            {
                return .update(
                    seq: key, tag: tag, patch: patch, view: target, silent: p.allSilent, alert: alert,
                    staleDateRemoved: has.staleDate != nil && target.staleDate == nil)
            }
        }
        if has.phase != target.phase {
            return .lifecycle(seq: key, tag: tag, phase: target.phase)
        }
        return nil
    }
}
