import Testing

@testable import LanpushCore

/// The loop's patch memo gives every session the patch `MergePatch.diff` would, and computes it once for the
/// sessions of one fan-out.
@Suite struct PatchMemoTests {
    static let before: ContentState = ["message": "Washing", "progress": 40, "icon": "mdi:washing-machine"]
    static let after: ContentState = ["message": "Rinsing", "progress": 41, "icon": "mdi:washing-machine"]

    /// The same two states (one storage each, as one request's states are for every device): computed once.
    @Test func oneFanOutComputesThePatchOnce() {
        let memo = PatchMemo()
        let from = Self.before, to = Self.after  // copies share the storage
        for _ in 0..<100 { #expect(memo.diff(from: from, to: to) == ["message": "Rinsing", "progress": 41]) }
        #expect(memo.reused == 99)
    }

    /// Pairs asked in turn, again and again (a session is written every tag changed in a turn, then the next session
    /// the same tags): each computed once. Past its capacity the memo starts again, still answering right.
    @Test func interleavedPairsAreEachComputedOnce() {
        let memo = PatchMemo()
        let pairs: [(ContentState, ContentState)] = (0..<10).map { (["progress": .number(Double($0))], ["progress": .number(Double($0 + 1))]) }
        for _ in 0..<30 {
            for (from, to) in pairs { #expect(memo.diff(from: from, to: to) == MergePatch.diff(from: from, to: to)) }
        }
        #expect(memo.reused == 10 * 29)
        let many: [(ContentState, ContentState)] = (0..<(PatchMemo.capacity + 5)).map { (["n": .number(Double($0))], ["n": .null]) }
        for (from, to) in many { #expect(memo.diff(from: from, to: to) == ["n": .null]) }
        for (from, to) in pairs { #expect(memo.diff(from: from, to: to) == MergePatch.diff(from: from, to: to)) }
    }

    /// Equal contents in other storage, or another pair: computed again, never a stale patch.
    @Test func anotherPairIsComputed() {
        let memo = PatchMemo()
        _ = memo.diff(from: Self.before, to: Self.after)
        var rebuilt = ContentState()
        for (key, value) in Self.after { rebuilt[key] = value }
        #expect(memo.diff(from: Self.before, to: rebuilt) == MergePatch.diff(from: Self.before, to: rebuilt))
        #expect(memo.diff(from: Self.after, to: Self.before) == ["message": "Washing", "progress": 40])
        var removed = Self.after
        removed["icon"] = nil
        #expect(memo.diff(from: Self.after, to: removed) == ["icon": .null])
        #expect(memo.diff(from: [:], to: [:]) == [:])
        #expect(memo.reused == 0)
    }

    /// A dictionary changed in place after it was asked about is another storage (copy-on-write): the memo does not
    /// answer for the old contents.
    @Test func aChangedStateIsNotMistakenForTheOldOne() {
        let memo = PatchMemo()
        var from = Self.before
        let to = Self.after
        _ = memo.diff(from: from, to: to)
        from["progress"] = 41
        #expect(memo.diff(from: from, to: to) == ["message": "Rinsing"])
        #expect(memo.reused == 0)
    }
}
