import LanpushCore
import Testing

/// Every example payload of HA's Live Activity docs (companion docs), mapped to the exact command a client receives.
struct PayloadMappingTests {
    struct Example: Sendable, CustomTestStringConvertible {
        let name: String
        let payload: String
        let expected: PushCommand
        var testDescription: String { name }
    }

    static let now = PayloadFixture.now

    /// The title goes in the state too (HA core and its relay put it in the content state on every update).
    static func live(_ tag: String, title: String? = nil, _ state: ContentState) -> PushCommand {
        var state = state
        if let title, !title.isEmpty { state["title"] = .string(title) }
        return .liveUpdate(LiveUpdate(tag: tag, title: title, state: state))
    }

    static let seedExamples: [Example] = [
        Example(
            name: "minimal washer start",
            payload: """
                {"title":"Washing Machine","message":"Cycle started","data":{"tag":"washer_cycle","live_update":true}}
                """,
            expected: live("washer_cycle", title: "Washing Machine", ["message": "Cycle started"])),
        Example(
            name: "washer with progress, timer, icon and colors",
            payload: """
                {"title":"Washing Machine","message":"Rinsing · 1 of 2","data":{"tag":"washer_cycle","live_update":true,
                 "progress":900,"progress_max":3600,"chronometer":true,"when":2700,"when_relative":true,
                 "notification_icon":"mdi:washing-machine","notification_icon_color":"#2196F3","color":"#2196F3"}}
                """,
            expected: live(
                "washer_cycle", title: "Washing Machine",
                [
                    "message": "Rinsing · 1 of 2", "progress": 900, "progress_max": 3600, "chronometer": true,
                    "countdown_end": .number(now + 2700), "icon": "mdi:washing-machine", "color": "#2196F3",
                ])),
        Example(
            name: "washer cycle complete",
            payload: """
                {"title":"Washing Machine","message":"Cycle complete","data":{"tag":"washer_cycle","live_update":true,
                 "progress":3600,"progress_max":3600,"notification_icon":"mdi:washing-machine",
                 "notification_icon_color":"#4CAF50","color":"#4CAF50"}}
                """,
            expected: live(
                "washer_cycle", title: "Washing Machine",
                [
                    "message": "Cycle complete", "progress": 3600, "progress_max": 3600,
                    "icon": "mdi:washing-machine", "color": "#4CAF50",
                ])),
        Example(
            name: "dryer chronometer",
            payload: """
                {"title":"Laundry","message":"Drying","data":{"tag":"dryer","live_update":true,"chronometer":true,
                 "when":3600,"when_relative":true}}
                """,
            expected: live(
                "dryer", title: "Laundry",
                ["message": "Drying", "chronometer": true, "countdown_end": .number(now + 3600)])),
        Example(
            name: "EV charging with templated progress string",
            payload: """
                {"title":"EV Charging","message":"Charging · 45%","data":{"tag":"ev-charging","live_update":true,
                 "progress":"45","progress_max":100}}
                """,
            expected: live(
                "ev-charging", title: "EV Charging",
                ["message": "Charging · 45%", "progress": 45, "progress_max": 100])),
        Example(
            name: "throttled update without title",
            payload: """
                {"data":{"tag":"my_activity","live_update":true,"message":"ignored: message is top level"},"message":"812 W"}
                """,
            expected: live("my_activity", ["message": "812 W"])),
        Example(
            name: "EV charging",
            payload: """
                {"title":"EV Charging","message":"Charging · Est. 45 min remaining","data":{"tag":"ev-charging",
                 "live_update":true,"critical_text":"45%","progress":45,"progress_max":100,
                 "notification_icon":"mdi:ev-station","notification_icon_color":"#4CAF50"}}
                """,
            expected: live(
                "ev-charging", title: "EV Charging",
                [
                    "message": "Charging · Est. 45 min remaining", "critical_text": "45%", "progress": 45,
                    "progress_max": 100, "icon": "mdi:ev-station", "color": "#4CAF50",
                ])),
        Example(
            name: "dishwasher",
            payload: """
                {"title":"Dishwasher","message":"Pre-wash in progress","data":{"tag":"dishwasher","live_update":true,
                 "critical_text":"Pre-wash","progress":20,"progress_max":100,"notification_icon":"mdi:dishwasher",
                 "notification_icon_color":"#26C6DA"}}
                """,
            expected: live(
                "dishwasher", title: "Dishwasher",
                [
                    "message": "Pre-wash in progress", "critical_text": "Pre-wash", "progress": 20,
                    "progress_max": 100, "icon": "mdi:dishwasher", "color": "#26C6DA",
                ])),
        Example(
            name: "All Fields",
            payload: """
                {"message":"All content state fields active","title":"All Fields","data":{"tag":"debug-all",
                 "live_update":true,"critical_text":"5 min","progress":42,"progress_max":100,"chronometer":true,
                 "when":300,"when_relative":true,"notification_icon":"mdi:home-assistant",
                 "notification_icon_color":"#03A9F4"}}
                """,
            expected: live(
                "debug-all", title: "All Fields",
                [
                    "message": "All content state fields active", "critical_text": "5 min", "progress": 42,
                    "progress_max": 100, "chronometer": true, "countdown_end": .number(now + 300),
                    "icon": "mdi:home-assistant", "color": "#03A9F4",
                ])),
        Example(
            name: "url on tap",
            payload: """
                {"title":"Washing Machine","message":"Cycle complete","data":{"tag":"washer_cycle","live_update":true,
                 "url":"/lovelace/laundry"}}
                """,
            expected: live(
                "washer_cycle", title: "Washing Machine", ["message": "Cycle complete", "url": "/lovelace/laundry"])),
        Example(
            name: "custom colors",
            payload: """
                {"title":"Washing Machine","message":"Cycle complete","data":{"tag":"washer_cycle","live_update":true,
                 "background_color":"#101820","text_color":"#FFFFFF"}}
                """,
            expected: live(
                "washer_cycle", title: "Washing Machine",
                ["message": "Cycle complete", "background_color": "#101820", "text_color": "#FFFFFF"])),
        Example(
            name: "clear_notification ends and dismisses the activity",
            payload: #"{"message":"clear_notification","data":{"tag":"washer_cycle"}}"#,
            expected: .end(EndRequest(tag: "washer_cycle", dismissal: .immediate))),
    ]

    @Test(arguments: seedExamples)
    func seedExample(_ example: Example) throws {
        #expect(try PayloadFixture.command(example.payload) == example.expected)
    }

    @Test func allFieldsSample() throws {
        let update = try PayloadFixture.liveUpdate(
            """
            {"message":"All content state fields active","title":"All Fields","data":{"tag":"debug-all",
             "live_update":true,"critical_text":"5 min","progress":42,"progress_max":100,"chronometer":true,
             "when":300,"when_relative":true,"notification_icon":"mdi:home-assistant","notification_icon_color":"#03A9F4"}}
            """)
        #expect(update.state["countdown_end"] == .number(Self.now + 300))
        #expect(update.state["progress"] == 42)
        #expect(update.state["icon"] == "mdi:home-assistant")
        #expect(update.state["color"] == "#03A9F4")
        #expect(update.title == "All Fields")
        #expect(update.silent == false && update.alert == nil && update.event == nil)
    }

    @Test func relayBodyFromDesign() throws {
        let body = PayloadFixture.json(
            """
            {"message":"Cycle started","title":"Washing Machine",
             "data":{"tag":"washer_cycle","live_update":true,"progress":900,"progress_max":3600,"event":"start"},
             "push_token":"tok-1","live_activity_token":"la-1","hass_confirm_id":"c-9",
             "registration_info":{"app_id":"io.robbie.HomeAssistant","app_version":"2024.1","os_version":"17.2","webhook_id":"wh"}}
            """)
        let request = try RelayPushRequest.decode(body)
        #expect(request.pushToken == "tok-1")
        #expect(request.liveActivityToken == "la-1")
        #expect(request.hassConfirmId == "c-9")
        #expect(request.registrationInfo["webhook_id"] == "wh")
        #expect(JSONValue.object(request.raw) == body)
        #expect(request.notification.title == "Washing Machine")

        let command = try PayloadInterpreter.interpret(request.notification, now: Self.now)
        #expect(
            command
                == .liveUpdate(
                    LiveUpdate(
                        tag: "washer_cycle", title: "Washing Machine",
                        state: ["message": "Cycle started", "title": "Washing Machine", "progress": 900, "progress_max": 3600],
                        event: .start)))
    }

    @Test func relayBodyMinimal() throws {
        let request = try RelayPushRequest.decode(
            PayloadFixture.json(#"{"message":"hi","push_token":"t","registration_info":{"app_id":"a","os_version":null}}"#))
        #expect(request.notification == NotifyMessage(message: "hi"))
        #expect(request.liveActivityToken == nil && request.hassConfirmId == nil)
    }

    // MARK: - Plain notifications and ends

    @Test func plainNotificationKeepsDataUnchanged() throws {
        let payload = """
            {"title":"Door","message":"Front door opened","data":{"tag":"door","push":{"sound":"chime"},
             "entity_id":"camera.porch","progress":"not a number here","actions":[{"action":"OK"}],"x":null}}
            """
        let command = try PayloadFixture.command(payload)
        #expect(
            command
                == .notification(
                    NotifyMessage(
                        title: "Door", message: "Front door opened", data: PayloadFixture.object(payload)["data"]!.objectValue!)))
        #expect(command.tag == "door")
    }

    @Test func plainNotificationWithoutData() throws {
        #expect(try PayloadFixture.command(#"{"message":"hello"}"#) == .notification(NotifyMessage(message: "hello")))
        #expect(
            try PayloadFixture.command(#"{"message":"hello","data":null,"title":null}"#)
                == .notification(NotifyMessage(message: "hello")))
    }

    @Test func liveUpdateFalseIsPlain() throws {
        let command = try PayloadFixture.command(#"{"message":"m","data":{"tag":"t","live_update":"false"}}"#)
        #expect(command == .notification(NotifyMessage(message: "m", data: ["tag": "t", "live_update": "false"])))
    }

    /// Without a tag it is the companion app's command (a no-op on iOS; Android would post it as text): never shown
    /// as a notification.
    @Test func clearWithoutTagIsACommand() throws {
        #expect(
            try PayloadFixture.command(#"{"message":"clear_notification"}"#)
                == .command(CompanionCommand(message: NotifyMessage(message: "clear_notification"))))
    }

    /// The iOS app's kiosk commands (home-assistant/iOS `KioskPushCommand.swift`), matched as the app matches them.
    @Test(arguments: ["kiosk_set_brightness", " KIOSK_RELOAD ", "kiosk_show_camera"])
    func kioskCommandsAreCommands(message: String) throws {
        let payload = #"{"message":\#(JSONValue.string(message)),"data":{"level":50}}"#
        guard case .command = try PayloadFixture.command(payload) else {
            Issue.record("\(message) is not a command")
            return
        }
    }

    @Test func clearWithLifecycleFields() throws {
        let command = try PayloadFixture.command(
            """
            {"message":"clear_notification","data":{"tag":"washer_cycle","live_update":true,
             "dismissal_date":"1750000600","stale_date":1750000300,"relevance_score":3}}
            """)
        #expect(
            command
                == .end(
                    EndRequest(tag: "washer_cycle", dismissal: .at(1_750_000_600), staleDate: 1_750_000_300, relevanceScore: 3)))
    }

    // MARK: - Live update details

    @Test func unknownDataKeysIgnoredOnLiveUpdates() throws {
        let update = try PayloadFixture.liveUpdate(
            """
            {"message":"m","data":{"tag":"t","live_update":true,"push":{"sound":"x"},"entity_id":"sensor.a",
             "alert_once":true,"sticky":"false","visibility":"public"}}
            """)
        #expect(update.state == ["message": "m"])
    }

    @Test func messageAbsentBecomesEmpty() throws {
        #expect(try PayloadFixture.liveUpdate(#"{"data":{"tag":"t","live_update":true}}"#).state == ["message": ""])
    }

    @Test func lenientRenderings() throws {
        let update = try PayloadFixture.liveUpdate(
            """
            {"title":2024,"message":45,"data":{"tag":"t","live_update":"True","progress":"45.6","progress_max":99.5,
             "critical_text":12,"chronometer":"true","when":"1750003600.4","silent":"false"}}
            """)
        #expect(update.title == "2024")
        #expect(
            update.state == [
                "message": "45", "title": "2024", "progress": 46, "progress_max": 100, "critical_text": "12",
                "chronometer": true, "countdown_end": 1_750_003_600,
            ])
        #expect(update.silent == false)
    }

    @Test(arguments: [
        (#""when":1750003600"#, 1_750_003_600.0),
        (#""when":1750003600,"when_relative":false"#, 1_750_003_600),
        (#""when":90.6,"when_relative":true"#, 1_750_000_091),
        (#""when":-1750003600"#, -1_750_003_600),
    ])
    func whenBecomesCountdownEnd(fields: String, expected: Double) throws {
        let update = try PayloadFixture.liveUpdate(#"{"data":{"tag":"t","live_update":true,\#(fields)}}"#)
        #expect(update.state["countdown_end"] == .number(expected))
        #expect(update.state["chronometer"] == nil && update.state["chronometer_start"] == nil)
    }

    /// A negative relative `when` counts up from now for that long: the timer starts now and stops at its end, as
    /// the iOS app's handler reads it (home-assistant/iOS `HandlerLiveActivity.swift`).
    @Test func aNegativeRelativeWhenIsABoundedCountUp() throws {
        let update = try PayloadFixture.liveUpdate(
            #"{"data":{"tag":"t","live_update":true,"chronometer":true,"when":-60,"when_relative":"true"}}"#)
        #expect(update.state["chronometer_start"] == .number(Self.now))
        #expect(update.state["countdown_end"] == .number(Self.now + 60))
    }

    @Test func iconColorFallsBackToColor() throws {
        let update = try PayloadFixture.liveUpdate(
            ##"{"data":{"tag":"t","live_update":true,"color":"teal","progress_bar_color":"#80FF0000","progress_bar_direction":"rtl"}}"##)
        #expect(
            update.state == [
                "message": "", "color": "teal", "progress_bar_color": "#80FF0000", "progress_bar_direction": "rtl",
            ])
    }

    @Test func eventAlertSilentAndLifecycle() throws {
        let update = try PayloadFixture.liveUpdate(
            """
            {"title":"T","message":"m","data":{"tag":"t","live_update":true,"silent":true,"event":"update",
             "alert":{"title":"Heads up","body":"Almost done"},"alert_sound":"default",
             "stale_date":"1750007200","relevance_score":0.25}}
            """)
        #expect(update.silent)
        #expect(update.event == .update)
        #expect(update.alert == ActivityAlert(title: "Heads up", body: "Almost done", sound: "default"))
        #expect(update.staleDate == 1_750_007_200)
        #expect(update.relevanceScore == 0.25)
        #expect(update.state == ["message": "m", "title": "T"])
    }

    /// ActivityKit takes any Double and orders by it: no clamping (50 and 100 must not become the same 1.0).
    @Test(arguments: [(1.7, 1.7), (-0.2, -0.2), (0.5, 0.5), (100, 100)])
    func relevanceScoreKeepsItsValue(score: Double, expected: Double) throws {
        let data = #"{"tag":"t","live_update":true,"relevance_score":\#(JSONValue.number(score))}"#
        #expect(try PayloadFixture.liveUpdate(#"{"data":\#(data)}"#).relevanceScore == expected)
        let end = try PayloadFixture.command(
            #"{"message":"clear_notification","data":{"tag":"t","relevance_score":\#(JSONValue.number(score))}}"#)
        #expect(end == .end(EndRequest(tag: "t", relevanceScore: expected)))
    }

    @Test func contentStateOverridesAndRemoves() throws {
        let update = try PayloadFixture.liveUpdate(
            """
            {"message":"Running","data":{"tag":"t","live_update":true,"progress":10,"progress_max":100,
             "notification_icon":"mdi:washing-machine","critical_text":"10%",
             "content_state":{"progress":"20","critical_text":null,"icon":"mdi:fan","text_color":"white",
                              "countdown_end":1750000123.6,"title":"Fan","unknown":1,"url":null}}}
            """)
        #expect(
            update.state == [
                "message": "Running", "progress": 20, "progress_max": 100, "icon": "mdi:fan", "text_color": "white",
                "countdown_end": 1_750_000_124, "title": "Fan",
            ])
    }

    @Test func contentStateNullMessageKeepsMessageKey() throws {
        let update = try PayloadFixture.liveUpdate(
            #"{"message":"Running","data":{"tag":"t","live_update":true,"content_state":{"message":null}}}"#)
        #expect(update.state == ["message": ""])
    }

    @Test func contentStateCanSupplyTheChronometerTimer() throws {
        let update = try PayloadFixture.liveUpdate(
            #"{"data":{"tag":"t","live_update":true,"chronometer":false,"content_state":{"chronometer":true,"countdown_end":1750000500}}}"#
        )
        #expect(update.state == ["message": "", "chronometer": true, "countdown_end": 1_750_000_500])
    }

    @Test func statesNeverHoldNull() throws {
        let update = try PayloadFixture.liveUpdate(
            """
            {"message":"m","data":{"tag":"t","live_update":true,"progress":null,"critical_text":null,
             "template":{"template":"monitor","icon":null,"left_column":{"value":{"value":"x","formatter":null}}},
             "content_state":{"color":null}}}
            """)
        #expect(
            update.state == [
                "message": "m", "template": ["template": "monitor", "left_column": ["value": ["value": "x"]]],
            ])
    }
}
