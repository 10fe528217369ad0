// The pacer's per-device state and rules (see `RelayPacer` for the contract). Internal: tests inspect it.

enum Lane: Hashable {
    case notifications
    /// A waiting item of a slot, by its index in the slot's queue.
    case slot(String, index: Int)
}

struct Entry: Sendable {
    var item: RelayItem
    /// Arrival order across the pacer; a merged entry keeps the older one (it has waited longer).
    var ordinal: UInt64
    var queuedAt: Double
    /// Handed out at least once: a start that may have reached the device.
    var attempted = false
    /// When this attempt left (for giving the start budget back after a failure).
    var dispatchedAt: Double?
}

struct Slot: Sendable {
    /// At most two: `[end, start|update]` (an end of the previous activity, then the next one).
    var pending: [Entry] = []
    var inFlight: Entry?
    var inFlightCancelled = false
    /// When the last start or update of this slot left; the next update may go one interval later.
    var lastSentAt: Double?
    /// `lastSentAt` before the attempt in flight: restored when that attempt fails.
    var lastSentBeforeFlight: Double?
    /// This slot's own retries: a failing activity never holds back the device's other items.
    var backoff = Backoff()
}

/// One lane's consecutive failures and how long it waits after them.
struct Backoff: Sendable {
    var failures = 0
    var until: Double?

    func holds(now: Double) -> Bool { (until ?? -.infinity) > now }
}

struct DeviceState: Sendable {
    var slots: [String: Slot] = [:]
    var notifications: [Entry] = []
    var notificationInFlight: Entry?
    var notificationInFlightCancelled = false
    /// Dispatch times of starts (ascending), pruned to the budget window.
    var startTimes: [Double] = []
    /// When the device's last update left (reserve mode spaces updates per device).
    var lastUpdateAt: Double?
    /// The relay's last word on the day's quota (its answers' `rateLimits.remaining`).
    var remaining: Int?
    var resetsAt: Double?
    /// Requests the device sent today (UTC day `sent.day`): lanpush's own count against `limits.dailyQuota`, which
    /// bounds what it sends whatever the relay says (or whether it says anything: a push_url that answers without
    /// `rateLimits`, or one that loops back into lanpush).
    var sent: (day: Int, count: Int) = (0, 0)
    var holdUntil: Double?
    /// The notification lane's retries (slots have their own).
    var notificationBackoff = Backoff()
    var tokenInvalid = false
    /// The device's items go to HA's Android relay path (see `RelayItem.isAndroid`).
    var android = false
    /// Cached: the earliest time `dispatch` may release something; `nil` = nothing waits (or only answers).
    var wake: Double?

    var queuedCount: Int { notifications.count + slots.values.reduce(0) { $0 + $1.pending.count } }
    var inFlightCount: Int {
        (notificationInFlight == nil ? 0 : 1) + slots.values.reduce(0) { $0 + ($1.inFlight == nil ? 0 : 1) }
    }

    static func nextUTCMidnight(after now: Double) -> Double { ((now / 86_400).rounded(.down) + 1) * 86_400 }

    static func utcDay(_ now: Double) -> Int { Int((now / 86_400).rounded(.down)) }

    /// Requests sent today.
    func sentToday(now: Double) -> Int { sent.day == Self.utcDay(now) ? sent.count : 0 }

    /// What may still be sent today: the relay's last word, and never more than the daily quota less what was sent.
    func quotaLeft(now: Double, limits: RelayLimits) -> Int {
        min(remaining ?? .max, limits.dailyQuota - sentToday(now: now))
    }

    mutating func countSent(now: Double, _ delta: Int) {
        let day = Self.utcDay(now)
        if sent.day != day { sent = (day, 0) }
        sent.count = max(0, sent.count + delta)
    }

    /// Every lane's retry state (the notification queue's, then each slot's).
    var lanes: [Backoff] { [notificationBackoff] + slots.values.map(\.backoff) }

    /// The lane's retry state, for the lane an item travels in.
    func backoff(of item: RelayItem) -> Backoff {
        if item.isSlotItem, let tag = item.tag { return slots[tag]?.backoff ?? Backoff() }
        return notificationBackoff
    }

    /// Plain notifications and commands that waited longer than `maxHold` (a 429 until midnight, a long outage):
    /// dropped and returned — a doorbell is not worth delivering hours late. Slots keep their latest state.
    mutating func dropExpired(now: Double, maxHold: Double) -> [RelayItem] {
        guard let first = notifications.first, first.queuedAt <= now - maxHold else { return [] }
        let expired = notifications.filter { $0.queuedAt <= now - maxHold }
        notifications.removeAll { $0.queuedAt <= now - maxHold }
        return expired.map(\.item)
    }

    // MARK: Queueing

    /// Adds an entry to its lane; returns how many queued items that removed (superseded ones, plus the
    /// entry itself when an end cancels a start never sent).
    mutating func enqueue(_ entry: Entry, limits: RelayLimits) -> Int {
        android = entry.item.isAndroid
        guard entry.item.isSlotItem, let tag = entry.item.tag else {
            var e = entry
            if e.item.kind != .notification { e.item.kind = .notification }
            notifications.append(e)
            return 0
        }
        return Self.merge(entry, into: &slots[tag, default: Slot()].pending, limits: limits)
    }

    /// The slot rules: the latest state wins, an update merges into a waiting start, an end supersedes a
    /// waiting update (carrying its state) or start (an end of a start never sent cancels both).
    static func merge(_ entry: Entry, into pending: inout [Entry], limits: RelayLimits) -> Int {
        var e = entry
        var removed = 0
        func absorb(_ last: Entry) {
            e.ordinal = min(e.ordinal, last.ordinal)
            e.queuedAt = min(e.queuedAt, last.queuedAt)
            pending.removeLast()
            removed += 1
        }
        switch e.item.kind {
        case .update:
            if let last = pending.last {
                switch last.item.kind {
                case .start:
                    e.item.body = RelayBodyEdit.mergeIntoStart(start: last.item.body, update: e.item.body)
                    e.item.kind = .start
                    e.attempted = last.attempted
                    absorb(last)
                case .update:
                    e.item.body = RelayBodyEdit.mergeUpdates(older: last.item.body, newer: e.item.body)
                    absorb(last)
                case .end, .notification:
                    break
                }
            }
        case .start:
            if let last = pending.last, last.item.kind == .start || last.item.kind == .update { absorb(last) }
        case .end:
            while let last = pending.last {
                if last.item.kind == .update {
                    if limits.endCarriesFinalState {
                        e.item.body = RelayBodyEdit.endCarryingState(end: e.item.body, superseded: last.item.body)
                    }
                    absorb(last)
                } else if last.item.kind == .start {
                    absorb(last)
                    if !last.attempted { return removed + 1 }  // the activity never showed: nothing to end
                } else if last.item.kind == .end {
                    absorb(last)
                    break
                } else {
                    break
                }
            }
        case .notification:
            break
        }
        pending.append(e)
        return removed
    }

    mutating func remove(_ lane: Lane) -> RelayItem {
        switch lane {
        case .notifications:
            return notifications.removeFirst().item
        case .slot(let tag, let index):
            let item = slots[tag]!.pending.remove(at: index).item
            return item
        }
    }

    /// Drops every queued item and disowns requests in flight (they will not be retried).
    mutating func cancelAll() -> [RelayItem] {
        var dropped = notifications.map(\.item)
        notifications.removeAll()
        if notificationInFlight != nil { notificationInFlightCancelled = true }
        for tag in slots.keys {
            dropped.append(contentsOf: slots[tag]!.pending.map(\.item))
            slots[tag]!.pending.removeAll()
            if slots[tag]!.inFlight != nil { slots[tag]!.inFlightCancelled = true }
        }
        return dropped.sorted { $0.seq < $1.seq }
    }
}
