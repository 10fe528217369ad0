import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// The one way in: de-duplication by `hass_confirm_id` across doors, push_tokens no client registered (proxied to
/// the upstream relay), the targets of `/v1/push`, and Android's relay pacing.
@Suite struct IngestTests {
    static let doorbell: JSONValue = ["group": "doors", "lanpush": ["path": "lan"]]

    @Test func aRepeatedConfirmIdWithinSixtySecondsIsNotAppliedTwice() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        let extra: [String: JSONValue] = ["hass_confirm_id": "c-1"]
        #expect(gw.relayBody("tok-phone", message: "Ding", data: Self.doorbell, extra: extra).status == 201)
        s.ack()
        gw.advance(by: 59.75)
        let again = gw.relayBody("tok-phone", message: "Ding", data: Self.doorbell, extra: extra)
        #expect(again.status == 201 && again.json["messageId"] != nil)
        #expect(s.frames("notification").count == 1)
        #expect(gw.device("phone")?["seq"] == 1)
        // Another id is another notification; the same id a minute later is a new one too.
        gw.relayBody("tok-phone", message: "Ding", data: Self.doorbell, extra: ["hass_confirm_id": "c-2"])
        gw.advance(by: 0.25)
        gw.relayBody("tok-phone", message: "Ding", data: Self.doorbell, extra: extra)
        #expect(s.frames("notification").count == 3 && s.closeCode == nil)
    }

    /// A request refused for want of relay credentials did nothing: HA's re-post of the same id, once the client has
    /// registered good ones, is carried, not answered 201 as a duplicate of something never done.
    @Test func aRefusedRequestsConfirmIdIsNotADuplicateLater() throws {
        let gw = try TestGateway()
        gw.relayAnswer = { _ in (403, ["errorMessage": "invalid token"]) }
        gw.goneDevice()
        gw.push(Payload.push(["phone"], message: "Door"))
        #expect(gw.device("phone")?["relay"]?["token_invalid"] == true)
        gw.relayAnswer = { _ in (201, TestGateway.relayOK) }
        let extra: [String: JSONValue] = ["hass_confirm_id": "c-7"]
        let refused = gw.relayBody("tok-phone", message: "request_location_update", extra: extra)
        #expect(refused.status == 202 && refused.json["warnings"]?.arrayValue?.first?["rule"] == "relay_credentials")
        #expect(gw.relayRequests.count == 1, "nothing was done")
        gw.goneDevice()  // the client registers again: the token is good again
        gw.advance(by: 10)
        let again = gw.relayBody("tok-phone", message: "request_location_update", extra: extra)
        #expect(again.status == 202)
        #expect(gw.relayRequests.last?.body["message"] == "request_location_update")
    }

    /// HA waits 10 s for a confirm on its local push channel, then posts the same event to the push_url: it arrives
    /// once.
    @Test func anEventOfTheHAChannelIsNotAppliedAgainThroughThePushURLFallback() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        gw.core.directory.route(pushToken: "ha-token-phone", to: "phone")
        let event: [String: JSONValue] = [
            "message": "Washing", "title": "Washer", "data": Payload.live("washer"), "hass_confirm_id": "ha-1",
        ]
        let request = try IngestRequest.homeAssistant(event, device: "phone", webhookId: "hook-ha", now: gw.clock.now)
        #expect(gw.core.ingest.submit(request) == .routed([(target: "phone", routed: Ingest.Routed(lan: .delivered, relay: false))]))
        gw.turn()
        #expect(s.frames("start").first?["attributes"]?["webhook_id"] == "hook-ha")
        s.ack()
        gw.advance(by: 10)
        let fallback = gw.relayBody("ha-token-phone", title: "Washer", message: "Washing", data: Payload.live("washer"),
                                    extra: ["hass_confirm_id": "ha-1"])
        #expect(fallback.status == 201)
        #expect(s.events.count == 1)
        // Without a confirm id the fallback route reaches the device like any relay body.
        gw.relayBody("ha-token-phone", message: "Spinning", data: Payload.live("washer"))
        #expect(s.frames("update").first?["patch"] == ["message": "Spinning", "title": nil])
    }

    @Test func anUnknownPushTokenIsProxiedToTheUpstreamPerToken() throws {
        let gw = try TestGateway(config: .proxying())
        let data = Payload.live("w", ["when": 60, "when_relative": true, "template": ["template": "generic", "progress": 0.5]])
        let r = gw.relayBody("stranger", title: "Washer", message: "Cycle started", data: data, path: "/api/sendPush/android/v1")
        #expect(r.status == 202 && r.json["target"] == "stranger")
        let start = try #require(gw.relayRequests.first)
        #expect(start.url == "http://relay.invalid/api/sendPush/android/v1")
        #expect(start.device == "push_token:stranger" && start.kind == .start && start.tag == "w")
        #expect(start.body["push_token"] == "stranger")
        #expect(start.body["data"]?["template"] == nil, "templates are LAN-only")
        #expect(start.body["data"]?["when_relative"] == nil && start.body["data"]?["when"] == .number(gw.clock.now + 60))
        // The next live update of the tag is an update, its clear an end; a plain notification is a notification.
        gw.advance(by: 15)
        gw.relayBody("stranger", message: "Rinsing", data: Payload.live("w"), path: "/api/sendPush/android/v1")
        gw.relayBody("stranger", message: "clear_notification", data: ["tag": "w"], path: "/api/sendPush/android/v1")
        gw.relayBody("stranger", message: "Door", path: "/api/sendPushNotification")
        #expect(gw.relayRequests.map(\.kind) == [.start, .update, .end, .notification])
        #expect(gw.relayRequests.last?.url == "http://relay.invalid/api/sendPushNotification")
        // Nothing of it touched a device.
        #expect(gw.device("phone")?["seq"] == 0 && gw.device("tablet")?["seq"] == 0)
    }

    /// One request to many devices: each relay body is built from its own device (the last body is reused only for
    /// a device with the same relay registration and Live Activity token: the LAN devices without one).
    @Test func eachDeviceOfOneRequestGetsARelayBodyOfItsOwn() throws {
        let gw = try TestGateway(config: TestGateway.defaultConfig(devices: ["phone", "hall", "tablet", "den"]))
        gw.goneDevice("phone", pushToken: "tok-phone", info: Payload.iosInfo)
        let hall = gw.connect("hall")
        gw.goneDevice("tablet", pushToken: "tok-tablet", info: Payload.androidInfo)
        gw.goneDevice("den", pushToken: "tok-den", info: Payload.androidInfo)
        #expect(gw.push(Payload.push(["phone", "hall", "tablet", "den"], message: "Door open")).status == 202)
        gw.advance(by: 0.25)
        let bodies = Dictionary(uniqueKeysWithValues: gw.relayRequests.map { ($0.device, $0.body) })
        #expect(Set(bodies.keys) == ["phone", "tablet", "den"])
        for (device, token, info) in [("phone", "tok-phone", Payload.iosInfo), ("tablet", "tok-tablet", Payload.androidInfo),
                                      ("den", "tok-den", Payload.androidInfo)] {
            #expect(bodies[device]?["push_token"] == .string(token), "\(device)")
            #expect(bodies[device]?["registration_info"] == info, "\(device)")
            #expect(bodies[device]?["message"] == "Door open", "\(device)")
        }
        #expect(hall.frames("notification").count == 1)
    }

    /// An unknown token's activity whose end never came: past Apple's 8 h ceiling the phone ended it, so the next
    /// update is a start again, and the pair is forgotten (the set of live pairs does not grow for good).
    @Test func anUnknownTokensActivityIsForgottenPastTheEightHourCeiling() throws {
        let gw = try TestGateway(config: .proxying())
        for tag in ["w", "dryer"] { gw.relayBody("stranger", message: "Started", data: Payload.live(tag)) }
        gw.advance(by: 3600, tick: 60)
        gw.relayBody("stranger", message: "An hour in", data: Payload.live("w"))
        #expect(gw.relayRequests.map(\.kind) == [.start, .start, .update])
        #expect(gw.core.relay.unknownTokens.activities.count == 2)
        gw.advance(by: Lifecycle.maximumDuration, tick: 60)
        gw.relayBody("stranger", message: "Nine hours in", data: Payload.live("w"))
        #expect(gw.relayRequests.last?.kind == .start && gw.relayRequests.last?.tag == "w")
        // "dryer" never ended: it is gone too, "w" is there again from its new start.
        #expect(Set(gw.core.relay.unknownTokens.activities.keys) == ["stranger|w"])
    }

    @Test func theUpstreamsTrailingSlashIsNotDoubled() throws {
        var config = GatewayConfig.proxying()
        config.relay.upstream = "https://relay.example//"
        let gw = try TestGateway(config: config)
        gw.relayBody("stranger", message: "Door")
        #expect(gw.relayRequests.map(\.url) == ["https://relay.example/api/sendPushNotification"])
        // A registered device without its own push_url uses the upstream too, on its platform's path.
        gw.goneDevice("tablet", pushToken: "tok-tablet", info: Payload.androidInfo, pushURL: nil)
        gw.relayBody("tok-tablet", title: "Oven", message: "Baking", data: Payload.live("oven"), path: "/api/sendPush/android/v1")
        #expect(gw.relayRequests.last?.url == "https://relay.example/api/sendPush/android/v1")
    }

    @Test func pushTargetsAreIdsAllOrMissing() throws {
        let gw = try TestGateway()
        let phone = gw.connect("phone")
        let tablet = gw.connect("tablet")
        gw.push(Payload.liveUpdate(["phone"], tag: "a", message: "one"))
        gw.push(["targets": "all", "message": "m", "data": Payload.live("b")])
        gw.push(["message": "m", "data": Payload.live("c")])
        gw.push(["targets": "tablet", "message": "m", "data": Payload.live("d")])
        #expect(phone.frames("start").map { $0["tag"] } == ["a", "b", "c"])
        #expect(tablet.frames("start").map { $0["tag"] } == ["b", "c", "d"])
    }

    /// Apple's 15 s render interval holds for iOS; HA's Android relay path has none (the quota still holds).
    @Test(arguments: [
        ("ios", Payload.iosInfo, Payload.pushURL, 1),
        ("android app id", Payload.androidInfo, "http://relay.test/custom", 3),
        ("android path", Payload.iosInfo, "http://relay.test/api/sendPush/android/v1", 3),
    ])
    func androidSkipsTheUpdateInterval(name: String, info: JSONValue, pushURL: String, atOnce: Int) throws {
        let gw = try TestGateway()
        gw.goneDevice(info: info, pushURL: pushURL)
        for step in ["start", "one", "two"] {
            gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: step))
        }
        #expect(gw.relayRequests.count == atOnce, "\(name)")
        gw.advance(by: 15)
        // iOS: the burst's final state goes one interval after the start, once ("one" never went).
        #expect(gw.relayRequests.map(\.body["message"]) == (atOnce == 1 ? ["start", "two"] : ["start", "one", "two"]))
        #expect(gw.relayRequests.last?.body["message"] == "two")
    }
}
