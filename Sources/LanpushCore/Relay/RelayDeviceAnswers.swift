// The pacer's per-device answers: what each outcome of a request does to the device's lanes and gates.

extension DeviceState {
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
            if let t = e.dispatchedAt { countSent(now: t, -1) }
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

        /// The item's own lane backs off (`jitter(min(cap, base * 2^(n-1)))` after its n-th failure in a row).
        func fail() {
            var lane = backoff(of: item)
            lane.failures += 1
            let exponent = Double(min(lane.failures - 1, 62))
            let capped = min(limits.backoffCap, limits.backoffBase * pow2(exponent))
            lane.until = now + max(0, min(capped, jitter(capped)))
            setBackoff(lane, of: item)
        }

        if case .failed = outcome {} else { setBackoff(Backoff(), of: item) }
        switch outcome {
        case .success(let remaining, let resetsAt):
            if let remaining { self.remaining = remaining }
            if let resetsAt { self.resetsAt = resetsAt }
        case .rateLimited(let resetsAt):
            refundAndRequeue()
            remaining = 0
            if let resetsAt, resetsAt > now {
                self.resetsAt = resetsAt
                holdUntil = max(holdUntil ?? resetsAt, resetsAt)
            } else {
                // A 429 without a usable reset time: wait as after a failure, quota unknown.
                remaining = nil
                fail()
            }
        case .forbidden:
            if !tokenInvalid { result.completion.tokenInvalidated = true }
            tokenInvalid = true
            if let entry, !cancelled { result.completion.dropped.append(entry.item) }
            let queued = cancelAll()
            result.completion.dropped.append(contentsOf: queued)
            result.queuedDelta -= queued.count
        case .rejected, .payloadTooLarge:
            if let entry, !cancelled { result.completion.dropped.append(entry.item) }
        case .failed:
            refundAndRequeue()
            fail()
        }
        return result
    }

    private mutating func setBackoff(_ backoff: Backoff, of item: RelayItem) {
        if item.isSlotItem, let tag = item.tag {
            // A slot gone idle keeps its backoff only while it matters.
            if slots[tag] != nil { slots[tag]!.backoff = backoff } else if backoff.failures > 0 { slots[tag] = Slot(backoff: backoff) }
        } else {
            notificationBackoff = backoff
        }
    }

    /// Nothing queued, in flight, held or remembered that would change what happens next.
    func isForgettable(now: Double, limits: RelayLimits) -> Bool {
        guard !tokenInvalid, slots.isEmpty, notifications.isEmpty, notificationInFlight == nil,
            notificationBackoff.failures == 0, remaining == nil, sentToday(now: now) == 0
        else { return false }
        if (holdUntil ?? -.infinity) > now { return false }
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
