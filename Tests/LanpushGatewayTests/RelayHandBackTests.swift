import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// The hand-back: a device whose LAN session came back takes its activities back, and what the relay path started
/// on the phone is ended there once the session has stayed `relay.hand_back_after` — addressed by the activity's own
/// token when there is one, never the client's own activity.
@Suite struct RelayHandBackTests {
    @Test func aDeviceComingBackCancelsWhatWaitsAndTakesTheCurrentState() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        for p in [0, 5, 10, 15] {
            gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "\(p)%", ["progress": .number(Double(p)), "progress_max": 100]))
        }
        #expect(gw.relayRequests.map(\.body["message"]) == ["0%"])  // the updates wait for the 15 s interval
        #expect(gw.device("phone")?["relay"]?["queued"] == 1)
        let back = gw.connect("phone")
        #expect(gw.device("phone")?["relay"]?["queued"] == 0)
        back.read()
        #expect(back.state("ev")?["progress"] == 15)
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "20%", ["progress": 20, "progress_max": 100]))
        gw.advance(by: 29)
        back.ack()
        #expect(gw.relayRequests.count == 1, "what the LAN carries never goes to the relay too")
        // Once the session stayed `relay.hand_back_after`, the activity the relay started on the phone is ended there
        // (dismissed at once): it would stay on the Lock Screen frozen at 0 % beside the LAN client's.
        gw.advance(by: 1.25)
        let end = try #require(gw.relayRequests.last)
        #expect(gw.relayRequests.count == 2 && end.kind == .end && end.tag == "ev")
        #expect(end.body["message"] == "clear_notification" && end.body["data"]?["tag"] == "ev")
        #expect(gw.device("phone")?["relay"]?["shown"] == nil)
    }

    /// A session that drops before `relay.hand_back_after` (a phone at the edge of the Wi-Fi) leaves what the relay
    /// shows running: nothing is ended and started again, the relay path goes on updating it.
    @Test func aBriefVisitLeavesTheRelaysActivityRunning() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "0%"))
        let visit = gw.connect("phone")
        gw.advance(by: 10)
        visit.close()
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "50%"))
        gw.advance(by: 40)
        #expect(gw.relayRequests.map(\.kind) == [.start, .update])
        #expect(gw.relayRequests.last?.body["message"] == "50%")
    }

    /// The end the hand-back sends is addressed by the activity's own token when HA gave one (with an update), and
    /// never by the push-to-start token HA gave with the start: the relay would make that an update (its default
    /// event) of nothing. Without the activity's token it is the companion app's `clear_notification` command, which
    /// ends the activity with the tag.
    @Test(arguments: [
        (event: "start", token: "pts-from-ha", endsBy: nil as String?),
        (event: "update", token: "la-from-ha", endsBy: "la-from-ha" as String?),
    ])
    func theHandBackEndIsAddressedByTheActivitysOwnTokenOnly(event: String, token: String, endsBy: String?) throws {
        let gw = try TestGateway()
        gw.goneDevice()
        gw.relayBody("tok-phone", title: "Washer", message: "Washing",
                     data: ["tag": "washer", "live_update": true, "event": .string(event)],
                     extra: ["live_activity_token": .string(token)])
        #expect(gw.relayed("washer").first?.body["live_activity_token"] == .string(token))
        let back = gw.connect("phone")
        back.read()
        back.ack()
        gw.advance(by: 31)
        let end = try #require(gw.relayed("washer").last)
        #expect(end.kind == .end && end.body["message"] == "clear_notification")
        #expect(end.body["live_activity_token"] == endsBy.map(JSONValue.string))
        #expect(end.body["data"]?["event"] == (endsBy == nil ? nil : "end"))
    }

    /// An activity that is the LAN client's own — it reported the activity's token, before the relay updated it or
    /// once back — is left to the client at the hand-back: ending it would take it off the client's own Lock Screen.
    @Test(arguments: [true, false])
    func theHandBackLeavesTheClientsOwnActivityAlone(reportedBefore: Bool) throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        s.send(["type": "push_to_start_token", "token": "pts-1"])
        if reportedBefore { s.send(["type": "live_activity_token", "tag": "ev", "token": "la-ev"]) }
        s.close()
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "Charging"))
        let sent = try #require(gw.relayed("ev").first)
        #expect(sent.body["live_activity_token"] == (reportedBefore ? "la-ev" : "pts-1"))
        let back = gw.connect("phone")
        if !reportedBefore { back.send(["type": "live_activity_token", "tag": "ev", "token": "la-ev"]) }
        back.read()
        back.ack()
        gw.advance(by: 31)
        #expect(gw.relayed("ev").count == 1, "nothing ended: the client shows it")
        #expect(gw.device("phone")?["relay"]?["shown"] == nil)
    }
}
