import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// Who a token or a push_token names: a push_token routes to exactly one device — the one that registered it
/// first, until it lets it go — and HA-native mode's own push_tokens route without becoming a relay registration.
@Suite struct DeviceDirectoryTests {
    /// Another device claiming a registered push_token (to have the owner's notifications posted to its own
    /// push_url) is refused with an error frame naming the rule; the owner keeps its registration and its traffic.
    @Test func aPushTokenBelongsToTheDeviceThatRegisteredItFirst() throws {
        let gw = try TestGateway()
        let phone = gw.connect("phone")
        phone.register("shared")
        phone.close()
        let tablet = gw.connect("tablet")
        tablet.register("shared", pushURL: "https://attacker.example/steal")
        let refusal = try #require(tablet.frames("error").last)
        #expect(refusal["field"] == "push_token" && refusal["rule"] == "owned")
        #expect(tablet.frames("registered").isEmpty)
        #expect(gw.device("phone")?["registration"]?["push_token"] == "shared" && gw.device("phone")?["path"] == "relay")
        #expect(gw.device("tablet")?["registration"] == nil)
        // HA's "Your code is 123456" for the phone still goes to the phone's own relay path, not the tablet's URL.
        gw.relayBody("shared", title: "Bank", message: "Your code is 123456")
        #expect(tablet.frames("notification").isEmpty)
        #expect(gw.relayRequests.map(\.device) == ["phone"] && gw.relayRequests.first?.url == Payload.pushURL)

        // Let go — by its own client, or by the admin — it may be registered by another device.
        let back = gw.connect("phone")
        back.send(["type": "unregister"])
        #expect(back.frames("unregistered").count == 1 && gw.device("phone")?["registration"] == nil)
        tablet.register("shared")
        #expect(gw.device("tablet")?["registration"]?["push_token"] == "shared")
        #expect(gw.request(.delete, "/v1/devices/tablet/registration").status == 200)
        #expect(gw.device("tablet")?["registration"] == nil)
        #expect(gw.request(.delete, "/v1/devices/tablet/registration", token: TestGateway.viewerToken).status == 401)
        back.register("shared")
        #expect(gw.device("phone")?["registration"]?["push_token"] == "shared")
    }

    /// Relay credentials are a registered push_token with its push_url, or the configured upstream: a device that
    /// registered no push_url is on the relay path too, and `GET /v1/devices` must say so.
    @Test func aRegistrationWithoutPushURLIsARelayPathThroughTheUpstream() throws {
        let gw = try TestGateway()
        gw.goneDevice(pushURL: nil)
        #expect(gw.device("phone")?["path"] == "relay")
        #expect(gw.device("phone")?["registration"] == ["push_token": "tok-phone"])
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking"))
        #expect(gw.relayRequests.first?.url == "http://relay.invalid/api/sendPushNotification")
        #expect(gw.device("tablet")?["path"] == "none")
    }

    @Test func aNewTokenOfTheSameDeviceRetiresItsOldOne() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("old-token")
        s.register("new-token")
        #expect(gw.relayBody("new-token", title: "Oven", message: "Baking", data: Payload.live("oven")).status == 201)
        // The old token names no device any more: HA's request for it reaches nobody (proxying is off).
        let old = gw.relayBody("old-token", title: "Dryer", message: "Drying", data: Payload.live("dryer"))
        #expect(old.status == 404 && old.json["rule"] == "registered" && gw.relayRequests.isEmpty)
        #expect(s.frames("start").map { $0["tag"] } == ["oven"])
        // Registering the same token again changes nothing.
        s.register("new-token")
        #expect(gw.device("phone")?["registration"]?["push_token"] == "new-token")
    }

    @Test func haNativeRoutesReachTheDeviceWithoutBeingARelayRegistration() throws {
        let gw = try TestGateway()
        gw.core.directory.route(pushToken: "ha-phone", to: "phone")
        gw.core.directory.route(pushToken: "ha-ghost", to: "ghost")
        let s = gw.connect("phone")
        #expect(gw.relayBody("ha-phone", title: "Oven", message: "Baking", data: Payload.live("oven")).status == 201)
        #expect(s.frames("start").count == 1)
        // The push_url HA posts to is lanpush itself: it is no relay path for the device.
        s.close()
        #expect(gw.device("phone")?["registration"] == nil && gw.device("phone")?["path"] == "none")
        #expect(gw.relayBody("ha-phone", message: "Rinsing", data: Payload.live("oven")).status == 202)
        #expect(gw.relayRequests.isEmpty)
        // A route to a device that does not exist is no route.
        #expect(gw.relayBody("ha-ghost", message: "x").status == 404)
        #expect(gw.relayRequests.isEmpty)
        // The client's own registration leaves the HA route in place.
        let again = gw.connect("phone")
        again.register("client-token")
        #expect(gw.relayBody("ha-phone", message: "Spinning", data: Payload.live("oven")).status == 201)
        #expect(gw.relayBody("client-token", message: "Done", data: Payload.live("oven")).status == 201)
    }

    @Test func devicesAreListedInIdOrderWhateverTheConfigOrder() throws {
        let gw = try TestGateway(config: TestGateway.defaultConfig(devices: ["tablet", "kitchen", "phone"]))
        let ids = gw.request(.get, "/v1/devices").json["devices"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(ids == ["kitchen", "phone", "tablet"])
        #expect(gw.push(Payload.push(message: "all")).json["results"]?.arrayValue?.map { $0["target"] } == ["kitchen", "phone", "tablet"])
    }
}

/// One check for bearer and observer tokens: the admin writes, the viewer reads, nothing else is anybody.
@Suite struct AccessControlTests {
    @Test func grants() {
        var config = TestGateway.defaultConfig()
        let access = AccessControl(config: config)
        #expect(access.grant(for: TestGateway.adminToken) == .admin)
        #expect(access.grant(for: TestGateway.viewerToken) == .viewer)
        #expect(access.grant(for: "") == nil && access.grant(for: TestGateway.token(for: "phone")) == nil)
        // Without a viewer token configured, an empty or any other token is nobody.
        config.viewerToken = nil
        let adminOnly = AccessControl(config: config)
        #expect(adminOnly.grant(for: "") == nil && adminOnly.grant(for: TestGateway.viewerToken) == nil)
        #expect(adminOnly.grant(for: TestGateway.adminToken) == .admin)
    }

    @Test func withoutAViewerTokenTheViewerCannotObserve() throws {
        var config = TestGateway.defaultConfig()
        config.viewerToken = nil
        let gw = try TestGateway(config: config)
        #expect(gw.observe(token: "").closeCode == 4001)
        #expect(gw.observe(token: TestGateway.adminToken).closeCode == nil)
        #expect(gw.request(.get, "/v1/devices", token: TestGateway.viewerToken).status == 401)
    }

    /// A session keeps its device's record between frames; a device removed, or removed and added again under the
    /// same id, is looked up afresh.
    @Test func aSessionsDeviceIsFoundAgainOnceDevicesComeOrGo() {
        let directory = DeviceDirectory(config: TestGateway.defaultConfig(), stored: nil, epoch: "e1")
        let session = StreamSession(id: 1, transport: RecordingTransport(), now: 0)
        #expect(directory.device(of: session) == nil, "a session that is not a device's has none")
        session.role = .device("phone")
        let phone = directory.device(of: session)
        #expect(phone != nil && phone === directory["phone"] && directory.device(of: session) === phone)
        _ = directory.add(id: "watch", name: "Watch", tokenHash: "h", notifications: .auto)
        #expect(directory.device(of: session) === phone, "another device coming changes nothing for it")
        directory.remove("phone")
        #expect(directory.device(of: session) == nil)
        let again = directory.add(id: "phone", name: "Phone", tokenHash: "h2", notifications: .auto)
        #expect(directory.device(of: session) === again && again !== phone)
    }
}
