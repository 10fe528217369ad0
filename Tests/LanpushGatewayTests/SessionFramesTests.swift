import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// The frames a client sends after auth — register, the relay tokens, dismissed, ping — what a malformed frame
/// gets, and the session limit.
@Suite struct SessionFramesTests {
    @Test func registerTiesThePushTokenToTheDevice() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        #expect(s.frames.last == ["type": "registered", "push_token": "tok-phone"])
        let phone = try #require(gw.device("phone"))
        #expect(phone["registration"] == ["push_token": "tok-phone", "push_url": .string(Payload.pushURL)])
        // HA's relay body for that token now reaches the session.
        #expect(gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer")).status == 201)
        #expect(s.frames("start").count == 1)
    }

    @Test(arguments: [
        (#"{"type":"register"}"#, "push_token"),
        (#"{"type":"register","push_token":""}"#, "push_token"),
        (#"{"type":"register","push_token":"t","push_url":5}"#, "push_url"),
        (#"{"type":"live_activity_token","tag":"a"}"#, "token"),
        (#"{"type":"live_activity_token","token":"x"}"#, "tag"),
        (#"{"type":"push_to_start_token"}"#, "token"),
        (#"{"type":"dismissed"}"#, "tag"),
        (#"{"type":"auth","token":"x"}"#, "already authenticated"),
        (#"{"type":"nonsense"}"#, "unknown message type 'nonsense'"),
        (#"{"type":5}"#, "'type'"),
        (#"{"seq":1}"#, "'type'"),
        (#"[1,2]"#, "JSON object"),
        (#"{"type":"ack""#, "invalid JSON"),
        (#"{"type":"ack","type":"ping"}"#, "invalid JSON"),  // a repeated key is no valid frame
    ])
    func aMalformedFrameGetsAnErrorFrameAndTheSessionCarriesOn(frame: String, says: String) throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.send(text: frame)
        #expect(s.errors.count == 1)
        #expect(s.errors.first?.contains(says) == true, "\(s.errors)")
        #expect(s.closeCode == nil)
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking"))
        #expect(s.frames("start").count == 1)
    }

    @Test func anObserverCannotRegisterAndPingIsAnsweredForEveryone() throws {
        let gw = try TestGateway()
        let o = gw.observe()
        o.register("tok")
        #expect(o.errors == ["only devices register"])
        o.send(["type": "ping"])
        #expect(o.frames.last == ["type": "pong"])
        let s = gw.connect("phone")
        s.send(["type": "ping"])
        #expect(s.frames.last == ["type": "pong"])
        s.send(["type": "subscribe"])
        #expect(s.errors == ["already subscribed"])
    }

    @Test func reportedTokensAreKeptAndShown() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.send(["type": "live_activity_token", "tag": "washer", "token": "la-1", "expires_at": 1_900_000_000])
        s.send(["type": "live_activity_token", "tag": "ev", "token": "la-2"])
        s.send(["type": "push_to_start_token", "token": "pts-1"])
        #expect(s.errors.isEmpty)
        let phone = try #require(gw.device("phone"))
        #expect(phone["live_activity_tokens"] == 2 && phone["push_to_start_token"] == true)
        #expect(gw.device("tablet")?["live_activity_tokens"] == nil)
        let record = try #require(gw.core.directory["phone"])
        #expect(record.liveActivityTokens["washer"] == ["token": "la-1", "expires_at": 1_900_000_000])
        #expect(record.pushToStartToken == "pts-1")
    }

    @Test func aDismissalByTheUserReachesEverySessionOfTheDevice() throws {
        let gw = try TestGateway()
        let a = gw.connect("phone")
        let b = gw.connect("phone")
        let o = gw.observe("phone")
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        a.read()
        b.read()
        #expect(a.activities["washer"] != nil && b.activities["washer"] != nil)
        b.send(["type": "dismissed", "tag": "washer"])
        for s in [a, b, o] {
            #expect(s.frames.last?["tag"] == "washer" && s.frames.last?["phase"] == "dismissed")
        }
        a.read()
        b.read()
        #expect(a.activities["washer"] == nil && b.activities["washer"] == nil)
        #expect(gw.request(.get, "/v1/activities/washer").status == 404)
        // A second dismissal, or one of an unknown tag, changes nothing.
        let frames = a.frames.count
        b.send(["type": "dismissed", "tag": "washer"])
        b.send(["type": "dismissed", "tag": "nothing"])
        #expect(a.frames.count == frames && b.errors.isEmpty)
    }

    /// `limits.max_sessions` counts sessions that authenticated: one past it is closed 1013 at its `auth`.
    @Test func pastMaxSessionsANewSessionIsClosed1013() throws {
        var config = TestGateway.defaultConfig()
        config.limits.maxSessions = 2
        let gw = try TestGateway(config: config)
        let a = gw.connect("phone")
        let b = gw.observe()
        let c = gw.open()
        #expect(c.types == ["auth_required"] && c.closeCode == nil)
        c.send(["type": "auth", "token": .string(TestGateway.token(for: "tablet"))])
        #expect(c.types == ["auth_required", "error"] && c.closeCode == 1013)
        #expect(c.frames("error").first?["rule"] == "max_sessions")
        #expect(a.closeCode == nil && b.closeCode == nil)
        // Once one goes, a new session is taken again.
        gw.completeCloses()
        a.close()
        let d = gw.connect("tablet")
        #expect(d.closeCode == nil && d.types.last == "synced")
    }

    @Test func aClientFrameAfterTheGatewayAskedToCloseIsIgnored() throws {
        let gw = try TestGateway()
        let s = gw.open()
        s.send(["type": "auth", "token": "wrong"])
        #expect(s.closeCode == 4001)
        s.send(["type": "auth", "token": .string(TestGateway.token(for: "phone"))])
        #expect(s.types == ["auth_required", "auth_invalid"])
        #expect(gw.device("phone")?["connected"] == false)
    }
}
