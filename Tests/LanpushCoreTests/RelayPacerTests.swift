import PropertyBased
import Testing

@testable import LanpushCore

/// Drives a pacer the way the gateway's relay hand-over does: submit accepted changes, send what is due, answer each request.
struct PacerHarness {
    var pacer: RelayPacer
    var now = 1_700_000_000.0
    var seqs: [String: UInt64] = [:]
    /// Every request handed out, with the time it left.
    var sent: [(at: Double, item: RelayItem)] = []
    /// Requests handed out and not yet answered (answered at once unless `autoAnswer` is nil).
    var inFlight: [RelayItem] = []
    /// The relay's answer to each request; `nil` leaves it in flight.
    var autoAnswer: ((RelayItem) -> RelayOutcome?)? = { _ in .success(remaining: nil, resetsAt: nil) }
    var completions: [RelayCompletion] = []

    init(_ limits: RelayLimits = RelayLimits(), jitter: @escaping RelayPacer.Jitter = { $0 }) {
        pacer = RelayPacer(limits: limits, jitter: jitter)
    }

    static func body(_ kind: RelayItem.Kind, tag: String?, seq: UInt64, silent: Bool = false) -> JSONValue {
        switch kind {
        case .end:
            return ["message": "clear_notification", "data": ["tag": .string(tag ?? "")], "push_token": "p"]
        case .notification:
            var data: [String: JSONValue] = [:]
            if let tag { data["tag"] = .string(tag) }
            return ["message": .string("note \(seq)"), "data": .object(data), "push_token": "p"]
        case .start, .update:
            var data: [String: JSONValue] = ["tag": .string(tag ?? ""), "live_update": true, "progress": .number(Double(seq))]
            if silent { data["silent"] = true }
            return ["message": .string("state \(seq)"), "data": .object(data), "push_token": "p"]
        }
    }

    @discardableResult
    mutating func submit(
        _ kind: RelayItem.Kind, tag: String? = "washer", device: String = "phone", silent: Bool = false
    ) -> RelaySubmission {
        let seq = (seqs[device] ?? 0) + 1
        seqs[device] = seq
        let item = RelayItem(
            device: device, tag: tag, kind: kind, url: "http://relay.test/api/sendPushNotification",
            body: Self.body(kind, tag: tag, seq: seq, silent: silent), seq: seq)
        let result = pacer.submit(item, now: now)
        pump()
        return result
    }

    /// Sends what is due and answers it (as long as the answers keep coming at once).
    mutating func pump() {
        while true {
            let due = pacer.due(now: now)
            if due.isEmpty { return }
            for item in due {
                #expect(!inFlight.contains { $0.device == item.device && $0.tag == item.tag && item.isSlotItem && $0.isSlotItem },
                        "two requests in flight for one slot")
                sent.append((now, item))
                inFlight.append(item)
            }
            var answeredAny = false
            for item in due {
                guard let outcome = autoAnswer?(item) else { continue }
                answer(item, outcome)
                answeredAny = true
            }
            if !answeredAny { return }
        }
    }

    mutating func answer(_ item: RelayItem, _ outcome: RelayOutcome) {
        inFlight.removeAll { $0 == item }
        completions.append(pacer.complete(item, outcome: outcome, now: now))
    }

    /// Answers the oldest request in flight.
    mutating func answerOldest(_ outcome: RelayOutcome) {
        guard let item = inFlight.first else {
            Issue.record("nothing in flight")
            return
        }
        answer(item, outcome)
        pump()
    }

    /// Lets time pass in small steps, sending whatever falls due.
    mutating func advance(by seconds: Double, step: Double = 0.05) {
        let end = now + seconds
        while now < end {
            now = min(end, now + step)
            pump()
        }
    }

    /// Jumps to the pacer's next deadline (if any) and pumps.
    mutating func jumpToDeadline() {
        guard let deadline = pacer.nextDeadline else { return }
        now = max(now, deadline)
        pump()
    }

    func sentBodies(device: String = "phone", tag: String? = "washer") -> [JSONValue] {
        sent.filter { $0.item.device == device && $0.item.tag == tag }.map(\.item.body)
    }

    func sentKinds(device: String = "phone") -> [RelayItem.Kind] {
        sent.filter { $0.item.device == device }.map(\.item.kind)
    }
}

@Suite struct RelayPacerTests {
    static func limits(interval: Double = 15, starts: Int = 10, reserve: Int = 50, maxItems: Int = 10_000) -> RelayLimits {
        RelayLimits(minUpdateInterval: interval, startsPerHour: starts, quotaReserve: reserve, maxItems: maxItems)
    }

    // MARK: Updates: one per interval per slot, latest state wins

    /// a burst of 100 updates in 3 s on one tag with a 1 s interval → at most 4 relay requests,
    /// and the last one carries the final state.
    @Test func aBurstOf100UpdatesIn3SecondsSendsAtMost4AndEndsWithTheFinalState() {
        var h = PacerHarness(Self.limits(interval: 1))
        h.submit(.start)
        for _ in 0..<99 {
            h.advance(by: 0.03, step: 0.01)
            h.submit(.update)
        }
        h.advance(by: 5)
        #expect(h.sent.count <= 4)
        #expect(h.sent.first?.item.kind == .start)
        #expect(h.sent.last?.item.body["data"]?["progress"] == 100)
        #expect(h.sent.last?.item.seq == 100)
        #expect(h.pacer.stats.superseded >= 96)
        #expect(h.pacer.queuedCount == 0)
        #expect(h.pacer.pendingItems.isEmpty)
    }

    @Test func updatesOfAnActivityStartedOnTheLANGoAtOnceThenOncePerInterval() {
        var h = PacerHarness()
        h.submit(.update)
        #expect(h.sent.count == 1)
        h.advance(by: 1)
        h.submit(.update)
        h.advance(by: 1)
        h.submit(.update)
        #expect(h.sent.count == 1)
        #expect(h.pacer.nextDeadline == 1_700_000_015)
        h.advance(by: 12.9)
        #expect(h.sent.count == 1)
        h.jumpToDeadline()
        #expect(h.sent.count == 2)
        #expect(h.sent[1].at == 1_700_000_015)
        #expect(h.sent[1].item.seq == 3)
    }

    @Test func aStartTakesTheFirstSlotAndTheNextUpdateGoesOneIntervalLater() {
        var h = PacerHarness()
        h.submit(.start)
        h.advance(by: 0.5)
        h.submit(.update)
        #expect(h.sentKinds() == [.start])
        h.jumpToDeadline()
        #expect(h.sentKinds() == [.start, .update])
        #expect(h.sent[1].at == h.sent[0].at + 15)
    }

    @Test func slotsAreIndependentAndDevicesToo() {
        var h = PacerHarness()
        h.submit(.update, tag: "a")
        h.submit(.update, tag: "b")
        h.submit(.update, tag: "a", device: "tablet")
        h.submit(.update, tag: "a")
        #expect(h.sent.count == 3)
        h.jumpToDeadline()
        #expect(h.sent.count == 4)
    }

    @Test func aMergedUpdateIsLoudIfAnyOfItsChangesWas() {
        var h = PacerHarness()
        h.submit(.update)
        h.submit(.update, silent: false)
        h.submit(.update, silent: true)
        h.jumpToDeadline()
        #expect(h.sent.count == 2)
        #expect(h.sent[1].item.body["data"]?["silent"] == nil)
        #expect(h.sent[1].item.body["message"] == "state 3")
        h.now += 30
        h.submit(.update, silent: true)
        #expect(h.sent.last?.item.body["data"]?["silent"] == true)
    }

    @Test func atMostOneRequestIsInFlightPerSlot() {
        var h = PacerHarness()
        h.autoAnswer = nil
        h.submit(.update)
        h.submit(.update)
        h.advance(by: 60)
        #expect(h.sent.count == 1)
        h.answerOldest(.success(remaining: nil, resetsAt: nil))
        #expect(h.sent.count == 2)
        #expect(h.sent[1].item.seq == 2)
    }

    /// The pacing contract for any burst: per slot, updates leave at least one interval after the previous
    /// start or update, at most one request is in flight, and the last request carries the last state.
    @Test func anyBurstIsPacedAndEndsWithItsFinalState() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...999).array(of: 1...120), Gen.int(in: 1...20)) { ops, interval in
            Self.checkBurst(ops, interval: Double(interval))
        }
    }

    static func checkBurst(_ ops: [Int], interval: Double) {
        var h = PacerHarness(limits(interval: interval, starts: 1000))
        let tags = ["a", "b", "c"]
        var last: [String: UInt64] = [:]
        var ended: Set<String> = []
        for op in ops {
            let tag = tags[op % tags.count]
            switch op / 10 % 10 {
            case 0: h.submit(.start, tag: tag); ended.remove(tag)
            case 1...6: h.submit(.update, tag: tag, silent: op % 2 == 0); ended.remove(tag)
            case 7: h.submit(.end, tag: tag); ended.insert(tag)
            default:
                h.advance(by: Double(op % 50) / 10, step: 0.1)
                continue
            }
            last[tag] = h.seqs["phone"]
        }
        h.advance(by: 3 * interval + 1, step: 0.25)
        #expect(h.pacer.queuedCount == 0)
        #expect(h.pacer.pendingItems.isEmpty)
        for tag in tags {
            let mine = h.sent.filter { $0.item.tag == tag }
            var previous: Double?
            for (at, item) in mine {
                if item.kind == .update, let previous { #expect(at >= previous + interval - 1e-9) }
                if item.kind == .start || item.kind == .update { previous = at }
                if item.kind == .end { previous = nil }
            }
            if let seq = last[tag], !ended.contains(tag) {
                #expect(mine.last?.item.seq == seq)
            }
            let seqs = mine.map(\.item.seq)
            #expect(seqs == seqs.sorted())
        }
    }

    /// The pacer's bookkeeping under any interleaving of submits, answers (success with quota, failure, 429),
    /// hand-overs and time: counts stay consistent, the bound holds, one request per slot is in flight, and
    /// once the relay is healthy everything drains with each slot's final state delivered.
    @Test func anyInterleavingOfAnswersAndHandOversDrainsToTheFinalStates() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...999).array(of: 1...150)) { ops in
            Self.checkChaos(ops)
        }
    }

    static func checkChaos(_ ops: [Int]) {
        // 2 devices × 3 tags × at most 2 waiting per slot = 12: only notifications are ever dropped.
        var h = PacerHarness(limits(interval: 5, starts: 4, maxItems: 12))
        h.autoAnswer = nil
        let tags = ["a", "b", "c"]
        let devices = ["phone", "tablet"]
        var last: [String: UInt64] = [:]  // "device/tag" → seq of its newest start/update
        for op in ops {
            let tag = tags[op % 3]
            let device = devices[op / 3 % 2]
            let key = device + "/" + tag
            switch op / 10 % 10 {
            case 0...2:
                h.submit(.update, tag: tag, device: device)
                last[key] = h.seqs[device]
            case 3:
                h.submit(.start, tag: tag, device: device)
                last[key] = h.seqs[device]
            case 4:
                h.submit(.end, tag: tag, device: device)
                last[key] = nil
            case 5:
                h.submit(.notification, tag: nil, device: device)
            case 6:
                h.advance(by: Double(op % 30), step: 1)
            case 7:
                guard !h.inFlight.isEmpty else { break }
                switch op % 4 {
                case 0: h.answerOldest(.failed)
                case 1: h.answerOldest(.rateLimited(resetsAt: h.now + Double(op % 100)))
                case 2: h.answerOldest(.success(remaining: op % 70, resetsAt: h.now + Double(op % 100) + 1))
                default: h.answerOldest(.success(remaining: nil, resetsAt: nil))
                }
            case 8:
                h.pacer.cancel(device: device, now: h.now)
                for k in last.keys where k.hasPrefix(device + "/") { last[k] = nil }
            default:
                while !h.inFlight.isEmpty { h.answerOldest(.success(remaining: nil, resetsAt: nil)) }
            }
            let perDevice = h.pacer.devices.values.reduce(0) { $0 + $1.queuedCount }
            #expect(h.pacer.queuedCount == perDevice)
            #expect(h.pacer.queuedCount <= 12)
            #expect(h.pacer.devices.values.allSatisfy { $0.slots.values.allSatisfy { $0.pending.count <= 2 } })
            let live = h.pacer.devices.values.reduce(0) { total, d in
                total + (d.notificationInFlight != nil && !d.notificationInFlightCancelled ? 1 : 0)
                    + d.slots.values.reduce(0) { $0 + ($1.inFlight != nil && !$1.inFlightCancelled ? 1 : 0) }
            }
            #expect(h.pacer.pendingItems.count == h.pacer.queuedCount + live)
        }
        // The relay recovers: everything waiting goes, and each slot's newest state is the last one sent.
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        while !h.inFlight.isEmpty { h.answerOldest(.success(remaining: nil, resetsAt: nil)) }
        h.advance(by: 4000, step: 5)
        #expect(h.pacer.queuedCount == 0)
        #expect(h.pacer.pendingItems.isEmpty)
        for (key, seq) in last {
            let parts = key.split(separator: "/").map(String.init)
            let mine = h.sent.filter { $0.item.device == parts[0] && $0.item.tag == parts[1] }
            #expect(mine.last?.item.seq == seq, "\(key)")
        }
    }

    // MARK: Starts: at once, within a budget

    @Test func startsBeyondTheHourlyBudgetWaitAndAreNeverDropped() {
        var h = PacerHarness(Self.limits(starts: 3))
        for i in 0..<5 { h.submit(.start, tag: "t\(i)") }
        #expect(h.sentKinds() == [.start, .start, .start])
        #expect(h.pacer.status(of: "phone", now: h.now)?.startsInWindow == 3)
        #expect(h.pacer.status(of: "phone", now: h.now)?.queued == 2)
        #expect(h.pacer.nextDeadline == h.now + 3600)
        // Ends and notifications are not held by the start budget.
        h.submit(.end, tag: "t0")
        h.submit(.notification, tag: nil)
        #expect(h.sentKinds() == [.start, .start, .start, .end, .notification])
        h.advance(by: 3599, step: 10)
        #expect(h.sent.filter { $0.item.kind == .start }.count == 3)
        h.jumpToDeadline()
        #expect(h.sent.filter { $0.item.kind == .start }.map(\.item.tag) == ["t0", "t1", "t2", "t3", "t4"])
    }

    @Test func anUpdateOfAHeldStartMergesIntoIt() {
        var h = PacerHarness(Self.limits(starts: 1))
        h.submit(.start, tag: "a")
        h.submit(.start, tag: "b")
        h.submit(.update, tag: "b")
        h.submit(.update, tag: "b")
        #expect(h.sent.count == 1)
        #expect(h.pacer.queuedCount == 1)
        h.jumpToDeadline()
        #expect(h.sent.count == 2)
        #expect(h.sent[1].item.kind == .start)
        #expect(h.sent[1].item.body["message"] == "state 4")
    }

    @Test func aFailedStartGivesItsBudgetBack() {
        var h = PacerHarness(Self.limits(starts: 2))
        h.autoAnswer = { _ in .failed }
        h.submit(.start, tag: "a")
        for _ in 0..<10 { h.jumpToDeadline() }
        #expect(h.sent.count == 11)
        #expect(h.pacer.status(of: "phone", now: h.now)?.startsInWindow == 0)
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        h.jumpToDeadline()
        h.submit(.start, tag: "b")
        #expect(h.sent.suffix(2).map(\.item.tag) == ["a", "b"])
    }

    // MARK: Ends

    @Test func anEndGoesAtOnceSupersedesAWaitingUpdateAndCarriesItsState() {
        var h = PacerHarness()
        h.submit(.start)
        h.submit(.update)
        h.submit(.end)
        #expect(h.sentKinds() == [.start, .end])
        let end = h.sent[1].item
        #expect(end.seq == 3)
        #expect(end.body["message"] == "clear_notification")
        #expect(end.body["data"]?["progress"] == 2)
        #expect(end.body["data"]?["content_state"]?["message"] == "state 2")
        #expect(h.pacer.stats.superseded == 1)
    }

    @Test func anEndCanBeToldNotToCarryTheState() {
        var limits = Self.limits()
        limits.endCarriesFinalState = false
        var h = PacerHarness(limits)
        h.submit(.start)
        h.submit(.update)
        h.submit(.end)
        #expect(h.sent[1].item.body == PacerHarness.body(.end, tag: "washer", seq: 3))
    }

    @Test func anEndWaitsForTheRequestInFlightOfItsSlot() {
        var h = PacerHarness()
        h.autoAnswer = nil
        h.submit(.start)
        h.submit(.end)
        #expect(h.sentKinds() == [.start])
        h.answerOldest(.success(remaining: nil, resetsAt: nil))
        #expect(h.sentKinds() == [.start, .end])
    }

    @Test func anEndOfAStartNeverSentCancelsBoth() {
        var h = PacerHarness(Self.limits(starts: 1))
        h.submit(.start, tag: "a")
        h.submit(.start, tag: "b")
        h.submit(.update, tag: "b")
        h.submit(.end, tag: "b")
        #expect(h.pacer.queuedCount == 0)
        h.advance(by: 4000, step: 100)
        #expect(h.sent.map(\.item.tag) == ["a"])
    }

    @Test func aStartAfterAnEndWaitsBehindIt() {
        var h = PacerHarness()
        h.autoAnswer = nil
        h.submit(.start)
        h.submit(.end)
        h.submit(.start)
        h.submit(.update)
        h.answerOldest(.success(remaining: nil, resetsAt: nil))
        h.answerOldest(.success(remaining: nil, resetsAt: nil))
        #expect(h.sentKinds() == [.start, .end, .start])
        #expect(h.sent[2].item.body["message"] == "state 4")
    }

    // MARK: Notifications

    @Test func notificationsGoAtOnceInOrderOneAtATime() {
        var h = PacerHarness()
        h.autoAnswer = nil
        for _ in 0..<3 { h.submit(.notification, tag: nil) }
        h.submit(.notification, tag: "door")
        #expect(h.sent.count == 1)
        for _ in 0..<3 { h.answerOldest(.success(remaining: nil, resetsAt: nil)) }
        #expect(h.sent.map(\.item.seq) == [1, 2, 3, 4])
        #expect(h.sent.allSatisfy { $0.at == h.now })
    }

    @Test func aSlotKindWithoutATagQueuesAsANotification() {
        var h = PacerHarness()
        h.submit(.update, tag: nil)
        #expect(h.sent.first?.item.kind == .notification)
    }

    // MARK: Quota

    @Test func aRateLimitHoldsTheDeviceUntilResetsAt() {
        var h = PacerHarness()
        let resets = h.now + 600
        h.autoAnswer = { _ in .rateLimited(resetsAt: resets) }
        h.submit(.update, tag: "a")
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        h.submit(.end, tag: "b")
        h.submit(.notification, tag: nil)
        h.submit(.update, tag: "a")
        h.submit(.update, tag: "a", device: "tablet")
        #expect(h.sent.count == 2)  // the 429'd one, and the other device
        #expect(h.pacer.status(of: "phone", now: h.now)?.holdUntil == resets)
        #expect(h.pacer.status(of: "phone", now: h.now)?.remaining == 0)
        #expect(h.pacer.nextDeadline == resets)
        h.advance(by: 599, step: 1)
        #expect(h.sent.count == 2)
        h.advance(by: 2, step: 1)
        #expect(h.sent.filter { $0.item.device == "phone" }.map(\.at).allSatisfy { $0 == h.sent[0].at || $0 >= resets })
        #expect(h.sentKinds() == [.update, .update, .end, .notification])
        #expect(h.sent.last(where: { $0.item.tag == "a" && $0.item.device == "phone" })?.item.seq == 4)
    }

    @Test func aRateLimitWithoutResetsAtBacksOff() {
        var h = PacerHarness()
        h.autoAnswer = { _ in .rateLimited(resetsAt: nil) }
        h.submit(.update)
        #expect(h.pacer.status(of: "phone", now: h.now)?.backoffUntil == h.now + 1)
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        h.advance(by: 1.1)
        #expect(h.sent.count == 2)
    }

    @Test func nearTheEndOfTheQuotaStartsAndEndsGoAndUpdatesThin() {
        var h = PacerHarness()
        let resets = h.now + 3000
        var remaining = 41
        h.autoAnswer = { _ in
            remaining -= 1
            return .success(remaining: remaining, resetsAt: resets)
        }
        h.submit(.update, tag: "a")
        #expect(h.pacer.status(of: "phone", now: h.now)?.remaining == 40)
        // Reserve mode: (3000 s left) / (40 - 10 floor) = 100 s between the device's updates.
        for _ in 0..<40 {
            h.advance(by: 5, step: 1)
            h.submit(.update, tag: "a")
            h.submit(.update, tag: "b")
        }
        // 200 s of two busy slots: 27 updates at the normal pace, here one per ~97 s for the whole device.
        let updates = h.sent.filter { $0.item.kind == .update }
        #expect(updates.count == 3)
        for (a, b) in zip(updates, updates.dropFirst()) { #expect(b.at - a.at >= (3000 - 200) / 30) }
        h.submit(.start, tag: "c")
        h.submit(.end, tag: "c")
        #expect(h.sent.suffix(2).map(\.item.kind) == [.start, .end])
    }

    @Test func atTheQuotaFloorUpdatesStopButEndsStillGo() {
        var h = PacerHarness()
        let resets = h.now + 3000
        h.autoAnswer = { _ in .success(remaining: 10, resetsAt: resets) }
        h.submit(.update, tag: "a")
        h.submit(.update, tag: "a")
        h.advance(by: 600, step: 5)
        #expect(h.sent.count == 1)
        #expect(h.pacer.nextDeadline == resets)
        h.submit(.end, tag: "b")
        #expect(h.sent.count == 2)
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        h.advance(by: 2401, step: 5)
        #expect(h.sent.count == 3)
        #expect(h.sent[2].at >= resets)
    }

    @Test func anExhaustedQuotaHoldsEverythingUntilItResets() {
        var h = PacerHarness()
        let resets = h.now + 100
        h.autoAnswer = { _ in .success(remaining: 0, resetsAt: resets) }
        h.submit(.notification, tag: nil)
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        h.submit(.start, tag: "s")
        h.submit(.end, tag: "e")
        #expect(h.sent.count == 1)
        h.advance(by: 99, step: 1)
        #expect(h.sent.count == 1)
        h.advance(by: 2, step: 1)
        #expect(h.sentKinds() == [.notification, .start, .end])
        #expect(h.pacer.status(of: "phone", now: h.now)?.remaining == nil)
    }

    @Test func remainingIsCountedDownAsRequestsLeave() {
        var h = PacerHarness()
        h.autoAnswer = { _ in .success(remaining: 2, resetsAt: nil) }
        h.submit(.notification, tag: nil)
        h.autoAnswer = nil
        h.submit(.end, tag: "a")
        h.submit(.end, tag: "b")
        h.submit(.end, tag: "c")
        #expect(h.sent.count == 3)  // remaining 2 → 2 requests, then held (the relay would say 429)
        #expect(h.pacer.status(of: "phone", now: h.now)?.remaining == 0)
    }

    // MARK: Forbidden

    @Test func aForbiddenTokenStopsTheDevice() {
        var h = PacerHarness(Self.limits(starts: 1))
        h.autoAnswer = nil
        h.submit(.start, tag: "a")
        h.submit(.start, tag: "b")
        h.submit(.notification, tag: nil)
        h.submit(.update, tag: "x", device: "tablet")
        #expect(h.sent.count == 3)
        let phoneNote = h.inFlight.first { $0.device == "phone" && $0.kind == .notification }!
        h.answer(h.inFlight.first { $0.device == "phone" && $0.kind == .start }!, .forbidden)
        let completion = h.completions.last!
        #expect(completion.tokenInvalidated)
        #expect(completion.dropped.map(\.tag) == ["a", "b"])
        #expect(h.pacer.invalidTokenDevices == ["phone"])
        #expect(h.pacer.status(of: "phone", now: h.now)?.tokenInvalid == true)
        #expect(h.pacer.status(of: "phone", now: h.now)?.queued == 0)
        #expect(h.pacer.status(of: "phone", now: h.now)?.json["token_invalid"] == true)
        #expect(h.pacer.stats.droppedForbidden == 2)
        #expect(!h.submit(.update, tag: "a").accepted)
        #expect(h.pacer.stats.droppedForbidden == 3)
        // The other request in flight may complete; a failure of it is not retried.
        h.answer(phoneNote, .failed)
        h.advance(by: 4000, step: 100)
        #expect(h.sent.filter { $0.item.device == "phone" }.count == 2)
        #expect(h.pacer.pendingItems.map(\.device) == ["tablet"])
        // A new registration makes the device usable again.
        h.pacer.revalidate(device: "phone", now: h.now)
        h.submit(.update, tag: "a")
        #expect(h.sent.last?.item.device == "phone")
        #expect(h.pacer.invalidTokenDevices.isEmpty)
    }

    @Test func anotherClientErrorDropsOnlyThatRequest() {
        var h = PacerHarness()
        h.autoAnswer = { _ in .rejected(status: 400) }
        h.submit(.notification, tag: nil)
        #expect(h.completions.last?.dropped.count == 1)
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        h.submit(.notification, tag: nil)
        #expect(h.sent.count == 2)
        #expect(h.pacer.stats.droppedRejected == 1)
    }

    // MARK: Failures: retry with backoff

    @Test func failuresBackOffExponentiallyWithJitterUpToTheCap() {
        var jitterInputs: [Double] = []
        let recorder = JitterRecorder()
        var h = PacerHarness(Self.limits(), jitter: { recorder.record($0); return $0 / 2 })
        h.autoAnswer = { _ in .failed }
        h.submit(.update)
        for _ in 0..<12 { h.jumpToDeadline() }
        jitterInputs = recorder.values
        #expect(jitterInputs == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300, 300])
        let gaps = zip(h.sent.dropFirst(), h.sent).map { $0.at - $1.at }
        #expect(gaps == [0.5, 1, 2, 4, 8, 16, 32, 64, 128, 150, 150, 150])
        #expect(h.pacer.status(of: "phone", now: h.now)?.consecutiveFailures == 13)
        #expect(h.pacer.pendingItems.count == 1)
        // Success resets the ladder.
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        h.jumpToDeadline()
        #expect(h.pacer.status(of: "phone", now: h.now)?.consecutiveFailures == 0)
        #expect(h.pacer.pendingItems.isEmpty)
    }

    @Test func fullJitterStaysWithinTheCappedDelay() {
        var h = PacerHarness(Self.limits())
        h.pacer = RelayPacer(limits: Self.limits())  // the default, random jitter
        h.autoAnswer = { _ in .failed }
        h.submit(.notification, tag: nil)
        for _ in 1...12 {
            let status = h.pacer.status(of: "phone", now: h.now)
            let failures = status?.consecutiveFailures ?? 0
            #expect(failures >= 1)
            let backoff = status?.backoffUntil ?? h.now
            #expect(backoff - h.now <= min(300, Double(1 << min(failures - 1, 20))) + 1e-6)
            h.jumpToDeadline()
        }
    }

    @Test func aRetryCarriesTheNewestStateThatArrivedMeanwhile() {
        var h = PacerHarness()
        h.autoAnswer = nil
        h.submit(.start)
        h.submit(.update)
        h.submit(.update)
        h.answerOldest(.failed)
        #expect(h.pacer.queuedCount == 1)
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        h.jumpToDeadline()
        #expect(h.sentKinds() == [.start, .start])
        #expect(h.sent[1].item.body["message"] == "state 3")
        #expect(h.sent[1].item.seq == 3)
        // A failed update's interval is given back: the retry goes when the backoff ends.
        h.autoAnswer = nil
        h.now += 20
        h.submit(.update)
        h.answerOldest(.failed)
        h.autoAnswer = { _ in .success(remaining: nil, resetsAt: nil) }
        let before = h.now
        h.jumpToDeadline()
        #expect(h.sent.last?.at == before + 1)
    }

    @Test func aRelayThatIsDownDeliversEverythingOnceItIsBack() {
        var h = PacerHarness(Self.limits(interval: 1))
        var down = true
        h.autoAnswer = { _ in down ? .failed : .success(remaining: nil, resetsAt: nil) }
        h.submit(.start)
        for _ in 0..<30 {
            h.advance(by: 1, step: 0.1)
            h.submit(.update)
            h.submit(.notification, tag: nil)
        }
        down = false
        h.advance(by: 400, step: 1)
        #expect(h.pacer.pendingItems.isEmpty)
        #expect(h.pacer.stats.succeeded > 0 && h.pacer.stats.failed > 0)
        #expect(h.sent.last(where: { $0.item.tag == "washer" })?.item.body["message"] == "state 60")
        let notes = h.sent.filter { $0.item.kind == .notification }.map(\.item.seq)
        #expect(Array(Set(notes)).sorted() == stride(from: 3, through: 61, by: 2).map { UInt64($0) })
    }

    // MARK: Hand-over

    @Test func aDeviceBackOnTheLANTakesItsSlotsBack() {
        var h = PacerHarness()
        h.autoAnswer = nil
        h.submit(.update, tag: "a")
        h.submit(.update, tag: "a")
        h.submit(.notification, tag: nil)
        h.submit(.update, tag: "b", device: "tablet")
        let dropped = h.pacer.cancel(device: "phone", now: h.now)
        #expect(dropped.map(\.seq) == [2])  // the notification and update "a" #1 are in flight
        #expect(h.pacer.stats.cancelled == 1)
        #expect(h.pacer.pendingItems.map(\.device) == ["tablet"])
        // In-flight requests complete; a failure is not retried.
        h.answer(h.inFlight.first { $0.device == "phone" && $0.kind == .update }!, .failed)
        h.answer(h.inFlight.first { $0.device == "phone" }!, .success(remaining: 7, resetsAt: h.now + 100))
        h.advance(by: 60)
        #expect(h.sent.filter { $0.item.device == "phone" }.count == 2)
        #expect(h.pacer.status(of: "phone", now: h.now)?.remaining == 7)
    }

    @Test func aSlotWithARequestStillInFlightAfterHandOverKeepsOneInFlight() {
        var h = PacerHarness()
        h.autoAnswer = nil
        h.submit(.update, tag: "a")
        h.pacer.cancel(device: "phone", now: h.now)
        h.now += 30
        h.submit(.update, tag: "a")  // gone again
        #expect(h.sent.count == 1)
        h.answerOldest(.failed)
        #expect(h.sent.count == 1)  // the new update waits out the backoff; the old one is not retried
        h.jumpToDeadline()
        #expect(h.sent.map(\.item.seq) == [1, 2])
    }

    // MARK: Bound, outbox

    @Test func theQueueIsBoundedDroppingTheOldestNotificationsFirst() {
        var h = PacerHarness(Self.limits(starts: 0, maxItems: 4))
        h.autoAnswer = nil
        h.submit(.notification, tag: nil)  // in flight: not counted
        for _ in 0..<3 { h.submit(.notification, tag: nil) }  // seq 2, 3, 4
        h.submit(.start, tag: "a")  // seq 5, held (no start budget)
        var result = h.submit(.start, tag: "b")  // seq 6: over the bound
        #expect(result.dropped.map(\.seq) == [2])
        result = h.submit(.start, tag: "c")
        #expect(result.dropped.map(\.seq) == [3])
        result = h.submit(.start, tag: "d")
        #expect(result.dropped.map(\.seq) == [4])
        result = h.submit(.start, tag: "e")
        #expect(result.dropped.map(\.seq) == [5])  // no notification left: the oldest start
        #expect(h.pacer.queuedCount == 4)
        #expect(h.pacer.stats.droppedOverflow == 4)
    }

    @Test func theOutboxRoundTripsThroughRestore() {
        var h = PacerHarness(Self.limits(starts: 1))
        h.autoAnswer = nil
        h.submit(.start, tag: "a")  // in flight
        h.submit(.update, tag: "a")
        h.submit(.start, tag: "b")  // held by the budget
        h.submit(.notification, tag: nil)  // in flight
        h.submit(.notification, tag: "n")
        let generation = h.pacer.generation
        let outbox = h.pacer.pendingItems
        #expect(outbox.map(\.seq) == [1, 2, 3, 4, 5])
        var restored = RelayPacer(limits: Self.limits(starts: 10), jitter: { $0 })
        restored.restore(outbox, now: h.now)
        // The waiting update merges into its start again; everything else comes back as it was.
        #expect(restored.pendingItems.map(\.seq) == [2, 3, 4, 5])
        #expect(restored.pendingItems.first?.kind == .start)
        let due = restored.due(now: h.now)
        #expect(due.map(\.seq) == [2, 3, 4])
        h.submit(.update, tag: "a")
        #expect(h.pacer.generation > generation)
    }

    /// A device is kept while anything of it waits, runs or counts: its update interval, and the requests it sent
    /// this UTC day (the daily quota); then it is forgotten.
    @Test func nothingWaitingMeansNoDeadlineAndTheDeviceIsForgottenAfterItsDay() {
        var h = PacerHarness()
        #expect(h.pacer.nextDeadline == nil)
        h.submit(.notification, tag: nil)
        #expect(h.pacer.nextDeadline == nil)
        #expect(h.pacer.knownDevices == ["phone"])  // one request today
        h.submit(.update)
        #expect(h.pacer.knownDevices == ["phone"])
        h.advance(by: 61, step: 1)
        #expect(h.pacer.status(of: "phone", now: h.now)?.sentToday == 2)
        let midnight = ((h.now / 86_400).rounded(.down) + 1) * 86_400
        h.advance(by: midnight - h.now + 61, step: 60)
        #expect(h.pacer.knownDevices.isEmpty)
    }
}

/// Records what the pacer asked its jitter source (the pacer's closure is `@Sendable`).
final class JitterRecorder: @unchecked Sendable {
    private(set) var values: [Double] = []
    func record(_ value: Double) { values.append(value) }
}
