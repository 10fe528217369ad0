import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// lanpush.v1 from a client's side (docs/PROTOCOL.md): the handshake, its timeouts and refusals, observers,
/// the start of delivery (snapshot, replay) and what malformed frames get. Every session is a recording transport
/// and the clock is manual, so the 10 s timeouts are exact.
@Suite struct SessionProtocolTests {
    @Test func theServerSpeaksFirstWithAuthRequired() throws {
        let gw = try TestGateway()
        let s = gw.open()
        #expect(s.frames == [["type": "auth_required", "version": "lanpush.v1"]])
        #expect(s.closeCode == nil)
    }

    @Test func aDeviceTokenIsAnsweredWithItsEpochAndSeq() throws {
        let gw = try TestGateway()
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        let s = gw.open()
        s.send(["type": "auth", "token": .string(TestGateway.token(for: "phone"))])
        let ok = try #require(s.frames.last)
        #expect(ok["type"] == "auth_ok" && ok["device_id"] == "phone" && ok["version"] == "lanpush.v1")
        #expect(ok["seq"] == 1)
        #expect(ok["epoch"]?.stringValue == gw.device("phone")?["epoch"]?.stringValue)
        // Authenticated, not yet subscribed: a session, but nothing it would read, so not on the LAN yet.
        #expect(gw.device("phone")?["connected"] == false && gw.device("phone")?["sessions"] == 1)
        s.send(["type": "subscribe"])
        #expect(gw.device("phone")?["connected"] == true && gw.device("phone")?["sessions"] == 1)
    }

    @Test(arguments: [
        #"{"type":"auth","token":"device-token-nobody-0123456789"}"#,
        #"{"type":"auth"}"#,
        #"{"type":"auth","token":""}"#,
        #"{"type":"subscribe"}"#,  // anything but auth first
        #"{"type":"ack","seq":0}"#,
    ])
    func aWrongTokenOrAnotherFirstFrameIsClosed4001(frame: String) throws {
        let gw = try TestGateway()
        let s = gw.open()
        s.send(text: frame)
        #expect(s.types == ["auth_required", "auth_invalid"])
        #expect(s.closeCode == 4001)
        gw.completeCloses()
        #expect(gw.device("phone")?["connected"] == false)
    }

    @Test func noAuthWithinTenSecondsIsClosed4001() throws {
        let gw = try TestGateway()
        let s = gw.open()
        gw.advance(by: 10)
        #expect(s.closeCode == nil)
        gw.advance(by: 0.25)
        #expect(s.closeCode == 4001)
        // An authenticated session is never timed out for auth.
        let d = gw.connect("phone")
        gw.advance(by: 60)
        #expect(d.closeCode == nil)
    }

    @Test(arguments: [TestGateway.adminToken, TestGateway.viewerToken])
    func observersAuthenticateWithTheAdminOrViewerToken(token: String) throws {
        let gw = try TestGateway()
        let o = gw.observe(token: token)
        #expect(o.frames.dropFirst().first == ["type": "auth_ok", "role": "observer", "version": "lanpush.v1"])
        #expect(o.closeCode == nil)
        // It sees every device, each frame naming its device.
        gw.push(Payload.liveUpdate(["phone", "tablet"], tag: "oven", message: "Preheating"))
        #expect(Set(o.frames("start").compactMap { $0["device_id"]?.stringValue }) == ["phone", "tablet"])
    }

    @Test(arguments: [
        (TestGateway.adminToken, "ghost"),  // a scope naming no device
        (TestGateway.token(for: "phone"), nil),  // a device token is no observer token
        ("not-a-token", nil),
    ] as [(String, String?)])
    func anObserverIsRefusedAnUnknownScopeOrAToken(token: String, scope: String?) throws {
        let gw = try TestGateway()
        let o = gw.observe(scope, token: token)
        #expect(o.types == ["auth_required", "auth_invalid"])
        #expect(o.closeCode == 4001)
    }

    @Test func anObserverOfOneDeviceSeesOnlyThatDevice() throws {
        let gw = try TestGateway()
        let o = gw.observe("tablet")
        gw.push(Payload.liveUpdate(["phone"], tag: "a", message: "x"))
        gw.push(Payload.liveUpdate(["tablet"], tag: "b", message: "y"))
        #expect(o.frames("start").map { $0["tag"] } == ["b"])
        #expect(o.frames("start").first?["device_id"] == "tablet")
    }

    @Test func observersNeverMakeADeviceConnectedNorHoldBackItsRelay() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        let o = gw.observe()
        let watchOne = gw.observe("phone", token: TestGateway.viewerToken)
        let phone = try #require(gw.device("phone"))
        #expect(phone["connected"] == false && phone["sessions"] == 0 && phone["path"] == "relay")
        gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer"))
        // The relay got it although two observers watch the device, and they saw it too.
        #expect(gw.relayed("washer").map(\.kind) == [.start])
        #expect(o.frames("start").count == 1 && watchOne.frames("start").count == 1)
        // Observers never ack; an observer's ack is an error, not a close, and no ack timeout applies.
        o.send(["type": "ack", "seq": 1])
        #expect(o.errors == ["observers do not ack"])
        gw.advance(by: 30)
        #expect(o.closeCode == nil && watchOne.closeCode == nil)
    }

    @Test func observersAreToldWhenADevicesSessionsChange() throws {
        let gw = try TestGateway()
        let o = gw.observe()
        let s = gw.connect("phone")
        let joined = try #require(o.frames("device").last)
        #expect(joined["device_id"] == "phone" && joined["connected"] == true && joined["sessions"] == 1)
        s.close()
        let left = try #require(o.frames("device").last)
        #expect(left["connected"] == false && left["sessions"] == 0 && left["path"] == "none")
    }

    @Test func subscribeGivesASnapshotThenSynced() throws {
        let gw = try TestGateway()
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing", ["progress": 10, "progress_max": 100]))
        gw.push(Payload.push(["phone"], title: "Door", message: "Front door opened"))
        let s = gw.connect("phone")
        #expect(s.types == ["auth_required", "auth_ok", "notification", "snapshot", "synced"])
        let snapshot = try #require(s.frames("snapshot").first)
        #expect(snapshot["seq"] == 2 && snapshot["epoch"] == s.frames[1]["epoch"])
        let washer = try #require(snapshot["activities"]?.arrayValue?.first)
        #expect(washer["tag"] == "washer" && washer["phase"] == "active")
        #expect(washer["state"] == ["message": "Washing", "title": "Washer", "progress": 10, "progress_max": 100])
        #expect(washer["attributes"]?["title"] == "Washer")
        #expect(s.frames("synced").first?["seq"] == 2)
    }

    @Test func aResumeInTheSameEpochIsAReplayOfTheDifference() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        for p in [10, 20] {
            gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "\(p)%", ["progress": .number(Double(p)), "progress_max": 100]))
        }
        s.ack()
        let (epoch, seq) = (try #require(s.epoch), s.seq)
        s.close()
        // Missed while away: two updates of ev, a second activity, a notification, a dropped field.
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "30%", ["progress": 30, "progress_max": 100]))
        gw.push(Payload.liveUpdate(["phone"], tag: "dryer", title: "Dryer", message: "Drying"))
        gw.push(Payload.push(["phone"], message: "Door"))
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "40%", ["progress": 40]))
        let r = gw.reconnect(s)
        #expect(r.frames("replay") == [["type": "replay", "from": .number(Double(seq)), "epoch": .string(epoch)]])
        // One merged update of ev (its newest change), the dryer's start, the notification; then synced.
        #expect(r.types == ["auth_required", "auth_ok", "replay", "start", "notification", "update", "synced"])
        let update = try #require(r.frames("update").first)
        #expect(update["patch"] == ["message": "40%", "progress": 40, "progress_max": nil])
        #expect(update["seq"] == 6)
        #expect(r.frames("synced").first?["seq"] == 6)
        #expect(r.frames("start").first?["state"] == ["message": "Drying", "title": "Dryer"])
        // What it held plus the replay is exactly what a client starting afresh gets from a snapshot.
        r.read()
        let fresh = gw.connect("phone")
        fresh.read()
        #expect(r.activities == fresh.activities && r.state("ev") == ["message": "40%", "title": "Washer", "progress": 40])
        #expect(r.notifications.map { $0["message"] } == ["Door"] && fresh.notifications.map { $0["message"] } == ["Door"])
    }

    @Test func aResumeFromAnotherEpochGetsASnapshot() throws {
        let gw = try TestGateway()
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "Charging"))
        gw.push(Payload.liveUpdate(["phone"], tag: "dryer", message: "Drying"))
        let r = gw.connect("phone", resume: ("another-epoch", 1))
        #expect(r.types == ["auth_required", "auth_ok", "snapshot", "synced"])
        r.read()
        #expect(r.state("ev") == ["message": "Charging", "title": "Washer"] && r.state("dryer") == ["message": "Drying", "title": "Washer"])
        // So does a resume from a seq the history cannot serve (ahead of the device).
        let ahead = gw.connect("phone", resume: (try #require(r.epoch), 99))
        #expect(ahead.types == ["auth_required", "auth_ok", "snapshot", "synced"])
    }
}
