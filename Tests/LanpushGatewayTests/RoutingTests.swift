import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// The README's routing table, row by row: where a live update, a companion-app command, a plain notification and
/// a `clear_notification` go, for a device on the LAN or gone, with and without relay credentials — and that
/// nothing travels twice on one path.
@Suite struct RoutingTests {
    /// `phone` with the given `notifications` setting; `tablet` never registers relay credentials.
    static func gateway(phone routing: NotificationRouting = .auto) throws -> TestGateway {
        var config = TestGateway.defaultConfig()
        config.devices[0].notifications = routing
        return try TestGateway(config: config)
    }

    /// A LAN session of `phone` that registered relay credentials.
    static func lanPhone(_ gw: TestGateway) -> TestSession {
        let s = gw.connect("phone")
        s.register("tok-phone")
        return s
    }

    static func results(_ r: TestResponse) -> [String: String] {
        var out = [String: String]()
        for item in r.json["results"]?.arrayValue ?? [] {
            if let t = item["target"]?.stringValue, let w = item["result"]?.stringValue { out[t] = w }
        }
        return out
    }

    // MARK: Live updates

    @Test func aLiveUpdateGoesToTheLANWhileTheDeviceIsThereAndToTheRelayWhenItIsGone() throws {
        let gw = try Self.gateway()
        let s = Self.lanPhone(gw)
        #expect(gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer")).status == 201)
        #expect(s.frames("start").count == 1 && gw.relayRequests.isEmpty)
        s.ack()
        s.close()
        #expect(gw.relayRequests.isEmpty, "what the LAN session acknowledged is not relayed again")
        #expect(gw.relayBody("tok-phone", message: "Rinsing", data: Payload.live("washer")).status == 202)
        let item = try #require(gw.relayRequests.first)
        #expect(gw.relayRequests.count == 1)
        #expect(item.kind == .update && item.tag == "washer" && item.url == Payload.pushURL)
        #expect(item.body["push_token"] == "tok-phone" && item.body["message"] == "Rinsing")
    }

    @Test func aLiveUpdateForAGoneDeviceWithoutCredentialsWaitsForItsSessions() throws {
        let gw = try Self.gateway()
        let r = gw.push(Payload.liveUpdate(["tablet"], tag: "oven", message: "Baking"))
        #expect(r.status == 202 && Self.results(r) == ["tablet": "queued"])
        #expect(gw.relayRequests.isEmpty)
        let s = gw.connect("tablet")
        s.read()
        #expect(s.state("oven") == ["message": "Baking", "title": "Washer"])
    }

    // MARK: Companion-app commands

    @Test(arguments: ["request_location_update", "clear_badge", "update_complications", "update_widgets", "remove_channel", "TTS", "command_dnd"])
    func aCommandGoesToTheRelayOnlyEvenWhileTheDeviceIsOnTheLAN(command: String) throws {
        let gw = try Self.gateway()
        let s = Self.lanPhone(gw)
        let before = s.frames.count
        #expect(gw.relayBody("tok-phone", message: command).status == 202)
        #expect(gw.relayRequests.map(\.body["message"]) == [.string(command)])
        #expect(gw.relayRequests.first?.kind == .notification)
        #expect(s.frames.count == before, "a LAN session never gets a command")
        #expect(gw.device("phone")?["seq"] == 0)
    }

    @Test func aCommandForADeviceWithoutCredentialsIs422() throws {
        let gw = try Self.gateway()
        let s = gw.connect("tablet")
        let r = gw.push(Payload.push(["tablet"], message: "request_location_update"))
        #expect(r.status == 422 && r.json["rule"] == "relay_credentials" && r.json["field"] == "targets")
        #expect(r.json["message"]?.stringValue?.contains("companion-app command") == true)
        #expect(Self.results(r) == ["tablet": "no_relay"])
        #expect(s.events.isEmpty && gw.relayRequests.isEmpty)
        // One target that can carry it is enough for a 202; the other is named.
        _ = Self.lanPhone(gw)
        let both = gw.push(Payload.push(["phone", "tablet"], message: "clear_badge"))
        #expect(both.status == 202 && Self.results(both) == ["phone": "relay", "tablet": "no_relay"])
    }

    // MARK: Plain notifications

    @Test func autoSendsPlainNotificationsThroughTheRelayWhenThereAreCredentialsElseTheLAN() throws {
        let gw = try Self.gateway(phone: .auto)
        let phone = Self.lanPhone(gw)
        let tablet = gw.connect("tablet")
        let r = gw.push(Payload.push(["phone", "tablet"], title: "Door", message: "Front door opened"))
        #expect(Self.results(r) == ["phone": "relay", "tablet": "delivered"])
        #expect(phone.frames("notification").isEmpty && tablet.frames("notification").count == 1)
        #expect(gw.relayRequests.count == 1 && gw.relayRequests.first?.device == "phone")
    }

    @Test func lanSendsThemOnTheLANAndThroughTheRelayOnlyWhileGone() throws {
        let gw = try Self.gateway(phone: .lan)
        let s = Self.lanPhone(gw)
        #expect(gw.relayBody("tok-phone", message: "one").status == 201)
        #expect(s.frames("notification").count == 1 && gw.relayRequests.isEmpty)
        s.ack()
        s.close()
        #expect(gw.relayBody("tok-phone", message: "two").status == 202)
        #expect(gw.relayRequests.map(\.body["message"]) == ["two"])
    }

    @Test func relaySendsThemThroughTheRelayOnlyAndWithoutCredentialsIs422() throws {
        var config = TestGateway.defaultConfig()
        config.devices[0].notifications = .relay
        config.devices[1].notifications = .relay
        let gw = try TestGateway(config: config)
        let s = Self.lanPhone(gw)
        #expect(gw.relayBody("tok-phone", message: "one").status == 202)
        #expect(s.frames("notification").isEmpty && gw.relayRequests.count == 1)
        let r = gw.push(Payload.push(["tablet"], message: "two"))
        #expect(r.status == 422 && r.json["rule"] == "relay_credentials")
        #expect(r.json["message"]?.stringValue?.contains("routed to the relay") == true)
    }

    @Test func bothSendsThemOnTheLANAndThroughTheRelayAtOnce() throws {
        let gw = try Self.gateway(phone: .both)
        let s = Self.lanPhone(gw)
        let r = gw.push(Payload.push(["phone"], message: "Door"))
        #expect(Self.results(r) == ["phone": "delivered"])
        #expect(r.json["results"]?.arrayValue?.first?["relay"] == true)
        #expect(s.frames("notification").count == 1 && gw.relayRequests.count == 1)
        // It went on both paths once: the session leaving without acking it does not relay it a second time.
        s.close()
        #expect(gw.relayRequests.count == 1)
    }

    @Test(arguments: [
        ("lan", true, false), ("relay", false, true), ("both", true, true),
    ])
    func dataLanpushPathOverridesTheDeviceSetting(path: String, lan: Bool, relay: Bool) throws {
        let gw = try Self.gateway(phone: .auto)
        let s = Self.lanPhone(gw)
        let data: JSONValue = ["group": "doors", "lanpush": ["path": .string(path)]]
        #expect(gw.relayBody("tok-phone", message: "Door", data: data).status == (lan ? 201 : 202))
        #expect(s.frames("notification").count == (lan ? 1 : 0))
        #expect(gw.relayRequests.count == (relay ? 1 : 0))
        // lanpush's own option reaches neither the client nor the relay.
        for frame in s.frames("notification") { #expect(frame["data"] == ["group": "doors"]) }
        for item in gw.relayRequests { #expect(item.body["data"] == ["group": "doors"]) }
    }

    @Test(arguments: [
        (["path": "cloud"] as JSONValue), (["route": "lan"] as JSONValue), ("lan" as JSONValue),
    ])
    func anInvalidDataLanpushIs400NamingIt(options: JSONValue) throws {
        let gw = try Self.gateway()
        let r = gw.push(Payload.push(["tablet"], message: "Door", data: ["lanpush": options]))
        #expect(r.status == 400)
        #expect(r.json["field"]?.stringValue?.hasPrefix("data.lanpush") == true, "\(r.json)")
    }

    /// A plain notification's tag is opaque: whatever HA sent, delivered and cleared as sent.
    @Test(arguments: [
        ("camera.front_door" as JSONValue, "camera.front_door"), ("front door", "front door"), ("alarm:zone:1", "alarm:zone:1"),
        (.string(String(repeating: "x", count: 200)), String(repeating: "x", count: 200)), (42, "42"),
    ])
    func aPlainNotificationsTagIsTakenAsSent(tag: JSONValue, text: String) throws {
        let gw = try Self.gateway()
        let tablet = gw.connect("tablet")
        #expect(gw.push(Payload.push(["tablet"], message: "Motion", data: ["tag": tag])).status == 202)
        #expect(gw.push(Payload.push(["tablet"], message: "clear_notification", data: ["tag": tag])).status == 202)
        #expect(tablet.frames("notification").first?["data"]?["tag"] == tag)
        #expect(tablet.frames("clear").first?["tag"] == .string(text))
        _ = Self.lanPhone(gw)
        #expect(gw.relayBody("tok-phone", message: "Motion", data: ["tag": tag]).status == 202)
        #expect(gw.relayRequests.first?.body["data"]?["tag"] == tag)
    }

    // MARK: clear_notification

    @Test func aClearOfAnOpaqueTagFollowsTheNotificationItClears() throws {
        let gw = try Self.gateway(phone: .auto)
        let phone = Self.lanPhone(gw)
        let tablet = gw.connect("tablet")
        let tag: JSONValue = "camera.front_door"
        gw.push(Payload.push(["phone", "tablet"], message: "Motion", data: ["tag": tag]))
        gw.push(Payload.push(["phone", "tablet"], message: "clear_notification", data: ["tag": tag]))
        // phone (auto, credentials): both through the relay; tablet (no credentials): both on the LAN.
        #expect(gw.relayRequests.map(\.body["message"]) == ["Motion", "clear_notification"])
        #expect(phone.events.isEmpty)
        #expect(tablet.events.map { $0["type"] } == ["notification", "clear"])
        #expect(tablet.frames("clear").first?["tag"] == tag)
    }

    @Test func aClearOfAnActivityEndsAndDismissesItAndClearsItsTagOnTheLAN() throws {
        let gw = try Self.gateway()
        let s = Self.lanPhone(gw)
        gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer"))
        gw.relayBody("tok-phone", message: "clear_notification", data: ["tag": "washer"])
        #expect(s.events.map { $0["type"] } == ["start", "end", "clear"])
        let end = try #require(s.frames("end").first)
        #expect(end["phase"] == "dismissed" && end["dismissal_date"] == .number(gw.clock.now))
        #expect(gw.relayRequests.isEmpty)
        #expect(gw.request(.get, "/v1/activities/washer").status == 404)
    }

    @Test func aClearOfAnActivityOfAGoneDeviceIsOneRelayRequest() throws {
        let gw = try Self.gateway()
        gw.goneDevice()
        gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer"))
        gw.relayBody("tok-phone", message: "clear_notification", data: ["tag": "washer"])
        #expect(gw.relayRequests.map(\.kind) == [.start, .end])
        #expect(gw.relayRequests.last?.body["message"] == "clear_notification")
    }
}
