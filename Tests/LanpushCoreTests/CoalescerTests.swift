import PropertyBased
import Testing

@testable import LanpushCore

@Suite struct CoalescerTests {
    let t0 = 1_700_000_000.0

    func live(_ tag: String, _ state: ContentState, silent: Bool = false, alert: ActivityAlert? = nil) -> PushCommand {
        .liveUpdate(LiveUpdate(tag: tag, title: tag.uppercased(), state: state, silent: silent, alert: alert))
    }

    /// Drives one session: apply commands to the ledger, fan changes to the coalescer, read frames.
    struct Harness {
        var ledger = DeviceLedger(deviceId: "phone", epoch: "e1", historyCapacity: 64)
        var coalescer: Coalescer
        var client = ClientModel()
        var now = 1_700_000_000.0

        init(window: Int = 32) {
            (coalescer, _) = Coalescer.subscribe(ledger: ledger, resume: nil, window: window)
            client.epoch = ledger.epoch  // auth_ok tells the client its device's epoch
        }

        mutating func apply(_ command: PushCommand) {
            for change in ledger.apply(command, now: now) { coalescer.note(change) }
        }

        @discardableResult
        mutating func read(max: Int = .max, ack: Bool = true) -> [OutboundEvent] {
            var frames = [OutboundEvent]()
            while frames.count < max, let frame = coalescer.next(ledger: &ledger, now: now) {
                frames.append(frame)
                client.receive(frame)
            }
            if ack { coalescer.acknowledge(client.lastSeq) }
            return frames
        }
    }

    @Test func aDrainedSessionLetsGoOfABurstsTables() {
        var h = Harness(window: 1000)
        h.read()
        for i in 0..<100 { h.apply(live("t\(i)", ["n": .number(Double(i))])) }
        for i in 0..<100 { h.apply(live("t\(i)", ["n": .number(Double(i + 1))])) }
        #expect(h.coalescer.tableCapacity.pending >= 100)
        #expect(h.coalescer.tableCapacity.order >= 200)
        #expect(h.read().count == 100)
        #expect(h.coalescer.tableCapacity.pending <= Coalescer.retainedCapacity)
        #expect(h.coalescer.tableCapacity.order <= Coalescer.retainedCapacity)
        // A reader that keeps up still reuses its small tables and gets every change.
        for i in 0..<50 {
            h.apply(live("t\(i % 3)", ["n": .number(Double(1000 + i))]))
            #expect(h.read().count == 1)
        }
        #expect(h.coalescer.tableCapacity.pending <= Coalescer.retainedCapacity)
        #expect(h.client.violations.isEmpty)
    }

    /// A burst over a score of tags goes too, not only one over a hundred: kept, a table of that size holds ~3.6 KiB
    /// of slots in every session the burst reached.
    @Test func aDrainedSessionLetsGoOfAScoreOfTags() {
        var h = Harness(window: 1000)
        h.read()
        for i in 0..<20 { h.apply(live("t\(i)", ["n": .number(Double(i))])) }
        #expect(h.coalescer.tableCapacity.pending >= 20)
        #expect(h.read().count == 20)
        #expect(h.coalescer.tableCapacity.pending < 20 && h.coalescer.tableCapacity.order < 20)
        #expect(h.client.violations.isEmpty)
    }

    /// A session in step with its device keeps nothing per tag: what its client holds of a clean slot is the
    /// ledger's view. (It kept a view of every tag: ~225 bytes a tag and session.)
    @Test func aSessionInStepKeepsNothingPerTag() {
        var h = Harness(window: 1000)
        h.read()
        for i in 0..<100 { h.apply(live("t\(i)", ["n": .number(Double(i))])) }
        #expect(h.read().count == 100)
        h.apply(live("t5", ["n": 500]))
        #expect(h.read().count == 1)
        #expect(Self.largestCollection(in: h.coalescer) < 100)
        #expect(h.client.violations.isEmpty)
    }

    /// The most entries any table or array inside `value` holds, found by reflection.
    static func largestCollection(in value: Any, depth: Int = 0) -> Int {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .dictionary, .collection, .set: return mirror.children.count
        default:
            guard depth < 4 else { return 0 }
            return mirror.children.map { largestCollection(in: $0.value, depth: depth + 1) }.max() ?? 0
        }
    }

    @Test func aFastReaderSeesEveryChangeAsItHappens() {
        var h = Harness()
        h.read()
        h.apply(live("washer", ["message": "Cycle started"]))
        guard case .start(1, "washer", let attributes, _, _) = h.read().first else {
            Issue.record("expected a start")
            return
        }
        #expect(attributes.title == "WASHER")
        h.apply(live("washer", ["message": "Rinsing", "progress": 900, "progress_max": 3600]))
        #expect(h.read().map(\.json) == [["type": "update", "seq": 2, "tag": "washer", "phase": "active", "patch": ["message": "Rinsing", "progress": 900, "progress_max": 3600]]])
        h.apply(live("washer", ["message": "Spinning", "progress": 1800], silent: true))
        #expect(h.read().map(\.json) == [["type": "update", "seq": 3, "tag": "washer", "phase": "active", "silent": true, "patch": ["message": "Spinning", "progress": 1800, "progress_max": .null]]])
        h.apply(.end(EndRequest(tag: "washer", dismissal: .after(60))))
        #expect(h.read().map(\.json) == [
            ["type": "end", "seq": 4, "tag": "washer", "patch": [:], "dismissal_date": .number(h.now + 60)],
            ["type": "clear", "seq": 5, "tag": "washer"],
        ])
        #expect(h.client.violations.isEmpty)
    }

    @Test func aSlowReaderGetsOneMergedDeltaPerTagCarryingTheNewestSeq() {
        var h = Harness()
        h.read()
        h.apply(live("a", ["message": "1"]))
        h.apply(live("b", ["message": "1"]))
        for i in 2...50 {
            h.apply(live("a", ["message": .string("\(i)")], silent: true))
            h.apply(live("b", ["message": .string("\(i)")], silent: i % 2 == 0))
        }
        let frames = h.read()
        #expect(frames.count == 2)
        #expect(frames.map(\.seq) == [99, 100])  // a's newest is 99, b's is 100
        #expect(h.client.activities["a"]?.state == ["message": "50"])
        #expect(h.client.activities["b"]?.state == ["message": "50"])
    }

    @Test func mergedUpdatesAreSilentOnlyIfEveryChangeWas() {
        var h = Harness()
        h.read()
        h.apply(live("a", ["message": "0"]))
        h.read()
        h.apply(live("a", ["message": "1"], silent: true))
        h.apply(live("a", ["message": "2"], silent: false))
        h.apply(live("a", ["message": "3"], silent: true))
        #expect(h.read().first?.json["silent"] == nil)
        h.apply(live("a", ["message": "4"], silent: true))
        h.apply(live("a", ["message": "5"], silent: true, alert: ActivityAlert(title: "t", body: "b")))
        let frame = h.read().first!.json
        #expect(frame["silent"] == true)
        #expect(frame["alert"] == ["title": "t", "body": "b"])
    }

    @Test func creditWindowBoundsFramesInFlight() {
        var h = Harness(window: 4)
        h.read()
        for tag in 0..<10 { h.apply(live("t\(tag)", ["message": "x"])) }
        #expect(h.read(ack: false).count == 4)
        #expect(h.coalescer.next(ledger: &h.ledger, now: h.now) == nil)
        h.coalescer.acknowledge(2)
        #expect(h.read(ack: false).count == 2)
        h.coalescer.acknowledge(100)
        #expect(h.read().count == 4)
        #expect(h.client.activities.count == 10)
    }

    @Test func endAbsorbsPendingUpdatesAndCarriesTheFinalState() {
        var h = Harness()
        h.read()
        h.apply(live("a", ["message": "start", "progress": 1]))
        h.read()
        h.apply(live("a", ["message": "mid", "progress": 50]))
        h.apply(live("a", ["message": "done", "progress": 100]))
        h.apply(.end(EndRequest(tag: "a", dismissal: .default)))
        let frames = h.read()
        #expect(frames.map { $0.json["type"] } == ["end", "clear"])
        #expect(h.client.activities["a"] == .init(state: ["message": "done", "progress": 100], phase: .ended, title: "A"))
    }

    @Test func startUnseenByTheClientArrivesAsAStartWithTheLatestState() {
        var h = Harness()
        h.read()
        h.apply(live("a", ["message": "1"]))
        h.apply(live("a", ["message": "2"]))
        let frames = h.read()
        #expect(frames.map { $0.json["type"] } == ["start"])
        #expect(h.client.activities["a"]?.state == ["message": "2"])
    }

    @Test func notificationsQueueInOrderBetweenSlots() {
        var h = Harness()
        h.read()
        h.apply(live("a", ["message": "1"]))
        h.apply(.notification(NotifyMessage(title: "Door", message: "open", data: ["x": 1])))
        h.apply(live("a", ["message": "2"]))
        h.apply(.notification(NotifyMessage(message: "second")))
        let frames = h.read()
        #expect(frames.map { $0.json["type"]!.stringValue! } == ["notification", "start", "notification"])
        #expect(frames.map(\.seq) == [2, 3, 4])
    }

    @Test func replayResumeSendsOnlyTheDifference() {
        var h = Harness()
        h.read()
        h.apply(live("a", ["message": "1", "progress": 1]))
        h.apply(live("b", ["message": "1"]))
        h.read()
        let resumeAt = h.client.lastSeq
        h.apply(live("a", ["message": "2", "progress": 1]))  // changes while the client is away
        h.apply(live("a", ["message": "3", "progress": 1]))
        var (c, start) = Coalescer.subscribe(ledger: h.ledger, resume: (epoch: "e1", seq: resumeAt), window: 32)
        #expect(start == .replay(from: resumeAt))
        let frame = c.next(ledger: &h.ledger, now: h.now)
        #expect(frame?.json == ["type": "update", "seq": 4, "tag": "a", "phase": "active", "patch": ["message": "3"]])
        #expect(c.next(ledger: &h.ledger, now: h.now) == nil)
        #expect(c.takeSynced(queued: h.ledger.notifications) == 4)
    }

    @Test func unknownEpochOrShortHistoryGetsASnapshot() {
        var h = Harness()
        h.apply(live("a", ["message": "1"]))
        let (_, other) = Coalescer.subscribe(ledger: h.ledger, resume: (epoch: "old", seq: 1), window: 8)
        #expect(other == .snapshot)
        for i in 0..<100 { h.apply(live("a", ["message": .string("\(i)")])) }  // history holds 64
        var (c, start) = Coalescer.subscribe(ledger: h.ledger, resume: (epoch: "e1", seq: 1), window: 8)
        #expect(start == .snapshot)
        guard case .snapshot(_, 101, let list) = c.next(ledger: &h.ledger, now: h.now) else {
            Issue.record("expected a snapshot")
            return
        }
        #expect(list.map(\.state) == [["message": "99"]])
    }

    @Test func mergedFrameOvertakingOlderChangesMakesItsSeqUnsafeForReplay() {
        var h = Harness(window: 1)
        h.read()
        h.apply(live("a", ["message": "1"]))  // 1
        h.apply(live("b", ["message": "1"]))  // 2
        h.apply(live("a", ["message": "2"]))  // 3: a's key moves behind b's
        h.read(max: 1, ack: false)  // sends b (seq 2) while a's change 1 is pending
        #expect(h.client.lastSeq == 2)
        let (_, start) = Coalescer.subscribe(ledger: h.ledger, resume: (epoch: "e1", seq: 2), window: 8)
        #expect(start == .snapshot)
    }

    /// `next` only reads the ledger: the point a frame made unsafe comes back with it, for the caller to mark.
    @Test func theUnsafeResumePointComesBackWithItsFrame() {
        var h = Harness(window: 1)
        h.read()
        h.apply(live("a", ["message": "1"]))
        h.apply(live("b", ["message": "1"]))
        h.apply(live("a", ["message": "2"]))
        let next = h.coalescer.next(ledger: h.ledger, now: h.now)
        #expect(next.event?.seq == 2)
        #expect(next.unsafeResumePoints == [2])
        #expect(h.ledger.history.unsafeCount == 0)
        for seq in next.unsafeResumePoints { h.ledger.markUnsafeResumePoint(seq) }
        #expect(Coalescer.subscribe(ledger: h.ledger, resume: (epoch: "e1", seq: 2), window: 8).1 == .snapshot)
    }

    /// The coalescer's contract, for any interleaving of updates, ends, notifications, time, reads, acks and
    /// reconnects: frames arrive in increasing seq, nothing of an activity follows its end, memory is
    /// O(tags), and after a final drain the client holds exactly the ledger's current state.
    @Test func anyInterleavingConvergesToTheLastAcceptedState() async {
        await propertyCheck(count: 1000, input: Gen.int(in: 0...999).array(of: 1...160), Gen.int(in: 1...6)) { ops, window in
            Self.checkInterleaving(ops, window: window)
        }
    }

    /// Cases the property check once found, kept as regressions.
    @Test(arguments: [
        ([3, 0, 101, 747, 282, 242, 90, 181, 90], 2),
        ([0, 281, 1, 0, 581, 642, 490, 281, 490], 1),
        ([140, 90, 181, 290], 1),
        ([109, 440, 937, 582, 290], 2),
        ([3, 30, 40, 640, 29, 140] + Array(repeating: 0, count: 9) + [1, 0, 0, 887, 0, 0, 583] + Array(repeating: 0, count: 21)
            + [611, 0, 910] + Array(repeating: 0, count: 18) + [660, 0, 0, 0, 0, 0, 90], 3),
    ])
    func foundInterleavings(ops: [Int], window: Int) {
        Self.checkInterleaving(ops, window: window)
    }

    static func checkInterleaving(_ ops: [Int], window: Int) {
            var h = Harness(window: window)
            let tags = ["a", "b", "c", "d"]
            var reconnects = 0
            for op in ops {
                let tag = tags[op % tags.count]
                switch op / 10 % 10 {
                case 0...3:
                    var state: ContentState = ["message": .string("m\(op % 7)")]
                    if op % 3 == 0 { state["progress"] = .number(Double(op % 11)) }
                    if op % 5 == 0 { state["template"] = ["template": "generic", "progress": .number(Double(op % 4) / 4)] }
                    let stale: Double? = op % 13 == 0 ? h.now + 5 : nil
                    h.apply(.liveUpdate(LiveUpdate(tag: tag, title: tag, state: state, silent: op % 2 == 0, staleDate: stale)))
                case 4:
                    h.apply(.end(EndRequest(tag: tag, dismissal: op % 3 == 0 ? .immediate : .after(30))))
                case 5:
                    h.apply(.notification(NotifyMessage(message: "n\(op)")))
                case 6:
                    h.now += Double(op % 40)
                    for change in h.ledger.advance(to: h.now) { h.coalescer.note(change) }
                    if op % 2 == 0 { h.ledger.pruneDismissed() }
                case 7:
                    if let change = h.ledger.dismissedByUser(tag: tag, now: h.now) { h.coalescer.note(change) }
                case 8:
                    h.read(max: op % 4, ack: op % 3 != 0)
                default:
                    // The connection drops (frames in flight are lost) and the client resumes from what it has.
                    reconnects += 1
                    let (c, _) = Coalescer.subscribe(
                        ledger: h.ledger, resume: h.client.epoch.map { ($0, h.client.lastSeq) }, window: window)
                    h.coalescer = c
                    h.client.epoch = h.ledger.epoch
                }
                let footprint = h.coalescer.footprint
                #expect(footprint.pending <= tags.count)
                #expect(footprint.order <= 2 * tags.count + 16)
                #expect(h.coalescer.unacknowledged <= window)
            }
            for _ in 0..<1000 where h.coalescer.dirtySlots > 0 || h.coalescer.pendingNotifications(in: h.ledger) > 0 || h.coalescer.unacknowledged > 0 {
                h.read()
            }
            h.read()
            #expect(h.client.violations == [])
            for activity in h.ledger.activities.values {
                let held = h.client.activities[activity.tag]
                switch activity.phase {
                case .active, .stale:
                    #expect(held == .init(state: activity.state, phase: activity.phase, title: activity.attributes.title))
                case .ended:
                    #expect(held == .init(state: activity.state, phase: .ended, title: activity.attributes.title))
                case .dismissed:
                    #expect(held == nil)
                }
            }
            for tag in tags where h.ledger.activities[tag] == nil {
                #expect(h.client.activities[tag] == nil)
            }
            _ = reconnects
    }
}
