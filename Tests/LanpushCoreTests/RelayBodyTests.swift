import Testing

@testable import LanpushCore

/// The body lanpush sends to HA's relay.
@Suite struct RelayBodyTests {
    let acceptedAt = 1_700_000_000.4

    /// HA's own relay body, as mobile_app posts it to a push_url.
    static let haBody: JSONValue = [
        "message": "Cycle started", "title": "Washing Machine",
        "data": ["tag": "washer_cycle", "live_update": true, "progress": 900, "progress_max": 3600],
        "push_token": "relay-token-1",
        "registration_info": [
            "app_id": "io.robbie.HomeAssistant", "app_version": "2024.1", "os_version": "17.2", "webhook_id": "hook-1",
        ],
    ]

    @Test func aRequestWithNothingToChangeIsForwardedExactlyAsHASentIt() {
        let body = RelayBody.forwarding(Self.haBody.objectValue!, acceptedAt: acceptedAt)
        #expect(body.json == Self.haBody)
        #expect(body.json.serialized() == Self.haBody.serialized())
        #expect(!body.templateRemoved)
        #expect(!body.whenResolved)
    }

    @Test func unknownKeysNullsSilentAndConfirmIdsPassThroughUntouched() {
        var raw = Self.haBody.objectValue!
        raw["hass_confirm_id"] = "confirm-7"
        raw["something_new"] = ["nested": [1, 2, .null]]
        raw["data"] = ["tag": "washer_cycle", "live_update": true, "silent": true, "sticky": "true", "visibility": .null,
                       "future_key": ["a": 1]]
        let body = RelayBody.forwarding(raw, acceptedAt: acceptedAt)
        #expect(body.json == .object(raw))
    }

    @Test(arguments: [
        (JSONValue.number(2700), JSONValue.bool(true)),
        (.string("2700"), .string("True")),
        (.string(" 2699.7 "), .string("true")),
    ])
    func aRelativeWhenBecomesTheAbsoluteCountdownEndOfAcceptance(when: JSONValue, relative: JSONValue) {
        var raw = Self.haBody.objectValue!
        raw["data"] = ["tag": "washer_cycle", "live_update": true, "chronometer": true, "when": when, "when_relative": relative]
        let body = RelayBody.forwarding(raw, acceptedAt: acceptedAt)
        #expect(body.whenResolved)
        #expect(body.json["data"]?["when"] == .number(1_700_002_700))
        #expect(body.json["data"]?["when_relative"] == nil)
        #expect(body.json["data"]?["chronometer"] == true)
        #expect(body.json["message"] == "Cycle started")
    }

    /// The relay's `when` is exactly the `countdown_end` LAN clients got for the same request.
    @Test func theRelayTimerMatchesTheLANState() throws {
        let payload: JSONValue = [
            "message": "Drying", "data": ["tag": "dryer", "live_update": true, "chronometer": true, "when": 3599.6,
                                          "when_relative": true],
        ]
        let command = try PayloadInterpreter.interpret(NotifyMessage.decode(payload.objectValue!), now: acceptedAt)
        guard case .liveUpdate(let update) = command else {
            Issue.record("expected a live update")
            return
        }
        let body = RelayBody.forwarding(payload.objectValue!, acceptedAt: acceptedAt)
        #expect(body.json["data"]?["when"] == update.state["countdown_end"])
    }

    @Test func anAbsoluteWhenIsLeftAlone() {
        var raw = Self.haBody.objectValue!
        raw["data"] = ["tag": "t", "live_update": true, "when": 1_700_009_999, "when_relative": false]
        let body = RelayBody.forwarding(raw, acceptedAt: acceptedAt)
        #expect(!body.whenResolved)
        #expect(body.json == .object(raw))
    }

    @Test func aTemplateIsLANOnlyAndReportedWhenRemoved() {
        var raw = Self.haBody.objectValue!
        raw["data"] = ["tag": "washer_cycle", "live_update": true, "progress": 10, "progress_max": 100,
                       "template": ["template": "generic", "progress": 0.5]]
        let body = RelayBody.forwarding(raw, acceptedAt: acceptedAt)
        #expect(body.templateRemoved)
        #expect(body.json["data"] == ["tag": "washer_cycle", "live_update": true, "progress": 10, "progress_max": 100])
        var expected = raw
        expected["data"] = body.json["data"]
        #expect(body.json == .object(expected))
    }

    /// Addressed as HA core addresses its bodies (home-assistant/core `prepare_live_activity_remote_push`): a token
    /// and `data.event` with it; an end with its dismissal date.
    @Test func aBodyIsAddressedAsCoreAddressesIt() {
        let start = RelayAddress.addressed(Self.haBody, live: .init(token: "pts", event: .start))
        #expect(start["live_activity_token"] == "pts" && start["data"]?["event"] == "start")
        #expect(start["push_to_start_token"] == nil)
        let end = RelayAddress.addressed(
            ["message": "clear_notification", "push_token": "t", "data": ["tag": "w"]], live: .init(token: "la", event: .end),
            dismissal: 1_700_000_000.4)
        #expect(end == [
            "message": "clear_notification", "push_token": "t", "live_activity_token": "la",
            "data": ["tag": "w", "event": "end", "dismissal_date": 1_700_000_000],
        ])
    }

    /// No token, no event: the relay then sends an ordinary notification, as it does for core's bodies.
    @Test func withoutATokenThereIsNoEvent() {
        var raw = Self.haBody.objectValue!
        raw["push_to_start_token"] = "legacy"
        raw["data"] = ["tag": "washer_cycle", "live_update": true, "event": "start"]
        let body = RelayAddress.addressed(.object(raw), live: nil, dismissal: 5)
        #expect(body["live_activity_token"] == nil && body["push_to_start_token"] == nil)
        #expect(body["data"] == ["tag": "washer_cycle", "live_update": true])
    }

    @Test func whatHASentWinsOverWhatTheDeviceReported() {
        var raw = Self.haBody.objectValue!
        raw["live_activity_token"] = "from-ha"
        raw["data"] = ["tag": "washer_cycle", "live_update": true, "event": "start"]
        #expect(RelayAddress.addressed(.object(raw), live: .init(token: "from-device", event: .update)) == .object(raw))
    }

    /// Through HA's notify action: the notify service data, without what HA adds itself.
    @Test func theNotifyDataOfARelayBody() {
        var raw = Self.haBody.objectValue!
        raw["live_activity_token"] = "la"
        raw["data"] = ["tag": "washer_cycle", "live_update": true, "event": "update"]
        #expect(RelayAddress.notifyData(.object(raw)) == [
            "message": "Cycle started", "title": "Washing Machine", "data": ["tag": "washer_cycle", "live_update": true],
        ])
    }

    /// A native `/v1/push` goes out in the shape HA's `mobile_app` would have posted.
    @Test func aNativePushTakesHAsShapeWithTheDevicesRegistration() {
        let message = NotifyMessage(
            title: "Washing Machine", message: "Cycle started",
            data: ["tag": "washer_cycle", "live_update": true, "progress": 900, "progress_max": 3600])
        let body = RelayBody.native(
            message, pushToken: "relay-token-1", registrationInfo: Self.haBody["registration_info"]!.objectValue!,
            acceptedAt: acceptedAt)
        #expect(body.json == Self.haBody)
        #expect(Set(body.json.objectValue!.keys) == ["message", "title", "data", "push_token", "registration_info"])
    }

    @Test func aNativePushWithoutTitleOrRegistrationLeavesThemOut() {
        let body = RelayBody.native(
            NotifyMessage(message: "Door open"), pushToken: nil, registrationInfo: nil, acceptedAt: acceptedAt)
        #expect(body.json == ["message": "Door open"])
        let noMessage = RelayBody.native(
            NotifyMessage(data: ["tag": "t", "live_update": true, "when": 60, "when_relative": true,
                                 "template": ["template": "generic"]]),
            pushToken: "p", registrationInfo: [:], acceptedAt: acceptedAt)
        #expect(noMessage.templateRemoved && noMessage.whenResolved)
        #expect(noMessage.json == [
            "message": "", "push_token": "p", "registration_info": [:],
            "data": ["tag": "t", "live_update": true, "when": 1_700_000_060],
        ])
    }

    // MARK: Edits the pacer makes when it merges

    @Test func aMergedUpdateIsSilentOnlyIfBothWere() {
        let loud: JSONValue = ["message": "1", "data": ["tag": "t", "live_update": true]]
        let silent: JSONValue = ["message": "2", "data": ["tag": "t", "live_update": true, "silent": true]]
        let quiet: JSONValue = ["message": "3", "data": ["tag": "t", "live_update": true, "silent": "true"]]
        #expect(RelayBodyEdit.mergeUpdates(older: loud, newer: silent) == ["message": "2", "data": ["tag": "t", "live_update": true]])
        #expect(RelayBodyEdit.mergeUpdates(older: silent, newer: quiet) == quiet)
        #expect(RelayBodyEdit.mergeUpdates(older: silent, newer: loud) == loud)
    }

    @Test func anUpdateMergedIntoAWaitingStartKeepsTheStaticTitleAndSaysStart() {
        let start: JSONValue = ["title": "Washer", "message": "Started", "data": ["tag": "w", "live_update": true, "event": "start"]]
        let update: JSONValue = ["title": "Other", "message": "Rinsing", "data": ["tag": "w", "live_update": true, "event": "update", "progress": 5]]
        #expect(RelayBodyEdit.mergeIntoStart(start: start, update: update) == [
            "title": "Washer", "message": "Rinsing", "data": ["tag": "w", "live_update": true, "event": "start", "progress": 5],
        ])
    }

    @Test func anEndSupersedingAnUpdateCarriesItsState() {
        let update: JSONValue = [
            "message": "Done", "data": ["tag": "w", "live_update": true, "progress": 100, "progress_max": 100, "silent": true,
                                        "content_state": ["critical_text": "ok"]],
        ]
        let end: JSONValue = ["message": "clear_notification", "data": ["tag": "w", "event": "end", "progress": 99]]
        #expect(RelayBodyEdit.endCarryingState(end: end, superseded: update) == [
            "message": "clear_notification",
            "data": ["tag": "w", "event": "end", "progress": 99, "progress_max": 100,
                     "content_state": ["critical_text": "ok", "message": "Done"]],
        ])
    }

    // MARK: Answers

    @Test func rateLimitsAreReadFromAnyAnswer() {
        let answer: JSONValue = [
            "messageId": "m", "target": "t",
            "rateLimits": ["attempts": 3, "successful": 2, "errors": 1, "total": 3, "maximum": 500, "remaining": 498,
                           "resetsAt": "2023-11-15T00:00:00.000Z"],
        ]
        let limits = RelayRateLimits(answer)
        #expect(limits.remaining == 498)
        #expect(limits.maximum == 500)
        #expect(limits.resetsAt == 1_700_006_400)
        #expect(RelayRateLimits(["rateLimits": ["resetsAt": "2023-11-15T01:00:00+01:00"]]).resetsAt == 1_700_006_400)
        #expect(RelayRateLimits(["message": "x"]) == RelayRateLimits())
        #expect(RelayRateLimits(nil) == RelayRateLimits())
    }

    @Test func changeKindsMapToRelayKinds() {
        #expect(RelayItem.Kind(.start) == .start)
        #expect(RelayItem.Kind(.update) == .update)
        #expect(RelayItem.Kind(.end) == .end)
        #expect(RelayItem.Kind(.notification) == .notification)
        #expect(RelayItem.Kind(.clear) == .notification)
        #expect(RelayItem.Kind(.lifecycle) == nil)
    }

    @Test func commandsWithoutALedgerMapToRelayKinds() {
        let live = LiveUpdate(tag: "t", state: ["message": ""])
        var withEvent = live
        withEvent.event = .update
        #expect(RelayItem.Kind(.liveUpdate(live), activityLive: false) == .start)
        #expect(RelayItem.Kind(.liveUpdate(live), activityLive: true) == .update)
        #expect(RelayItem.Kind(.liveUpdate(withEvent), activityLive: false) == .update)
        withEvent.event = .start
        #expect(RelayItem.Kind(.liveUpdate(withEvent), activityLive: true) == .start)
        #expect(RelayItem.Kind(.end(EndRequest(tag: "t")), activityLive: true) == .end)
        #expect(RelayItem.Kind(.notification(NotifyMessage(message: "m")), activityLive: false) == .notification)
    }
}
