import Testing

@testable import LanpushCore

/// The loop's patch memo gives every session the patch `MergePatch.diff` would, computes it once for the sessions of
/// one fan-out, and knows states only by the id their request stamped on them.
@Suite struct PatchMemoTests {
    static let before: ContentState = ["message": "Washing", "progress": 40, "icon": "mdi:washing-machine"]
    static let after: ContentState = ["message": "Rinsing", "progress": 41, "icon": "mdi:washing-machine"]

    static func view(_ state: ContentState, id: UInt64) -> ClientView {
        ClientView(generation: 1, state: state, phase: .active, stateID: id)
    }

    /// The same two stamped states (one request's, as every device of a fan-out holds them): computed once.
    @Test func oneFanOutComputesThePatchOnce() {
        let memo = PatchMemo()
        let from = Self.view(Self.before, id: 1), to = Self.view(Self.after, id: 2)
        for _ in 0..<100 { #expect(memo.diff(from: from, to: to) == ["message": "Rinsing", "progress": 41]) }
        #expect(memo.reused == 99)
    }

    /// Pairs asked in turn, again and again (a session is written every tag changed in a turn, then the next session
    /// the same tags): each computed once. Past its capacity the memo starts again, still answering right.
    @Test func interleavedPairsAreEachComputedOnce() {
        let memo = PatchMemo()
        var pairs: [(ClientView, ClientView)] = []
        for i in 0..<10 {
            let from = Self.view(["progress": .number(Double(i))], id: UInt64(2 * i + 1))
            let to = Self.view(["progress": .number(Double(i + 1))], id: UInt64(2 * i + 2))
            pairs.append((from, to))
        }
        for _ in 0..<30 {
            for (from, to) in pairs {
                #expect(memo.diff(from: from, to: to) == MergePatch.diff(from: from.state, to: to.state))
            }
        }
        #expect(memo.reused == 10 * 29)
        for i in 0..<(PatchMemo.capacity + 5) {
            let from = Self.view(["n": .number(Double(i))], id: UInt64(1000 + i)), to = Self.view([:], id: 999)
            #expect(memo.diff(from: from, to: to) == ["n": .null])
        }
        for (from, to) in pairs { #expect(memo.diff(from: from, to: to) == MergePatch.diff(from: from.state, to: to.state)) }
    }

    /// States no request stamped (restored from the store, made in place) are diffed every time, never looked up:
    /// equal ids of 0 say nothing about the contents.
    @Test func unstampedStatesAreAlwaysDiffed() {
        let memo = PatchMemo()
        #expect(memo.diff(from: Self.view(Self.before, id: 0), to: Self.view(Self.after, id: 0)) == ["message": "Rinsing", "progress": 41])
        #expect(memo.diff(from: Self.view(Self.after, id: 0), to: Self.view(Self.before, id: 0)) == ["message": "Washing", "progress": 40])
        #expect(memo.diff(from: Self.view(Self.before, id: 1), to: Self.view(Self.after, id: 0)) == ["message": "Rinsing", "progress": 41])
        #expect(memo.reused == 0)
    }

    /// A state changed after its request was stamped loses the id, in the update and in the activity: the memo can
    /// never answer for the old contents.
    @Test func aChangedStateLosesItsId() {
        var command = PushCommand.liveUpdate(LiveUpdate(tag: "washer", state: Self.before))
        command.stamp(stateID: 7)
        guard case .liveUpdate(var update) = command else { Issue.record("not a live update"); return }
        #expect(update.stateID == 7)
        update.state["progress"] = 41
        #expect(update.stateID == 0)

        var activity = Lifecycle.start(
            LiveUpdate(tag: "washer", state: Self.before), seq: 1, now: 0, webhookId: nil)
        activity.replaceState(Self.after, bytes: 10, id: 8)
        #expect(activity.view.stateID == 8)
        activity.state["progress"] = 42
        #expect(activity.stateID == 0 && activity.view.stateID == 0)
    }

    /// Through the ledgers and coalescers of one fan-out: a stamped update's patch is computed for the first device's
    /// session and reused for the others; an unstamped one is computed for each.
    @Test func aFanOutSharesOnePatchThroughTheLedgers() {
        func fanOut(stamp: Bool) -> Int {
            let memo = PatchMemo()
            var start = PushCommand.liveUpdate(LiveUpdate(tag: "washer", state: Self.before))
            var update = PushCommand.liveUpdate(LiveUpdate(tag: "washer", state: Self.after))
            if stamp {
                start.stamp(stateID: 1)
                update.stamp(stateID: 2)
            }
            for device in 0..<5 {
                var ledger = DeviceLedger(deviceId: "d\(device)", epoch: "e")
                _ = ledger.apply(start, now: 0)
                var (coalescer, _) = Coalescer.subscribe(ledger: ledger, resume: nil, window: 8)
                _ = coalescer.next(ledger: ledger, now: 0)  // the snapshot
                for change in ledger.apply(update, now: 1) { coalescer.note(change) }
                guard case .update(_, _, let patch, _, _, _, _)? = coalescer.next(ledger: ledger, now: 1, patches: memo).event
                else { Issue.record("no update frame"); return -1 }
                #expect(patch == ["message": "Rinsing", "progress": 41])
            }
            return memo.reused
        }
        #expect(fanOut(stamp: true) == 4)
        #expect(fanOut(stamp: false) == 0)
    }
}
