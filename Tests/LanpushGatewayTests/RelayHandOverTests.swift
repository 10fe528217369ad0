import LanpushCore
import LanpushStore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// The hand-over between the LAN and HA's relay: what a device that goes away had not acknowledged drains to the
/// relay, a device that comes back takes its slots back, a 403 stops the path, the outbox survives a restart, and
/// the tokens a client reported travel with its relayed requests.
@Suite struct RelayHandOverTests {
    /// What the phone does not show through the relay path goes there when the device leaves the LAN: an activity
    /// the relay never started (the LAN client showed it) starts on the phone with its current state; one that ended
    /// before it ever showed there is nothing to show; a notification the LAN left unacknowledged goes as it came.
    @Test func whatAGoneDeviceHadNotAcknowledgedDrainsToTheRelayByKind() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        for tag in ["updated", "ended", "seen"] {
            gw.relayBody("tok-phone", title: tag, message: "v1", data: Payload.live(tag))
        }
        s.ack()
        gw.relayBody("tok-phone", message: "v2", data: Payload.live("updated"))
        gw.relayBody("tok-phone", title: "new", message: "v1", data: Payload.live("new"))
        gw.relayBody("tok-phone", title: "ephemeral", message: "v1", data: Payload.live("ephemeral"))
        gw.request(.delete, "/v1/activities/ephemeral", query: [("device", "phone")])  // started and ended unseen
        gw.relayBody("tok-phone", message: "clear_notification", data: ["tag": "ended"])
        gw.relayBody("tok-phone", message: "Door", data: ["lanpush": ["path": "lan"]])
        #expect(gw.relayRequests.isEmpty)
        s.close()
        let byTag = Dictionary(gw.relayRequests.map { ($0.tag ?? "-", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(gw.relayRequests.count == 4)
        #expect(byTag["updated"]?.kind == .start && byTag["updated"]?.body["message"] == "v2")
        #expect(byTag["seen"]?.kind == .start && byTag["seen"]?.body["message"] == "v1")
        #expect(byTag["new"]?.kind == .start && byTag["new"]?.body["title"] == "new")
        #expect(byTag["-"]?.kind == .notification && byTag["-"]?.body["message"] == "Door")
        #expect(byTag["ended"] == nil && byTag["ephemeral"] == nil)
        // Each went once, in the order the device's changes were made.
        #expect(gw.relayRequests.map(\.seq) == gw.relayRequests.map(\.seq).sorted())
    }

    /// The client's own activities — it reported their tokens, so the relay addresses them — get through the relay
    /// only what its LAN session did not acknowledge: an update by the activity's token, an end with `event: end`.
    @Test func aClientsOwnActivitiesGetWhatItsSessionDidNotAcknowledge() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        for tag in ["updated", "ended", "seen"] {
            s.send(["type": "live_activity_token", "tag": .string(tag), "token": .string("la-\(tag)")])
            gw.relayBody("tok-phone", title: tag, message: "v1", data: Payload.live(tag))
        }
        s.ack()
        gw.relayBody("tok-phone", message: "v2", data: Payload.live("updated"))
        gw.relayBody("tok-phone", message: "clear_notification", data: ["tag": "ended"])
        s.close()
        let byTag = Dictionary(gw.relayRequests.map { ($0.tag ?? "-", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(gw.relayRequests.count == 2)
        let update = try #require(byTag["updated"])
        #expect(update.kind == .update && update.body["message"] == "v2")
        #expect(update.body["live_activity_token"] == "la-updated" && update.body["data"]?["event"] == "update")
        let end = try #require(byTag["ended"])
        #expect(end.kind == .end && end.body["message"] == "clear_notification")
        #expect(end.body["live_activity_token"] == "la-ended" && end.body["data"]?["event"] == "end")
        #expect(end.body["data"]?["dismissal_date"] == .number(gw.clock.now.rounded()), "cleared: dismissed at once")
        #expect(byTag["seen"] == nil)
    }

    /// An activity ended through the API has no HA body of its own: what drains to the relay must still end it on
    /// the phone (a `clear_notification` of its tag, as core addresses an end), not repeat the content it started
    /// with — and keep the dismissal the API asked for.
    @Test func anActivityEndedThroughTheAPIDrainsAsAClear() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        s.send(["type": "live_activity_token", "tag": "washer", "token": "la-w"])
        gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer"))
        s.ack()
        #expect(gw.request(.delete, "/v1/activities/washer").status == 200)
        s.close()
        let end = try #require(gw.relayRequests.first)
        #expect(gw.relayRequests.count == 1 && end.kind == .end)
        #expect(end.body["message"] == "clear_notification" && end.body["data"]?["tag"] == "washer")
        #expect(end.body["push_token"] == "tok-phone" && end.body["registration_info"] == Payload.iosInfo)
        #expect(end.body["live_activity_token"] == "la-w" && end.body["data"]?["event"] == "end")
        #expect(end.body["data"]?["dismissal_date"] == .number((gw.clock.now + DismissalPolicy.defaultRetention).rounded()))
    }

    @Test func anActivityEndedThroughTheAPIWhileTheDeviceIsGoneIsEndedThroughTheRelay() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        #expect(gw.relayRequests.map(\.kind) == [.start])
        #expect(gw.request(.delete, "/v1/activities/washer", query: [("dismissal", "immediate")]).status == 200)
        #expect(gw.relayRequests.map(\.kind) == [.start, .end])
        #expect(gw.relayRequests.last?.body["message"] == "clear_notification")
        #expect(gw.relayRequests.last?.body["data"]?["tag"] == "washer")
    }

    /// A phone whose socket froze (it left the Wi-Fi) when HA cleared an activity: the LAN session never acknowledged
    /// the end, and after the ack timeout the relay must still carry it — the dismissed activity may not be forgotten
    /// before the phone has had its end one way or the other.
    @Test func aClearTheLANNeverAcknowledgedStillReachesTheRelay() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        s.send(["type": "live_activity_token", "tag": "washer", "token": "la-w"])
        gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer"))
        s.ack()
        gw.relayBody("tok-phone", message: "clear_notification", data: ["tag": "washer"])
        #expect(s.frames("end").count == 1 && gw.relayRequests.isEmpty)
        gw.advance(by: 10.25)
        #expect(s.closeCode == 4002)
        gw.completeCloses()
        #expect(gw.relayed("washer").map(\.kind) == [.end])
        #expect(gw.relayed("washer").first?.body["message"] == "clear_notification")
        // Once the relay carried it, it is forgotten like any dismissed activity.
        gw.advance(by: 0.25)
        #expect(gw.core.directory["phone"]?.ledger.activities.isEmpty == true)
        #expect(gw.request(.get, "/v1/activities/washer").status == 404)
    }

    @Test func aClearTheLANAcknowledgedIsForgottenAndNeverRelayed() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer"))
        gw.relayBody("tok-phone", message: "clear_notification", data: ["tag": "washer"])
        gw.advance(by: 0.25)
        #expect(gw.core.directory["phone"]?.ledger.activities["washer"]?.phase == .dismissed, "kept until acknowledged")
        s.ack()
        gw.advance(by: 0.25)
        #expect(gw.core.directory["phone"]?.ledger.activities.isEmpty == true)
        s.close()
        #expect(gw.relayRequests.isEmpty)
    }

    @Test func aDismissedActivityOfADeviceWithoutRelayIsForgottenAtOnce() throws {
        let gw = try TestGateway()
        let s = gw.connect("tablet")
        gw.push(Payload.liveUpdate(["tablet"], tag: "oven", message: "Baking"))
        gw.push(Payload.push(["tablet"], message: "clear_notification", data: ["tag": "oven"]))
        gw.advance(by: 0.25)
        #expect(s.events.count == 3 && gw.core.directory["tablet"]?.ledger.activities.isEmpty == true)
    }

    /// An authenticated socket reads nothing until it subscribes. A client stuck after its auth (whose socket library
    /// still answers pings) must not hold its device's traffic on the LAN, where nothing would ever read it: until a
    /// session of the device subscribes, updates and notifications keep going to the relay.
    @Test func aSessionThatNeverSubscribesLeavesTheDeviceOnTheRelay() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        for p in [0, 5] {
            gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "\(p)%", ["progress": .number(Double(p)), "progress_max": 100]))
        }
        #expect(gw.device("phone")?["relay"]?["queued"] == 1)
        let stuck = gw.open()
        stuck.send(["type": "auth", "token": .string(TestGateway.token(for: "phone"))])
        #expect(stuck.types.last == "auth_ok")
        let phone = try #require(gw.device("phone"))
        #expect(phone["connected"] == false && phone["sessions"] == 1 && phone["path"] == "relay")
        #expect(phone["relay"]?["queued"] == 1, "an authenticated session alone takes nothing back")
        gw.relayBody("tok-phone", message: "Door")
        #expect(gw.relayRequests.map(\.kind) == [.start, .notification])
        gw.advance(by: 15)
        #expect(gw.relayRequests.map(\.body["message"]) == ["0%", "Door", "5%"])
        stuck.close()
        #expect(gw.relayRequests.count == 3, "its close hands nothing over again")
        // A subscribe is what brings the device onto the LAN.
        let s = gw.open()
        s.send(["type": "auth", "token": .string(TestGateway.token(for: "phone"))])
        s.send(["type": "subscribe"])
        #expect(gw.device("phone")?["connected"] == true && gw.device("phone")?["path"] == "lan")
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "10%", ["progress": 10, "progress_max": 100]))
        gw.advance(by: 29)
        #expect(gw.relayRequests.count == 3)
        s.read()
        #expect(s.state("ev")?["progress"] == 10)
        gw.advance(by: 1.25)
        #expect(gw.relayRequests.map(\.kind) == [.start, .notification, .update, .end], "taken back: ended on the phone")
    }

    /// The app's push token was rotated while relay items waited (an update held by the interval, bodies HA sent
    /// before): they go out to the token the device registered since, at the URL it registered, as the phone's app
    /// would now be reached — not to a token its push service no longer takes.
    @Test func whatWaitsForTheRelayGoesToTheTokenRegisteredSince() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        gw.relayBody("tok-phone", title: "EV", message: "0%", data: Payload.live("ev"))
        gw.relayBody("tok-phone", message: "5%", data: Payload.live("ev"))
        #expect(gw.relayRequests.count == 1 && gw.device("phone")?["relay"]?["queued"] == 1)
        // A client that registers (and never subscribes) takes nothing back.
        let rotated = gw.open()
        rotated.send(["type": "auth", "token": .string(TestGateway.token(for: "phone"))])
        rotated.register("tok-phone-2", pushURL: "https://relay.example/push-2")
        rotated.close()
        gw.advance(by: 15)
        let update = try #require(gw.relayRequests.last)
        #expect(gw.relayRequests.count == 2 && update.kind == .update && update.body["message"] == "5%")
        #expect(update.body["push_token"] == "tok-phone-2" && update.url == "https://relay.example/push-2")
        #expect(update.body["registration_info"] == Payload.iosInfo)
        // A drain of the bodies HA sent before the rotation: addressed as now too.
        gw.relayBody("tok-phone-2", message: "10%", data: Payload.live("ev"))
        let visit = gw.connect("phone")
        visit.register("tok-phone-3")
        visit.close()
        gw.advance(by: 15)
        #expect(gw.relayRequests.last?.body["message"] == "10%" && gw.relayRequests.last?.body["push_token"] == "tok-phone-3")
        #expect(gw.relayRequests.allSatisfy { $0.body["push_token"] != "tok-phone" || $0.body["message"] == "0%" })
    }

    @Test func startsBeyondTheHourlyBudgetWaitAndAreNotDropped() throws {
        var config = TestGateway.defaultConfig()
        config.relay.startsPerHour = 2
        let gw = try TestGateway(config: config)
        gw.goneDevice()
        for tag in ["a", "b", "c"] { gw.push(Payload.liveUpdate(["phone"], tag: tag, message: "go")) }
        #expect(gw.relayRequests.map(\.tag) == ["a", "b"])
        #expect(gw.device("phone")?["relay"]?["queued"] == 1)
        // Ends are never held by the budget.
        gw.push(Payload.push(["phone"], message: "clear_notification", data: ["tag": "a"]))
        #expect(gw.relayRequests.map(\.kind) == [.start, .start, .end])
        gw.advance(by: 3600, tick: 30)
        #expect(gw.relayRequests.map(\.tag) == ["a", "b", "a", "c"])
        #expect(gw.device("phone")?["relay"]?["queued"] == 0)
    }

    @Test func a403MarksTheTokenInvalidUntilTheClientRegistersAgain() throws {
        let gw = try TestGateway()
        gw.relayAnswer = { _ in (403, ["errorMessage": "invalid token"]) }
        gw.goneDevice()
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        let phone = try #require(gw.device("phone"))
        #expect(phone["relay"]?["token_invalid"] == true && phone["path"] == "none")
        gw.push(Payload.liveUpdate(["phone"], tag: "dryer", message: "Drying"))
        gw.advance(by: 30)
        #expect(gw.relayRequests.count == 1)
        // A new registration makes the path usable again.
        gw.relayAnswer = { _ in (201, TestGateway.relayOK) }
        gw.goneDevice(pushToken: "tok-phone-2")
        #expect(gw.device("phone")?["path"] == "relay" && gw.device("phone")?["relay"]?["token_invalid"] == false)
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking"))
        #expect(gw.relayed("oven").map(\.kind) == [.start])
        #expect(gw.relayed("oven").first?.body["push_token"] == "tok-phone-2")
    }

    /// The relay path delivered a start while the device was away; a client that then visits (a snapshot, no
    /// events, so no ack) and leaves again must not make the relay start it a second time.
    @Test func aVisitWithoutAcksDoesNotMakeTheRelayRepeatWhatItDelivered() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        gw.relayBody("tok-phone", message: "Door", data: ["lanpush": ["path": "lan"]])
        #expect(gw.relayRequests.map(\.kind) == [.start, .notification])
        let visit = gw.connect("phone")
        #expect(visit.types.suffix(3) == ["notification", "snapshot", "synced"])
        visit.close()
        #expect(gw.relayRequests.count == 2)
        // What the relay had not delivered still goes: an update held by the interval, cancelled by the visit.
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Rinsing"))
        #expect(gw.relayRequests.count == 2)
        gw.connect("phone").close()
        gw.advance(by: 15)
        #expect(gw.relayRequests.map(\.kind) == [.start, .notification, .update])
        #expect(gw.relayRequests.last?.body["message"] == "Rinsing")
    }

    @Test func theOutboxIsJournaledAndRestoredAfterARestart() throws {
        let gw = try TestGateway(store: true)
        gw.holdRelayAnswers = true
        gw.goneDevice()
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", title: "Washer", message: "Washing"))
        gw.push(Payload.push(["phone"], message: "Door", data: ["lanpush": ["path": "relay"]]))
        #expect(gw.relayRequests.count == 2)
        let outbox = try gw.storedState().outbox
        #expect(outbox.map(\.kind).sorted() == ["notification", "start"])
        #expect(outbox.first { $0.kind == "start" }?.body["title"] == "Washer")
        // Never answered (a crash in flight): after the restart both go again, at least once.
        try gw.restart(clean: false)
        gw.holdRelayAnswers = false
        gw.advance(by: 0.25)
        #expect(gw.relayRequests.count == 4)
        #expect(Set(gw.relayRequests.suffix(2).map(\.kind)) == [.start, .notification])
        // Answered: the outbox is empty, and stays so across another restart.
        #expect(try gw.storedState().outbox.isEmpty)
        try gw.restart()
        gw.advance(by: 1)
        #expect(gw.relayRequests.count == 4)
    }

    /// Addressed as HA core addresses its own bodies (home-assistant/core `prepare_live_activity_remote_push`): a
    /// start by the push-to-start token (top-level `live_activity_token`, `data.event: start`) — an activity the
    /// client already shows (its token reported) is updated instead — and an update by the activity's own token.
    @Test func aRelayedStartCarriesThePushToStartTokenUnlessTheTagHasAnActivityToken() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        s.send(["type": "push_to_start_token", "token": "pts-1"])
        s.send(["type": "live_activity_token", "tag": "ev", "token": "la-ev"])
        s.close()
        gw.relayBody("tok-phone", title: "Oven", message: "Preheating", data: Payload.live("oven"))
        gw.relayBody("tok-phone", title: "EV", message: "Charging", data: Payload.live("ev"))
        gw.push(Payload.liveUpdate(["phone"], tag: "dryer", message: "Drying"))
        let oven = try #require(gw.relayed("oven").first)
        #expect(oven.body["live_activity_token"] == "pts-1" && oven.body["data"]?["event"] == "start")
        #expect(oven.body["push_to_start_token"] == nil)
        let ev = try #require(gw.relayed("ev").first)
        #expect(ev.body["live_activity_token"] == "la-ev" && ev.body["data"]?["event"] == "update")
        let dryer = try #require(gw.relayed("dryer").first)
        #expect(dryer.body["live_activity_token"] == "pts-1" && dryer.body["data"]?["event"] == "start")
        // An update is addressed by the activity token, never by the push-to-start token.
        gw.advance(by: 15)
        gw.relayBody("tok-phone", message: "80%", data: Payload.live("ev"))
        #expect(gw.relayed("ev").last?.kind == .update && gw.relayed("ev").last?.body["live_activity_token"] == "la-ev")
        // A device without tokens gets no event: the relay sends an ordinary notification, as for core's bodies.
        gw.goneDevice("tablet", pushToken: "tok-tablet")
        gw.push(Payload.liveUpdate(["tablet"], tag: "kettle", message: "Boiling"))
        let kettle = try #require(gw.relayed("kettle").first)
        #expect(kettle.body["live_activity_token"] == nil && kettle.body["data"]?["event"] == nil)
    }

    @Test func haSLiveActivityTokenWinsOverTheReportedOne() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        s.send(["type": "live_activity_token", "tag": "ev", "token": "la-reported"])
        s.close()
        gw.relayBody("tok-phone", title: "EV", message: "Charging", data: Payload.live("ev"), extra: ["live_activity_token": "la-from-ha"])
        #expect(gw.relayed("ev").first?.body["live_activity_token"] == "la-from-ha")
    }
}
