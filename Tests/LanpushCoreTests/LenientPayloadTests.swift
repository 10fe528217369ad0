import PropertyBased
import Testing

@testable import LanpushCore

/// HA's paths read a payload as the companion apps read it: what the strict rules refuse is ignored or normalised,
/// with a warning naming the field and the rule — never refused.
@Suite struct LenientPayloadTests {
    static let now = 1_750_000_000.0

    static func accept(_ text: String) -> AcceptedPush {
        LenientPayload.accept(PayloadFixture.object(text), now: now)
    }

    static func state(_ text: String) -> ContentState? {
        guard case .liveUpdate(let update) = accept(text).command else { return nil }
        return update.state
    }

    static func rules(_ text: String) -> [String] {
        accept(text).warnings.map { "\($0.field)|\($0.rule)" }
    }

    @Test func aLiveUpdateWithoutATagIsAPlainNotification() {
        let accepted = Self.accept(#"{"title":"Washer","message":"Rinsing","data":{"live_update":true,"progress":5}}"#)
        guard case .notification(let n) = accepted.command else {
            Issue.record("\(accepted.command)")
            return
        }
        #expect(n.message == "Rinsing" && n.data["progress"] == 5)
        #expect(accepted.warnings.map(\.rule) == ["required"])
    }

    @Test func aTagOutsideTheAlphabetStillNamesItsActivity() {
        let accepted = Self.accept(#"{"message":"m","data":{"tag":"washer.cycle","live_update":true}}"#)
        #expect(accepted.command.tag == "washer.cycle")
        #expect(Self.rules(#"{"message":"m","data":{"tag":"washer.cycle","live_update":true}}"#).contains("data.tag|pattern"))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let fields: String
        let expected: ContentState
        let warning: String
        var testDescription: String { warning }
        init(_ fields: String, _ expected: ContentState, _ warning: String) {
            self.fields = fields
            self.expected = expected
            self.warning = warning
        }
    }

    static let cases: [Case] = [
        .init(#""progress":"unavailable","progress_max":100"#, ["progress_max": 100], "data.progress|type"),
        .init(#""progress":-5,"progress_max":100"#, ["progress_max": 100], "data.progress|non_negative"),
        .init(#""progress":5,"progress_max":0"#, ["progress": 5], "data.progress_max|positive"),
        .init(#""chronometer":true"#, [:], "data.chronometer|requires_when"),
        .init(#""notification_icon":"mdi:Washing_Machine""#, ["icon": "mdi:washing-machine"], "data.notification_icon|pattern"),
        .init(#""notification_icon":"hass:Fan""#, ["icon": "mdi:fan"], "data.notification_icon|pattern"),
        .init(#""notification_icon":"washer""#, ["icon": "mdi:washer"], "data.notification_icon|pattern"),
        .init(#""notification_icon":"mdi:!!""#, [:], "data.notification_icon|pattern"),
        .init(#""notification_icon_color":"rgb(33,150,243)""#, [:], "data.notification_icon_color|color"),
        .init(#""notification_icon_color":"2196F3""#, ["color": "#2196F3"], "data.notification_icon_color|color"),
        .init(##""background_color":"#12""##, [:], "data.background_color|color"),
        .init(#""critical_text":{"a":1}"#, [:], "data.critical_text|type"),
        .init(#""url":5"#, [:], "data.url|type"),
        .init(#""when":"soon","when_relative":true"#, [:], "data.when|type"),
        .init(#""stale_date":1e300"#, [:], "data.stale_date|range"),
        .init(#""template":{"template":"gauge"}"#, [:], "data.template.template|enum"),
        .init(#""content_state":{"progress":-3}"#, [:], "data.content_state.progress|non_negative"),
        .init(#""content_state":{"chronometer":true}"#, [:], "data.content_state.chronometer|requires_when"),
        .init(#""lanpush":{"path":"cloud"}"#, [:], "data.lanpush.path|enum"),
    ]

    @Test(arguments: cases)
    func aFieldTheAppsWouldIgnoreIsIgnored(_ row: Case) {
        let text = #"{"message":"m","data":{"tag":"t","live_update":true,\#(row.fields)}}"#
        var want: ContentState = ["message": "m"]
        for (k, v) in row.expected { want[k] = v }
        #expect(Self.state(text) == want)
        #expect(Self.rules(text).contains(row.warning), "\(Self.rules(text))")
    }

    @Test func severalUnreadableFieldsAreEachIgnoredAndNamed() {
        let text = #"{"title":{"x":1},"message":"m","data":{"tag":"t","live_update":true,"progress":"n/a","progress_max":-1,"alert":"!","alert_sound":"x","relevance_score":"high"}}"#
        #expect(Self.state(text) == ["message": "m"])
        #expect(Set(Self.rules(text)) == [
            "title|type", "data.progress|type", "data.progress_max|positive", "data.alert|type",
            "data.relevance_score|type", "title|android_title",
        ])
    }

    @Test func whatTheStrictRulesAcceptIsTakenUnchangedAndUnwarned() throws {
        let text = #"{"title":"Washer","message":"Rinsing","data":{"tag":"washer","live_update":true,"progress":900,"progress_max":3600,"notification_icon":"mdi:washing-machine"}}"#
        let strict = try PayloadInterpreter.accept(NotifyMessage.decode(PayloadFixture.object(text)), now: Self.now)
        #expect(Self.accept(text) == strict && strict.warnings.isEmpty)
    }

    /// Whatever HA sends, a payload is delivered as something: never an error.
    @Test func noPayloadIsRefused() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...40).array(of: 0...8)) { picks in
            let values: [JSONValue] = [
                .null, true, "x", "true", -3, 0, 2.5, "45", "#fff", "rgb(1,2,3)", "mdi:Fan", ["a": 1], [1, 2], "",
            ]
            let keys = [
                "tag", "live_update", "progress", "progress_max", "chronometer", "when", "when_relative",
                "notification_icon", "notification_icon_color", "color", "critical_text", "url", "alert", "stale_date",
                "relevance_score", "dismissal_date", "template", "content_state", "lanpush", "silent", "event",
            ]
            var data: [String: JSONValue] = ["live_update": true, "tag": "t"]
            for (i, pick) in picks.enumerated() { data[keys[(pick + i) % keys.count]] = values[pick % values.count] }
            let accepted = LenientPayload.accept(["message": "m", "data": .object(data)], now: Self.now)
            if case .liveUpdate(let update) = accepted.command {
                // What reaches a client obeys the strict rules of every key it holds.
                for (key, value) in update.state {
                    let rule = try #require(ContentStateKey(rawValue: key))
                    #expect((try? rule.validate(value, at: .root)) != nil, "\(key): \(value)")
                }
            }
        }
    }
}
