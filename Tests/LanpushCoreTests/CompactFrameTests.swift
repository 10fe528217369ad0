import Testing

@testable import LanpushCore

/// lanpush.v2's array frames: what they keep, what they leave out, and that a client reading one gets back the v1
/// object it stands for.
@Suite struct CompactFrameTests {
    static let activity = FrameEncoderTests.activity

    static var events: [OutboundEvent] {
        let view = activity.view
        var stale = view
        stale.phase = .stale
        var dismissed = view
        dismissed.phase = .dismissed
        dismissed.dismissalDate = 1_800_000_100
        return [
            .start(seq: 1, tag: "washer", attributes: activity.attributes, view: view, alert: ActivityAlert(title: "T", body: "B", sound: nil)),
            .update(seq: 2, tag: "washer", patch: ["progress": 41], view: view, silent: false, alert: nil),
            .update(seq: 3, tag: "washer", patch: [:], view: stale, silent: true, alert: nil, staleDateRemoved: true),
            .end(seq: 4, tag: "washer", patch: ["message": "Done"], view: dismissed),
            .lifecycle(seq: 5, tag: "washer", phase: .stale),
        ]
    }

    @Test(arguments: events)
    func anArrayFrameReadsBackAsItsObject(_ event: OutboundEvent) throws {
        let array = try #require(event.json(.v2).arrayValue)
        let v1 = try #require(event.json.objectValue)
        #expect(CompactFrame.object(array) == v1)
        #expect(array.count == 4 || array.count == 5)
        #expect(event.json(.v2).serializedCount < event.json.serializedCount)
    }

    /// The array a frame is written as directly (from its parts) is the array its v1 object converts to: the two
    /// versions cannot drift apart, for every kind and phase and every optional member.
    @Test func theDirectArrayIsTheConvertedObject() {
        var views: [ClientView] = []
        for phase in [ActivityPhase.active, .stale, .ended, .dismissed] {
            for (stale, score, dismissal) in [(nil, nil, nil), (1_800_000_900.0, 0.5, 1_800_000_100.4)] as [(Double?, Double?, Double?)] {
                views.append(ClientView(
                    generation: 3, state: ["message": "Rinsing", "nested": ["a": [1, true]]], phase: phase,
                    staleDate: stale, relevanceScore: score, dismissalDate: dismissal))
            }
        }
        let alerts: [ActivityAlert?] = [nil, ActivityAlert(title: "T", body: "B", sound: "default")]
        var events: [OutboundEvent] = []
        for view in views {
            for alert in alerts {
                events.append(.start(seq: 1, tag: "washer", attributes: Self.activity.attributes, view: view, alert: alert))
                for silent in [false, true] {
                    for removed in [false, true] {
                        events.append(.update(
                            seq: 2, tag: "washer", patch: ["progress": 41, "gone": .null], view: view, silent: silent,
                            alert: alert, staleDateRemoved: removed))
                    }
                }
            }
            for removed in [false, true] {
                events.append(.end(seq: 3, tag: "washer", patch: [:], view: view, staleDateRemoved: removed))
            }
            events.append(.lifecycle(seq: 4, tag: "washer", phase: view.phase))
        }
        for event in events {
            let object = event.json.objectValue!
            #expect(event.json(.v2) == ProtocolVersion.v2.frame(object), "\(event)")
            #expect(event.json(.v1) == .object(object))
        }
    }

    @Test func v2ArraysKeepEveryMember() {
        let view = Self.activity.view
        let update = OutboundEvent.update(seq: 12, tag: "washer", patch: ["progress": 41], view: view, silent: true, alert: nil)
        #expect(String(decoding: update.json(.v2).serializedBytes(), as: UTF8.self)
            == #"["update",12,"washer",{"progress":41},{"silent":true,"stale_date":1800000900}]"#)
        let plain = OutboundEvent.update(
            seq: 13, tag: "washer", patch: ["progress": 42],
            view: ClientView(generation: 1, state: [:], phase: .active, staleDate: nil, relevanceScore: nil, dismissalDate: nil),
            silent: false, alert: nil)
        #expect(String(decoding: plain.json(.v2).serializedBytes(), as: UTF8.self) == #"["update",13,"washer",{"progress":42}]"#)
        let lifecycle = OutboundEvent.lifecycle(seq: 14, tag: "washer", phase: .stale)
        #expect(String(decoding: lifecycle.json(.v2).serializedBytes(), as: UTF8.self) == #"["lifecycle",14,"washer","stale"]"#)
        for kept in [
            OutboundEvent.notification(seq: 15, NotifyMessage(title: "Door", message: "open", data: [:])),
            .clear(seq: 16, tag: "door"), .snapshot(epoch: "e", seq: 16, activities: [Self.activity]),
            .notificationsDropped(count: 1, through: 15),
        ] {
            #expect(kept.json(.v2) == kept.json, "\(kept) keeps its object form")
        }
    }

    @Test(arguments: [
        #"[]"#, #"["update",1,"t"]"#, #"["update",1,"t",{},{},{}]"#, #"["notification",1,"t",{}]"#,
        #"["update","1","t",{}]"#, #"["update",1,2,{}]"#, #"["update",1,"t",{},[]]"#, #"["update",1,"t","x"]"#,
        #"["lifecycle",1,"t",{}]"#, #"["start",1,"t",null]"#, #"[5,1,"t",{}]"#,
    ])
    func aMalformedArrayIsNoFrame(_ text: String) throws {
        let array = try #require(try JSONValue.parse(text).arrayValue)
        #expect(CompactFrame.object(array) == nil)
    }
}
