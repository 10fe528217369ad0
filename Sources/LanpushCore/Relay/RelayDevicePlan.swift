// The pacer's per-device planning: which lanes may send now, and when the rest may (see `RelayPacer`).

extension DeviceState {
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

        if let hold = holdUntil, hold > now {
            plan.wake(at: hold)
            return plan
        }
        let left = quotaLeft(now: now, limits: limits)
        if left <= 0 {
            // The relay's own reset when it said one; lanpush's own count starts again at the UTC midnight.
            let until = remaining.map { _ in resetsAt ?? Self.nextUTCMidnight(after: now) } ?? Self.nextUTCMidnight(after: now)
            if remaining != nil { resetsAt = until }
            plan.wake(at: until)
            return plan
        }

        heads.sort { $0.ordinal < $1.ordinal }
        var budget = limits.startsPerHour - startTimes.count
        var startsTaken = 0
        let reserve = left <= limits.quotaReserve
        var reserveInterval = 0.0
        if reserve {
            let r = left
            let reset = resetsAt ?? Self.nextUTCMidnight(after: now)
            let spread = (reset - now) / Double(max(1, r - limits.quotaFloor))
            reserveInterval = max(limits.minUpdateInterval * limits.reserveIntervalFactor, spread)
        }
        var reserveUpdateTaken = false

        for head in heads {
            // A lane backing off after its own failures waits; the others go on.
            let lane = head.slot.map { slots[$0]?.backoff ?? Backoff() } ?? notificationBackoff
            if lane.holds(now: now) {
                plan.wake(at: lane.until!)
                continue
            }
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
                    if left <= limits.quotaFloor {
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
            countSent(now: now, 1)
        }
        refreshWake(now: now, limits: limits)
        return out
    }
}
