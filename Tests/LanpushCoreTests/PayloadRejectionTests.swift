import LanpushCore
import Testing

/// Each rule's rejection names the exact field path (rooted at the request body) and rule.
struct PayloadRejectionTests {
    static func live(_ fields: String) -> String {
        #"{"title":"T","message":"m","data":{"tag":"t","live_update":true,\#(fields)}}"#
    }

    static let cases: [PayloadRejection] = [
        // tag
        .init("tag with bad characters", #"{"data":{"tag":"washer cycle!","live_update":true}}"#, field: "data.tag", rule: "pattern"),
        .init("65-character tag", #"{"data":{"tag":"\#(String(repeating: "a", count: 65))","live_update":true}}"#, field: "data.tag", rule: "pattern"),
        .init("empty tag", #"{"data":{"tag":"","live_update":true}}"#, field: "data.tag", rule: "pattern"),
        .init("bad tag on a live update", #"{"message":"hi","data":{"tag":"a/b","live_update":true}}"#, field: "data.tag", rule: "pattern"),
        .init("non-string tag on a live update", #"{"message":"hi","data":{"tag":5,"live_update":true}}"#, field: "data.tag", rule: "type"),
        .init("numeric tag", #"{"data":{"tag":12,"live_update":true}}"#, field: "data.tag", rule: "type"),
        .init("live update without tag", #"{"message":"m","data":{"live_update":true}}"#, field: "data.tag", rule: "required"),
        .init("live update with null tag", #"{"message":"m","data":{"tag":null,"live_update":true}}"#, field: "data.tag", rule: "required"),
        .init("live_update not a boolean", #"{"data":{"tag":"t","live_update":"yes"}}"#, field: "data.live_update", rule: "type"),
        .init("live_update not a boolean on a plain notification", #"{"data":{"live_update":1}}"#, field: "data.live_update", rule: "type"),
        // progress
        .init("negative progress", live(#""progress":-1,"progress_max":10"#), field: "data.progress", rule: "non_negative"),
        .init("slightly negative progress", live(#""progress":"-0.4""#), field: "data.progress", rule: "non_negative"),
        .init("progress_max zero", live(#""progress":1,"progress_max":0"#), field: "data.progress_max", rule: "positive"),
        .init("progress_max rounds to zero", live(#""progress_max":0.4"#), field: "data.progress_max", rule: "positive"),
        .init("progress not numeric", live(#""progress":"abc""#), field: "data.progress", rule: "type"),
        .init("progress nan string", live(#""progress":"nan""#), field: "data.progress", rule: "type"),
        .init("progress boolean", live(#""progress":true"#), field: "data.progress", rule: "type"),
        .init("progress too large", live(#""progress":1e300"#), field: "data.progress", rule: "range"),
        // colors and icons
        .init("bad color", live(##""color":"#12""##), field: "data.color", rule: "color"),
        .init("bad icon color", live(##""notification_icon_color":"#GGGGGG""##), field: "data.notification_icon_color", rule: "color"),
        .init("bad background color", live(#""background_color":"darkish""#), field: "data.background_color", rule: "color"),
        .init("Aivi-only color outside templates", live(#""text_color":"mint""#), field: "data.text_color", rule: "color"),
        .init("bad progress bar color", live(##""progress_bar_color":"#1234""##), field: "data.progress_bar_color", rule: "color"),
        .init("icon without mdi prefix", live(#""notification_icon":"washing-machine""#), field: "data.notification_icon", rule: "pattern"),
        .init("icon with capitals", live(#""notification_icon":"mdi:Washing""#), field: "data.notification_icon", rule: "pattern"),
        // timer
        .init("chronometer without when", live(#""chronometer":true"#), field: "data.chronometer", rule: "requires_when"),
        .init("when not numeric", live(#""when":"soon""#), field: "data.when", rule: "type"),
        .init("when_relative not a boolean", live(#""when":5,"when_relative":"maybe""#), field: "data.when_relative", rule: "type"),
        .init("chronometer not a boolean", live(#""chronometer":"on","when":5"#), field: "data.chronometer", rule: "type"),
        // event, alert, lifecycle, Android-only options
        .init("alert missing body", live(#""alert":{"title":"Hi"}"#), field: "data.alert.body", rule: "required"),
        .init("alert missing title", live(#""alert":{"body":"b"}"#), field: "data.alert.title", rule: "required"),
        .init("alert not an object", live(#""alert":"Hi""#), field: "data.alert", rule: "type"),
        .init("alert_sound not a string", live(#""alert_sound":1"#), field: "data.alert_sound", rule: "type"),
        .init("unknown event", live(#""event":"begin""#), field: "data.event", rule: "enum"),
        .init("silent not a boolean", live(#""silent":"loud""#), field: "data.silent", rule: "type"),
        .init("stale_date not a time", live(#""stale_date":"tomorrow""#), field: "data.stale_date", rule: "type"),
        .init("relevance_score not a number", live(#""relevance_score":"high""#), field: "data.relevance_score", rule: "type"),
        .init("sticky not a boolean", live(#""sticky":"yes""#), field: "data.sticky", rule: "type"),
        .init("alert_once not a boolean", live(#""alert_once":2"#), field: "data.alert_once", rule: "type"),
        .init("visibility not a string", live(#""visibility":1"#), field: "data.visibility", rule: "type"),
        .init("url not a string", live(#""url":{"path":"/"}"#), field: "data.url", rule: "type"),
        .init(
            "dismissal_date not a time", #"{"message":"clear_notification","data":{"tag":"t","dismissal_date":"later"}}"#,
            field: "data.dismissal_date", rule: "type"),
        // content_state overrides obey each key's own rule
        .init("content_state not an object", live(#""content_state":[1]"#), field: "data.content_state", rule: "type"),
        .init("content_state negative progress", live(#""content_state":{"progress":-3}"#), field: "data.content_state.progress", rule: "non_negative"),
        .init("content_state bad color", live(##""content_state":{"background_color":"#12"}"##), field: "data.content_state.background_color", rule: "color"),
        .init("content_state countdown_end not a number", live(#""content_state":{"countdown_end":"x"}"#), field: "data.content_state.countdown_end", rule: "type"),
        .init("content_state message not a string", live(#""content_state":{"message":{}}"#), field: "data.content_state.message", rule: "type"),
        .init("content_state bad icon", live(#""content_state":{"icon":"fan"}"#), field: "data.content_state.icon", rule: "pattern"),
        .init("content_state chronometer without timer", live(#""content_state":{"chronometer":true}"#), field: "data.content_state.chronometer", rule: "requires_when"),
        .init(
            "content_state removes the chronometer's timer", live(#""chronometer":true,"when":60,"content_state":{"countdown_end":null}"#),
            field: "data.content_state.countdown_end", rule: "requires_when"),
        .init("content_state bad template", live(#""content_state":{"template":{"template":"gauge"}}"#), field: "data.content_state.template.template", rule: "enum"),
        // envelope
        .init("data not an object", #"{"message":"m","data":"tag=t"}"#, field: "data", rule: "type"),
        .init("title not a string", #"{"title":{"text":"x"},"message":"m"}"#, field: "title", rule: "type"),
        .init("message not a string", #"{"message":["a"]}"#, field: "message", rule: "type"),
    ]

    @Test(arguments: cases)
    func rejects(_ row: PayloadRejection) throws {
        let error = try #require(PayloadFixture.rejection(row.payload))
        #expect(error.field == row.field)
        #expect(error.rule == row.rule)
        #expect(error.message.contains(row.field), "the message names the field: \(error.message)")
    }

    // MARK: - Relay body

    /// HA's relay refuses a body for its token only (mobile-apps-fcm-push `functions/handlers.js`, `handleRequest`):
    /// so does lanpush's relay ingest. Everything else is `LenientPayload`'s to read (`LenientPayloadTests`).
    static let relayCases: [PayloadRejection] = [
        .init("no push_token", #"{"message":"m","data":{"tag":"t","live_update":true}}"#, field: "push_token", rule: "required"),
        .init("null push_token", #"{"message":"m","push_token":null}"#, field: "push_token", rule: "required"),
        .init("empty push_token", #"{"message":"m","push_token":""}"#, field: "push_token", rule: "required"),
        .init("push_token checked before the payload", #"{"data":"bad"}"#, field: "push_token", rule: "required"),
        .init("numeric push_token", #"{"message":"m","push_token":5}"#, field: "push_token", rule: "required"),
        .init("body not an object", #"["m"]"#, field: "", rule: "type"),
    ]

    @Test func aRelayBodyIsReadAsLenientlyAsTheRelayReadsIt() throws {
        let request = try RelayPushRequest.decode(PayloadFixture.json(
            #"{"push_token":"p","registration_info":{"app_id":1,"webhook_id":"w"},"live_activity_token":1,"hass_confirm_id":true,"data":3,"title":["x"]}"#))
        #expect(request.pushToken == "p" && request.registrationInfo["webhook_id"] == "w")
        #expect(request.liveActivityToken == nil && request.hassConfirmId == nil)
        #expect(request.notification == NotifyMessage())
        #expect(try RelayPushRequest.decode(PayloadFixture.json(#"{"push_token":"p","registration_info":"x"}"#)).registrationInfo == [:])
    }

    @Test(arguments: relayCases)
    func rejectsRelayBody(_ row: PayloadRejection) {
        #expect {
            _ = try RelayPushRequest.decode(PayloadFixture.json(row.payload))
        } throws: { error in
            guard let error = error as? FieldError else { return false }
            return error.field == row.field && error.rule == row.rule
        }
    }

    @Test func bodyNotAnObjectHasReadableMessage() {
        do {
            _ = try RelayPushRequest.decode(.array([]))
            Issue.record("accepted an array body")
        } catch {
            #expect(error.json == ["field": "", "rule": "type", "message": "The request body must be a JSON object, got array."])
        }
    }

    @Test func pathParameterRootsErrors() {
        let message = NotifyMessage(data: ["tag": "t", "live_update": true, "progress": -1])
        do {
            _ = try PayloadInterpreter.interpret(message, now: 0, path: FieldPath("notification"))
            Issue.record("accepted a negative progress")
        } catch {
            #expect(error.field == "notification.data.progress")
        }
    }
}
