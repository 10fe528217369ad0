import Testing

@testable import LanpushCore

/// What the relay's answers mean to the pacer (how HTTP answers become `RelayOutcome`s is the relay client's,
/// `RelayClientTests`), and the bounds the pacer keeps whatever the relay says.
@Suite struct RelayAnswersTests {
    static func limits(quota: Int = 500, maxHold: Double = 900) -> RelayLimits {
        var limits = RelayLimits(minUpdateInterval: 15, startsPerHour: 10, quotaReserve: 0)
        limits.dailyQuota = quota
        limits.maxHold = maxHold
        return limits
    }

    /// A dead token (500 `InvalidToken`) stops the device's relay path at once: the item and everything queued are
    /// dropped and reported, nothing is retried.
    @Test func anInvalidTokenIsNeverRetried() {
        var h = PacerHarness(Self.limits())
        h.autoAnswer = nil
        h.submit(.notification, tag: nil)
        h.submit(.notification, tag: nil)
        h.answerOldest(.forbidden)
        #expect(h.completions.last?.tokenInvalidated == true)
        #expect(h.completions.last?.dropped.count == 2)
        h.advance(by: 600, step: 5)
        #expect(h.sent.count == 1)
        #expect(h.pacer.status(of: "phone", now: h.now)?.tokenInvalid == true)
    }

    /// A message too large for the push service is dropped alone; the device's next item goes at once.
    @Test func aPayloadTooLargeDropsThatItemOnly() {
        var h = PacerHarness(Self.limits())
        h.autoAnswer = nil
        h.submit(.notification, tag: nil)
        h.submit(.notification, tag: nil)
        h.answerOldest(.payloadTooLarge)
        #expect(h.completions.last?.dropped.map(\.seq) == [1])
        #expect(h.sent.map(\.item.seq) == [1, 2])
        #expect(h.pacer.stats.droppedRejected == 1)
    }

    /// One item's failure holds back only its own lane: the relay retries it with backoff while the device's other
    /// activities and its notifications go on.
    @Test func aFailingItemNeverHoldsBackTheDevicesOtherItems() {
        var h = PacerHarness(Self.limits())
        h.autoAnswer = { item in item.tag == "washer" ? .failed : .success(remaining: nil, resetsAt: nil) }
        h.submit(.start, tag: "washer")
        h.submit(.start, tag: "dryer")
        h.submit(.notification, tag: nil)
        #expect(Set(h.sent.map { $0.item.tag ?? "-" }) == ["washer", "dryer", "-"])
        h.advance(by: 0.2)
        h.submit(.notification, tag: nil)
        h.submit(.update, tag: "dryer")
        h.advance(by: 16, step: 0.5)
        // The dryer's update went at its interval and both notifications at once; the washer retried on its own.
        #expect(h.sent.filter { $0.item.tag == nil }.count == 2)
        #expect(h.sent.filter { $0.item.tag == "dryer" }.map(\.item.kind) == [.start, .update])
        #expect(h.sent.filter { $0.item.tag == "washer" }.count > 2)
        let status = h.pacer.status(of: "phone", now: h.now)
        #expect((status?.consecutiveFailures ?? 0) > 2 && status?.backoffUntil != nil)
    }

    /// Every request counts against the daily quota, plain notifications included, whether or not the relay says
    /// `rateLimits`: a push_url that answers without them (or loops back) cannot take more than the quota a day.
    @Test func everyRequestCountsAgainstTheDailyQuotaWithoutTheRelaysWord() {
        // (Held longer than max_hold they would be dropped at midnight: see below.)
        var h = PacerHarness(Self.limits(quota: 5, maxHold: 2 * 86_400))
        for _ in 0..<8 { h.submit(.notification, tag: nil) }
        h.advance(by: 30)
        #expect(h.sent.count == 5)
        #expect(h.pacer.status(of: "phone", now: h.now)?.sentToday == 5)
        let midnight = ((h.now / 86_400).rounded(.down) + 1) * 86_400
        #expect(h.pacer.nextDeadline == midnight)
        h.now = midnight
        h.pump()
        #expect(h.sent.count == 8)
    }

    /// A failed request is not counted (the relay counts only what it delivered); its retry is.
    @Test func aFailedRequestGivesItsQuotaBack() {
        var h = PacerHarness(Self.limits(quota: 2))
        var failed = false
        h.autoAnswer = { _ in
            if failed { return .success(remaining: nil, resetsAt: nil) }
            failed = true
            return .failed
        }
        h.submit(.notification, tag: nil)
        h.submit(.notification, tag: nil)
        h.advance(by: 5)
        #expect(h.sent.count == 3 && h.pacer.pendingItems.isEmpty)
    }

    /// The relay answers 429 until its reset (and drops the notification itself): a live activity keeps its latest
    /// state for then, but a plain notification that waited past `max_hold` is dropped — yesterday's doorbell is not
    /// delivered after midnight.
    @Test func aRateLimitedDeviceDropsNotificationsHeldPastMaxHoldAndKeepsItsActivities() {
        var h = PacerHarness(Self.limits(maxHold: 900))
        let reset = ((h.now / 86_400).rounded(.down) + 1) * 86_400
        h.autoAnswer = { _ in .rateLimited(resetsAt: reset) }
        h.submit(.start, tag: "washer")
        h.submit(.notification, tag: nil)
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        h.advance(by: 600, step: 60)
        #expect(h.pacer.takeExpired().isEmpty)
        h.advance(by: 360, step: 60)
        let expired = h.pacer.takeExpired()
        #expect(expired.map(\.kind) == [.notification])
        #expect(h.pacer.stats.droppedExpired == 1)
        h.now = reset
        h.pump()
        #expect(h.sent.suffix(1).map(\.item.kind) == [.start])
        #expect(h.pacer.pendingItems.isEmpty)
    }
}
