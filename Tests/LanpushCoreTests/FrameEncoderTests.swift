import Testing

@testable import LanpushCore

/// A frame spliced for another seq is byte for byte the frame the encoder would have written for it.
@Suite struct FrameEncoderTests {
    static let activity = Activity(
        generation: 3, attributes: ActivityAttributes(tag: "washer", title: "Washer", startedAt: 1_800_000_000),
        state: ["message": "Rinsing", "progress": 40, "seq": "not the frame's", "nested": ["seq": 7]],
        staleDate: 1_800_000_900, updatedAt: 1_800_000_000, lastSeq: 3, stateID: 1)

    /// The same change for many devices (each its own seq, across digit boundaries and past 2^53), interleaved
    /// with other frames: every frame equals its own encoding, and the repeats were spliced (the notification too,
    /// across the updates between its two sends; the clear only after another clear) but for the seq past 2^53, whose
    /// text is the double's, not its digits.
    @Test func splicedFramesEqualTheirEncoding() {
        let view = Self.activity.view
        let patch: [String: JSONValue] = ["progress": 41, "message": "\"seq\":0 in a string"]
        let seqs: [UInt64] = [1, 9, 10, 99, 100, 12_345, 9_007_199_254_740_993, 2, 2]
        var events: [OutboundEvent] = seqs.map {
            .update(seq: $0, tag: "washer", patch: patch, view: view, silent: false, alert: nil)
        }
        events.insert(.notification(seq: 5, NotifyMessage(title: "Door", message: "open", data: ["seq": 1])), at: 3)
        events.insert(.start(seq: 6, tag: "washer", attributes: Self.activity.attributes, view: view, alert: nil), at: 5)
        events += [.notification(seq: 11, NotifyMessage(title: "Door", message: "open", data: ["seq": 1])),
                   .notification(seq: 12, NotifyMessage(title: "Door", message: "open", data: ["seq": 1]))]
        events += [.clear(seq: 20, tag: "washer"), .clear(seq: 21, tag: "washer"), .lifecycle(seq: 22, tag: "washer", phase: .ended)]
        let encoder = FrameEncoder()
        for event in events {
            #expect(encoder.encode(event) == event.json.serializedBytes(), "\(event)")
        }
        #expect(encoder.spliced == 10)
    }

    /// Several frames written in turn to one session after another (a session is written every tag changed in a
    /// turn): each is encoded once, and every later session's frame spliced from it.
    @Test func interleavedFramesAreEachEncodedOnce() {
        let states: [ContentState] = (0..<10).map { ["message": .string("step \($0)")] }
        let views = states.enumerated().map { i, state -> ClientView in
            var view = Self.activity.view
            view.state = state
            view.stateID = UInt64(100 + i)
            return view
        }
        let encoder = FrameEncoder()
        var seq: UInt64 = 0
        for _ in 0..<30 {
            for (i, view) in views.enumerated() {
                seq += 1
                let event = OutboundEvent.update(seq: seq, tag: "t\(i)", patch: view.state, view: view, silent: false, alert: nil)
                #expect(encoder.encode(event) == event.json.serializedBytes())
            }
        }
        #expect(encoder.spliced == 10 * 29)
    }

    /// Frames that differ in anything but their seq are encoded, not spliced from the last one.
    @Test func differentFramesAreEncoded() {
        let view = Self.activity.view
        let a = OutboundEvent.update(seq: 1, tag: "washer", patch: ["progress": 41], view: view, silent: false, alert: nil)
        let b = OutboundEvent.update(seq: 2, tag: "washer", patch: ["progress": 42], view: view, silent: false, alert: nil)
        let c = OutboundEvent.update(seq: 3, tag: "washer", patch: ["progress": 42], view: view, silent: true, alert: nil)
        let encoder = FrameEncoder()
        for event in [a, b, c] { #expect(encoder.encode(event) == event.json.serializedBytes()) }
        #expect(encoder.spliced == 0)
    }

    /// Two events are one frame but for the seq exactly when their frames, written with one seq, are the same bytes:
    /// every member of every kind counts.
    @Test func onlyTheSeqMayDiffer() {
        let view = Self.activity.view
        var otherView = view
        otherView.relevanceScore = 0.5
        var otherAttributes = Self.activity.attributes
        otherAttributes.title = "Dryer"
        let alert = ActivityAlert(title: "Done", body: "Empty it")
        let message = NotifyMessage(title: "Door", message: "open", data: ["seq": 1])
        let events: [(UInt64) -> OutboundEvent] = [
            { .start(seq: $0, tag: "washer", attributes: Self.activity.attributes, view: view, alert: nil) },
            { .start(seq: $0, tag: "dryer", attributes: Self.activity.attributes, view: view, alert: nil) },
            { .start(seq: $0, tag: "washer", attributes: otherAttributes, view: view, alert: nil) },
            { .start(seq: $0, tag: "washer", attributes: Self.activity.attributes, view: otherView, alert: nil) },
            { .start(seq: $0, tag: "washer", attributes: Self.activity.attributes, view: view, alert: alert) },
            { .update(seq: $0, tag: "washer", patch: ["progress": 41], view: view, silent: false, alert: nil) },
            { .update(seq: $0, tag: "dryer", patch: ["progress": 41], view: view, silent: false, alert: nil) },
            { .update(seq: $0, tag: "washer", patch: ["progress": 42], view: view, silent: false, alert: nil) },
            { .update(seq: $0, tag: "washer", patch: ["progress": 41], view: otherView, silent: false, alert: nil) },
            { .update(seq: $0, tag: "washer", patch: ["progress": 41], view: view, silent: true, alert: nil) },
            { .update(seq: $0, tag: "washer", patch: ["progress": 41], view: view, silent: false, alert: alert) },
            {
                .update(
                    seq: $0, tag: "washer", patch: ["progress": 41], view: view, silent: false, alert: nil,
                    staleDateRemoved: true)
            },
            { .end(seq: $0, tag: "washer", patch: [:], view: view) },
            { .end(seq: $0, tag: "dryer", patch: [:], view: view) },
            { .end(seq: $0, tag: "washer", patch: ["progress": 41], view: view) },
            { .end(seq: $0, tag: "washer", patch: [:], view: otherView) },
            { .end(seq: $0, tag: "washer", patch: [:], view: view, staleDateRemoved: true) },
            { .lifecycle(seq: $0, tag: "washer", phase: .stale) },
            { .lifecycle(seq: $0, tag: "dryer", phase: .stale) },
            { .lifecycle(seq: $0, tag: "washer", phase: .ended) },
            { .notification(seq: $0, message) },
            { .notification(seq: $0, NotifyMessage(title: "Door", message: "shut", data: ["seq": 1])) },
            { .clear(seq: $0, tag: "washer") },
            { .clear(seq: $0, tag: "dryer") },
        ]
        for (i, a) in events.enumerated() {
            for (j, b) in events.enumerated() {
                #expect(a(7).differsOnlyInSeq(from: b(12_345)) == (i == j), "\(a(7)) / \(b(12_345))")
                #expect((a(7).json.serializedBytes() == b(7).json.serializedBytes()) == (i == j))
            }
        }
        let snapshot = OutboundEvent.snapshot(epoch: "e", seq: 1, activities: [Self.activity])
        #expect(!snapshot.differsOnlyInSeq(from: snapshot))
        #expect(!OutboundEvent.notificationsDropped(count: 1, through: 2).differsOnlyInSeq(from: .notificationsDropped(count: 1, through: 2)))
    }

    /// Snapshots and drop reports are always encoded whole.
    @Test func snapshotsAreNeverSpliced() {
        let encoder = FrameEncoder()
        for seq: UInt64 in [4, 5] {
            let snapshot = OutboundEvent.snapshot(epoch: "e", seq: seq, activities: [Self.activity])
            #expect(encoder.encode(snapshot) == snapshot.json.serializedBytes())
            let dropped = OutboundEvent.notificationsDropped(count: 2, through: seq)
            #expect(encoder.encode(dropped) == dropped.json.serializedBytes())
        }
        #expect(encoder.spliced == 0)
    }

    /// Sessions of both versions following the same devices: each version's frames are spliced from its own last
    /// frame, and every frame equals its own encoding in its version.
    @Test func bothVersionsSpliceTheirOwnFrames() {
        let view = Self.activity.view
        let encoder = FrameEncoder()
        for seq in [7, 8, 9, 10, 99, 100, 1_000] as [UInt64] {
            let update = OutboundEvent.update(seq: seq, tag: "washer", patch: ["progress": 41], view: view, silent: false, alert: nil)
            let end = OutboundEvent.end(seq: seq, tag: "washer", patch: [:], view: view)
            for version in ProtocolVersion.allCases {
                #expect(encoder.encode(update, version) == update.json(version).serializedBytes(), "\(version) \(seq)")
            }
            #expect(encoder.encode(end, .v2) == end.json(.v2).serializedBytes())
        }
        // Each version keeps its own frame of each kind: the v1 updates, the v2 updates and the v2 ends are each
        // encoded once and spliced 6 times.
        #expect(encoder.spliced == 18)
    }
}
