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
    var remaining: Int?
    var resetsAt: Double?
    var holdUntil: Double?
    var failures = 0
    var backoffUntil: Double?
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

    // MARK: Planning

    private struct Plan {
        var ready: [Lane] = []
        var wake: Double?

        mutating func wake(at t: Double) { wake = min(wake ?? t, t) }
    }

    /// Lets time act on the gates, then says which lanes may send now and when the rest may.
    private mutating func plan(now: Double, limits deviceLimits: RelayLimits) -> Plan {
        let limits = android ? deviceLimits.android : deviceLimits
        if let r = resetsAt, r <= now {
            resetsAt = nil
            remaining = nil
        }
        if let h = holdUntil, h <= now { holdUntil = nil }
        if let b = backoffUntil, b <= now { backoffUntil = nil }
        if let first = startTimes.first, first <= now - limits.startWindow {
            startTimes.removeAll { $0 <= now - limits.startWindow }
        }
        // A slot with nothing queued or in flight is kept only while its interval still runs.
        let idle = slots.compactMap { tag, slot in
            slot.pending.isEmpty && slot.inFlight == nil
                && (slot.lastSentAt.map { $0 + limits.minUpdateInterval <= now } ?? true) ? tag : nil
        }
        for tag in idle { slots.removeValue(forKey: tag) }
        var plan = Plan()
        guard !tokenInvalid else { return plan }

        var heads = [(ordinal: UInt64, kind: RelayItem.Kind, lane: Lane, slot: String?)]()
        if notificationInFlight == nil, let e = notifications.first {
            heads.append((e.ordinal, .notification, .notifications, nil))
        }
        for (tag, slot) in slots where slot.inFlight == nil {
            if let e = slot.pending.first { heads.append((e.ordinal, e.item.kind, .slot(tag, index: 0), tag)) }
        }
        guard !heads.isEmpty else { return plan }

        let gate = max(holdUntil ?? -.infinity, backoffUntil ?? -.infinity)
        if gate > now {
            plan.wake(at: gate)
            return plan
        }
        if let r = remaining, r <= 0 {
            let until = resetsAt ?? Self.nextUTCMidnight(after: now)
            resetsAt = until
            plan.wake(at: until)
            return plan
        }

        heads.sort { $0.ordinal < $1.ordinal }
        var budget = limits.startsPerHour - startTimes.count
        var startsTaken = 0
        let reserve = remaining.map { $0 <= limits.quotaReserve } ?? false
        var reserveInterval = 0.0
        if reserve, let r = remaining {
            let reset = resetsAt ?? Self.nextUTCMidnight(after: now)
            let spread = (reset - now) / Double(max(1, r - limits.quotaFloor))
            reserveInterval = max(limits.minUpdateInterval * limits.reserveIntervalFactor, spread)
        }
        var reserveUpdateTaken = false

        for head in heads {
            switch head.kind {
            case .end, .notification:
                plan.ready.append(head.lane)
            case .start:
                if budget > 0 {
                    budget -= 1
                    startsTaken += 1
                    plan.ready.append(head.lane)
                } else if limits.startsPerHour > 0 {
                    // The window frees a start when the start `startsPerHour` back from the newest leaves it
                    // (counting the ones this plan takes now). No budget at all: starts wait for a new config.
                    let index = startTimes.count + startsTaken - limits.startsPerHour
                    plan.wake(at: (index < startTimes.count ? startTimes[index] : now) + limits.startWindow)
                }
            case .update:
                var t = slots[head.slot!]?.lastSentAt.map { $0 + limits.minUpdateInterval } ?? -.infinity
                if reserve {
                    if let r = remaining, r <= limits.quotaFloor {
                        plan.wake(at: resetsAt ?? Self.nextUTCMidnight(after: now))
                        continue
                    }
                    t = max(t, (lastUpdateAt ?? -.infinity) + reserveInterval)
                    if reserveUpdateTaken { t = max(t, now + reserveInterval) }
                }
                if t <= now {
                    plan.ready.append(head.lane)
                    if reserve { reserveUpdateTaken = true }
                } else {
                    plan.wake(at: t)
                }
            }
        }
        return plan
    }

    mutating func refreshWake(now: Double, limits: RelayLimits) {
        let p = plan(now: now, limits: limits)
        wake = p.ready.isEmpty ? p.wake : now
    }

    /// Marks what may go now as in flight and returns it with its ordinal.
    mutating func dispatch(now: Double, limits: RelayLimits) -> [(UInt64, RelayItem)] {
        let p = plan(now: now, limits: limits)
        var out = [(UInt64, RelayItem)]()
        for lane in p.ready {
            switch lane {
            case .notifications:
                var e = notifications.removeFirst()
                e.attempted = true
                e.dispatchedAt = now
                notificationInFlight = e
                notificationInFlightCancelled = false
                out.append((e.ordinal, e.item))
            case .slot(let tag, _):
                var slot = slots.removeValue(forKey: tag)!
                var e = slot.pending.removeFirst()
                e.attempted = true
                e.dispatchedAt = now
                slot.lastSentBeforeFlight = slot.lastSentAt
                switch e.item.kind {
                case .start:
                    startTimes.append(now)
                    slot.lastSentAt = now
                case .update:
                    lastUpdateAt = now
                    slot.lastSentAt = now
                case .end:
                    slot.lastSentAt = nil  // a start of the next activity goes at once anyway
                case .notification:
                    break
                }
                slot.inFlight = e
                slot.inFlightCancelled = false
                slots[tag] = slot
                out.append((e.ordinal, e.item))
            }
            if let r = remaining { remaining = max(0, r - 1) }
        }
        refreshWake(now: now, limits: limits)
        return out
    }

    // MARK: Answers

    struct CompleteResult {
        var completion = RelayCompletion()
        var queuedDelta = 0
        var superseded = 0
        var wasInFlight = false
    }

    mutating func complete(
        _ item: RelayItem, outcome: RelayOutcome, now: Double, limits: RelayLimits, jitter: RelayPacer.Jitter
    ) -> CompleteResult {
        var result = CompleteResult()

        // Take the matching request out of flight (an unknown answer still teaches us about the quota).
        var entry: Entry?
        var cancelled = false
        var tag: String?
        if item.isSlotItem, let t = item.tag, let e = slots[t]?.inFlight, e.item.seq == item.seq, e.item.kind == item.kind {
            entry = e
            cancelled = slots[t]!.inFlightCancelled
            slots[t]!.inFlight = nil
            slots[t]!.inFlightCancelled = false
            tag = t
        } else if !item.isSlotItem, let e = notificationInFlight, e.item.seq == item.seq {
            entry = e
            cancelled = notificationInFlightCancelled
            notificationInFlight = nil
            notificationInFlightCancelled = false
        }
        result.wasInFlight = entry != nil && !cancelled

        func refundAndRequeue() {
            guard var e = entry else { return }
            if let t = e.dispatchedAt {
                if e.item.kind == .start, let i = startTimes.lastIndex(of: t) { startTimes.remove(at: i) }
                if let tag, slots[tag]?.lastSentAt == t { slots[tag]!.lastSentAt = slots[tag]!.lastSentBeforeFlight }
                if e.item.kind == .update, lastUpdateAt == t { lastUpdateAt = nil }
            }
            if let r = remaining { remaining = r + 1 }
            guard !cancelled, !tokenInvalid else { return }
            e.dispatchedAt = nil
            result.completion.retrying = true
            if let tag {
                let waiting = slots[tag]!.pending
                slots[tag]!.pending = [e]
                var removed = 0
                for w in waiting { removed += Self.merge(w, into: &slots[tag]!.pending, limits: limits) }
                result.queuedDelta += 1 - removed
                result.superseded += removed
            } else {
                notifications.insert(e, at: 0)
                result.queuedDelta += 1
            }
        }

        func fail() {
            failures += 1
            let exponent = Double(min(failures - 1, 62))
            let capped = min(limits.backoffCap, limits.backoffBase * pow2(exponent))
            backoffUntil = now + max(0, min(capped, jitter(capped)))
        }

        switch outcome {
        case .success(let remaining, let resetsAt):
            failures = 0
            backoffUntil = nil
            if let remaining { self.remaining = remaining }
            if let resetsAt { self.resetsAt = resetsAt }
        case .rateLimited(let resetsAt):
            refundAndRequeue()
            remaining = 0
            if let resetsAt, resetsAt > now {
                self.resetsAt = resetsAt
                holdUntil = max(holdUntil ?? resetsAt, resetsAt)
                failures = 0
            } else {
                // A 429 without a usable reset time: wait as after a failure, quota unknown.
                remaining = nil
                fail()
            }
        case .forbidden:
            failures = 0
            if !tokenInvalid { result.completion.tokenInvalidated = true }
            tokenInvalid = true
            if let entry, !cancelled { result.completion.dropped.append(entry.item) }
            let queued = cancelAll()
            result.completion.dropped.append(contentsOf: queued)
            result.queuedDelta -= queued.count
        case .rejected:
            failures = 0
            if let entry, !cancelled { result.completion.dropped.append(entry.item) }
        case .failed:
            refundAndRequeue()
            fail()
        }
        return result
    }

    /// Nothing queued, in flight, held or remembered that would change what happens next.
    func isForgettable(now: Double, limits: RelayLimits) -> Bool {
        guard !tokenInvalid, slots.isEmpty, notifications.isEmpty, notificationInFlight == nil, failures == 0,
            remaining == nil
        else { return false }
        if (holdUntil ?? -.infinity) > now || (backoffUntil ?? -.infinity) > now { return false }
        return !startTimes.contains { $0 > now - limits.startWindow }
    }
}

/// 2^x for small non-negative integral x, without Foundation.
private func pow2(_ x: Double) -> Double {
    var result = 1.0
    var n = Int(x)
    while n > 0 {
        result *= 2
        n -= 1
    }
    return result
}
