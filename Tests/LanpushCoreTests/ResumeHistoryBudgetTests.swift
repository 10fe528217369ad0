import Testing

@testable import LanpushCore

@Suite struct ResumeHistoryBudgetTests {
    let t0 = 1_700_000_000.0

    func live(_ tag: String, _ message: String) -> PushCommand {
        .liveUpdate(LiveUpdate(tag: tag, title: tag.uppercased(), state: ["message": .string(message)]))
    }

    /// What the gateway's directory does with the budget: count every history, and past the limit cut the
    /// ones above the level.
    func enforce(_ budget: ResumeHistoryBudget, on ledgers: inout [DeviceLedger]) {
        let total = ledgers.reduce(0) { $0 + $1.history.bytes }
        guard total > budget.limit,
            let level = ResumeHistoryBudget.level(sizes: ledgers.map(\.history.bytes), target: budget.target)
        else { return }
        for i in ledgers.indices where ledgers[i].history.bytes > level { ledgers[i].trimHistory(toBytes: level) }
    }

    func entry(_ seq: UInt64, _ message: String = "x") -> ResumeHistory.Entry {
        let view = ClientView(generation: seq, state: ["message": .string(message)], phase: .active)
        return .init(seq: seq, tag: "a", before: view)
    }

    @Test func levelCutsOnlyTheBiggestAndFits() {
        #expect(ResumeHistoryBudget.level(sizes: [10, 20, 30], target: 60) == nil)
        let sizes = [10, 20, 100, 200]
        let level = ResumeHistoryBudget.level(sizes: sizes, target: 150)
        #expect(level == 60)
        #expect(sizes.reduce(0) { $0 + min($1, level!) } <= 150)
        #expect(ResumeHistoryBudget.level(sizes: [500], target: 0) == 0)
        #expect(ResumeHistoryBudget.level(sizes: [], target: 10) == nil)
    }

    @Test func entryWeighsItsFrameAndGrowsWithTheState() {
        let small = entry(1, "x")
        let big = entry(1, String(repeating: "y", count: 1000))
        let frame = OutboundEvent.update(
            seq: 0, tag: "a", patch: small.before!.state, view: small.before!, silent: false, alert: nil
        ).frameBytes
        #expect(small.bytes == ResumeHistory.Entry.overhead + frame)
        #expect(big.bytes - small.bytes == 999)
        #expect(ResumeHistory.Entry(seq: 1, tag: nil, before: nil).bytes == ResumeHistory.Entry.overhead)
    }

    @Test func dropsOldestFirstWithTheirUnsafeMarks() {
        var h = ResumeHistory(capacity: 64)
        for seq in 1...10 { h.append(entry(UInt64(seq))) }
        h.markUnsafe(2)
        h.markUnsafe(8)
        #expect(h.unsafeCount == 2)
        let per = entry(1).bytes
        #expect(h.bytes == 10 * per)
        h.dropOldest(whileBytesAbove: 4 * per + per / 2)
        #expect(h.count == 4 && h.oldestSeq == 7 && h.bytes == 4 * per)
        #expect(h.unsafeCount == 1)  // 2 went with its entry; 8 stays
        #expect(h.changes(after: 5, current: 10) == nil)  // before what stays: snapshot
        #expect(h.changes(after: 8, current: 10) == nil)  // still unsafe
        #expect(h.changes(after: 7, current: 10)?.map(\.seq) == [8, 9, 10])
        #expect(h.changes(after: 10, current: 10) == [])
        h.dropOldest(whileBytesAbove: 0)
        #expect(h.count == 0 && h.bytes == 0 && h.unsafeCount == 0 && h.oldestSeq == nil)
        #expect(h.changes(after: 10, current: 10) == [])  // a client at the newest seq still resumes
        #expect(h.changes(after: 9, current: 10) == nil)
    }

    /// The array behind the history is rebuilt as entries go: order, bytes and the count cap must survive it.
    @Test func staysASuffixThroughAppendsCapsAndTrims() {
        var h = ResumeHistory(capacity: 50)
        var model = [ResumeHistory.Entry]()
        for seq in 1...2000 {
            let e = entry(UInt64(seq), String(repeating: "m", count: seq % 37))
            h.append(e)
            model.append(e)
            if model.count > 50 { model.removeFirst() }
            if seq % 97 == 0 {
                let limit = model.suffix(seq % 13).reduce(0) { $0 + $1.bytes }
                h.dropOldest(whileBytesAbove: limit)
                while model.reduce(0, { $0 + $1.bytes }) > limit { model.removeFirst() }
            }
            #expect(h.bytes == model.reduce(0) { $0 + $1.bytes })
            #expect(h.oldestSeq == model.first?.seq)
        }
        #expect(h.changes(after: model.first!.seq, current: 2000) == Array(model.dropFirst()))
    }

    /// A device whose clients keep up appends a change and drops what they acknowledged, over and over: the array
    /// keeps its room through that (it was rebuilt at the size of what was left, then grew again by reallocation
    /// within the next few changes), gives back room far beyond what it holds, and all of it once quiet.
    @Test func keepsItsRoomWhileBusyAndGivesItBackOnceQuiet() {
        var h = ResumeHistory(capacity: 1024)
        var seq: UInt64 = 0
        for cycle in 1...20 {
            for _ in 1...40 {
                seq += 1
                h.append(entry(seq))
            }
            h.dropOlder(than: seq)
            #expect(h.count == 1 && h.oldestSeq == seq)
            #expect(h.storageCapacity >= 40, "cycle \(cycle): the room for a cycle's changes was let go")
        }
        #expect(h.storageCapacity <= ResumeHistory.keptRoom)

        // A burst far beyond the room kept: what it leaves beyond four times what is held goes at the drops.
        for _ in 1...1000 {
            seq += 1
            h.append(entry(seq))
        }
        #expect(h.storageCapacity >= 1000)
        h.dropOlder(than: seq - 9)
        #expect(h.count == 10 && h.storageCapacity <= ResumeHistory.keptRoom)

        // Quiet: the first look only notes that something was appended since the last; the next gives the room back.
        h.releaseRoomIfQuiet()
        #expect(h.storageCapacity > h.count + 4)
        h.releaseRoomIfQuiet()
        #expect(h.storageCapacity <= h.count + 4)
        #expect(h.changes(after: seq - 9, current: seq)?.map(\.seq) == Array(seq - 8...seq))
        h.dropOlder(than: seq + 1)
        #expect(h.count == 0)
        h.releaseRoomIfQuiet()
        #expect(h.storageCapacity == 0)
    }

    @Test func budgetTrimsTheBusyDeviceOldestFirstAndSparesTheQuietOne() {
        var ledgers = [
            DeviceLedger(deviceId: "busy", epoch: "e1", historyCapacity: 1024),
            DeviceLedger(deviceId: "quiet", epoch: "e1", historyCapacity: 1024),
        ]
        var now = t0
        for i in 1...3 { _ = ledgers[1].apply(live("q", "\(i)"), now: now) }
        let quietBytes = ledgers[1].history.bytes
        let budget = ResumeHistoryBudget(limit: quietBytes + 40 * entry(1).bytes)
        for i in 1...500 {
            now += 1
            _ = ledgers[0].apply(live("b\(i % 3)", "\(i)"), now: now)
            enforce(budget, on: &ledgers)
            #expect(ledgers.reduce(0) { $0 + $1.history.bytes } <= budget.limit)
        }
        #expect(ledgers[1].history.bytes == quietBytes && ledgers[1].history.oldestSeq == 1)
        let busy = ledgers[0].history
        #expect(busy.count < 40 && busy.count > 10)
        #expect(busy.oldestSeq == 500 - UInt64(busy.count) + 1)  // a suffix: the oldest went
    }

    /// A resume from a trimmed seq gets a snapshot; one from a kept seq replays exactly what the untrimmed
    /// history would have.
    @Test func resumeAfterTrimReplaysFromKeptSeqsAndSnapshotsBeforeThem() {
        var full = DeviceLedger(deviceId: "phone", epoch: "e1", historyCapacity: 1024)
        for i in 1...30 { _ = full.apply(live("t\(i % 4)", "\(i)"), now: t0 + Double(i)) }
        var trimmed = full
        trimmed.trimHistory(toBytes: full.history.bytes / 3)
        let oldest = trimmed.history.oldestSeq!
        #expect(oldest > 1 && oldest < 30)

        let (_, before) = Coalescer.subscribe(ledger: trimmed, resume: (epoch: "e1", seq: oldest - 1), window: 64)
        #expect(before == .snapshot)

        func replay(_ ledger: inout DeviceLedger, from seq: UInt64) -> [OutboundEvent] {
            var (c, start) = Coalescer.subscribe(ledger: ledger, resume: (epoch: "e1", seq: seq), window: 64)
            #expect(start == .replay(from: seq))
            var frames = [OutboundEvent]()
            while let f = c.next(ledger: &ledger, now: t0 + 100) { frames.append(f) }
            return frames
        }
        for seq in [oldest, oldest + 3] {
            let fromTrimmed = replay(&trimmed, from: seq)
            #expect(!fromTrimmed.isEmpty)
            #expect(fromTrimmed == replay(&full, from: seq))
        }
    }
}
