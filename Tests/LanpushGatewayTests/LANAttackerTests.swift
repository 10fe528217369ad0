import LanpushCore
import LanpushLWS
import LanpushTesting
import Testing

@testable import LanpushGateway

/// What a hostile device or a hostile web page on the LAN can do to the gateway, each attack of the LAN-attacker
/// review driven in-process (the daemon-level ones are in Tests/integration/test_lan_attacker.py).
@Suite struct LANAttackerTests {
    // MARK: Unauthenticated state is bounded

    /// A push_token no device could have registered is refused before anything is kept; tokens no device registered
    /// leave no counters behind, however many are tried.
    @Test func unknownAndOversizedPushTokensLeaveNothingBehind() throws {
        let gw = try TestGateway()
        let huge = String(repeating: "x", count: 30_000)
        let r = gw.relayBody(huge, message: "m")
        #expect(r.status == 400 && r.json["field"] == "push_token" && r.json["rule"] == "max_length")
        for i in 0..<500 {
            #expect(gw.relayBody("made-up-\(i):token", message: "m", extra: ["hass_confirm_id": .string("c\(i)")]).status == 404)
            gw.relayBody("invalid-\(i)", message: "m", data: ["progress": "x", "live_update": true, "tag": "t"])
        }
        #expect(gw.core.relay.counters.tokenCount == 0)
        #expect(gw.core.ingest.recentConfirmIds.isEmpty)
        #expect(gw.relayRequests.isEmpty)
        // A registered token gets its counters (HA reads them as the relay's rateLimits).
        gw.goneDevice()
        #expect(gw.relayBody("tok-phone", message: "m").json["rateLimits"]?["attempts"] == 1)
        #expect(gw.core.relay.counters.tokenCount == 1)
    }

    /// However many distinct confirm ids a sender makes up for a registered token, the table of them stays bounded.
    @Test func confirmIdsAreBounded() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        for i in 0..<(Ingest.maxConfirmIds + 100) {
            gw.relayBody("tok-phone", message: "m", extra: ["hass_confirm_id": .string("id-\(i)")])
        }
        #expect(gw.core.ingest.recentConfirmIds.count == Ingest.maxConfirmIds)
    }

    // MARK: Relay loops and stolen notifications

    @Test(arguments: [
        // The gateway itself, by any of its addresses and names, on its port: a relay loop.
        ("http://127.0.0.1:8765/api/sendPushNotification", "loop"),
        ("https://192.168.1.5:8765/api/sendPushNotification", "loop"),
        ("https://[fe80::5]:8765/api/sendPushNotification", "loop"),
        ("https://gw-host.local:8765/api/sendPushNotification", "loop"),
        ("http://localhost:8765/api/sendPushNotification", "loop"),
        // Anywhere over plain http, loopback and link-local services: never unless listed.
        ("http://192.168.1.77/steal", "https"),
        ("https://127.0.0.1:9000/api", "address"),
        ("https://[::1]/api", "address"),
        ("https://169.254.169.254/latest/meta-data", "address"),
        // The machines of the household's own network: its router's admin page, a NAS.
        ("https://192.168.1.1/cgi-bin/reboot", "address"),
        ("https://10.0.0.2/api", "address"),
        ("https://172.20.1.1/api", "address"),
        ("https://100.64.0.1/api", "address"),
        ("https://[fd00::1]/api", "address"),
        ("https://[::ffff:192.168.1.1]/api", "address"),
        ("ftp://relay.example/x", "url"),
        ("not a url", "url"),
    ])
    func aPushURLTheGatewayMayNotPostToIsRefused(url: String, rule: String) throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone", pushURL: url)
        let refusal = try #require(s.frames("error").last)
        #expect(refusal["field"] == "push_url" && refusal["rule"] == .string(rule))
        #expect(s.frames("registered").isEmpty && gw.device("phone")?["registration"] == nil)
    }

    @Test(arguments: [
        "https://mobile-apps.home-assistant.io/api/sendPushNotification", "https://relay.example:8443/x",
        "https://8.8.8.8/relay", "https://172.32.0.1/relay", "http://relay.test/api/sendPushNotification",
    ])
    func aPushURLOverHTTPSOrListedIsTaken(url: String) throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone", pushURL: url)
        #expect(s.errors.isEmpty && gw.device("phone")?["registration"]?["push_url"] == .string(url))
    }

    @Test func aListedPushURLCoversOnlyItsOriginAndPath() {
        let policy = PushURLPolicy(
            allowed: ["http://192.168.1.9:8080/relay", "http://[fd00::9]"], localAddresses: { [] }, localNames: { [] },
            port: { 8765 })
        #expect(policy.refusal("http://192.168.1.9:8080/relay/api/sendPushNotification") == nil)
        #expect(policy.refusal("http://192.168.1.9:8080/relay") == nil)
        #expect(policy.refusal("http://192.168.1.9:8080/relayer")?.rule == "https")
        #expect(policy.refusal("http://192.168.1.9:8081/relay/x")?.rule == "https")
        #expect(policy.refusal("http://192.168.1.9:8080@evil.example/relay/x")?.rule == "url", "no user info")
        #expect(policy.refusal("http://[fd00:0::9]/anything") == nil)
    }

    /// A request this gateway relayed comes back (a push_url naming it by a name the check could not know): it is
    /// refused, not relayed again.
    @Test func aRelayedRequestThatComesBackIsRefused() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        let looped = gw.request(
            .post, "/api/sendPushNotification", json: ["push_token": "tok-phone", "message": "m"], token: nil,
            headers: [RelayClient.hopHeader: "other-gateway, \(TestGateway.gatewayId)"])
        #expect(looped.status == 508 && looped.json["rule"] == "loop")
        #expect(gw.relayRequests.isEmpty)
        let chained = gw.request(
            .post, "/api/sendPushNotification", json: ["push_token": "tok-phone", "message": "m"], token: nil,
            headers: [RelayClient.hopHeader: "other-gateway"])
        #expect(chained.status == 202)
    }

    /// Every relayed request counts against the day's quota, plain notifications included, whether the relay (or
    /// whatever answers at the push_url) says `rateLimits` or not.
    @Test func everyRelayedRequestCountsAgainstTheQuota() throws {
        var config = TestGateway.defaultConfig()
        config.relay.quota = 3
        config.relay.quotaReserve = 0
        let gw = try TestGateway(config: config)
        gw.relayAnswer = { _ in (202, ["messageId": "m"]) }
        gw.goneDevice()
        for i in 0..<6 { gw.relayBody("tok-phone", message: "note \(i)") }
        gw.advance(by: 5)
        #expect(gw.relayRequests.count == 3)
        #expect(gw.device("phone")?["relay"]?["sent_today"] == 3)
    }

    // MARK: Cross-site requests and DNS rebinding

    @Test(arguments: [
        ("evil.example", 403), ("evil.example:8765", 403), ("127.0.0.1.evil.example", 403), ("", 403),
        ("192.168.1.5:8765", 200), ("127.0.0.1", 200), ("[::1]:8765", 200), ("localhost:8765", 200),
        ("lanpush.local", 200), ("gw-host", 200), ("GW-HOST.LOCAL.:8765", 200), ("nas.lan", 200), ("lan", 403),
    ])
    func onlyNamesThatAddressTheGatewayAreServed(host: String, status: Int) throws {
        var config = TestGateway.defaultConfig()
        config.http.allowedHosts = ["*.lan"]
        let gw = try TestGateway(config: config)
        let r = gw.request(.get, "/v1/devices", headers: ["Host": host])
        #expect(r.status == status)
        if status == 403 { #expect(r.json["field"] == "host" && r.json["rule"] == "allowed_hosts") }
    }

    /// A page on another site can post without a preflight; its browser says where it came from. Only the gateway's
    /// own pages may: the relay ingest and pairing need no token, so a visited page could otherwise use them.
    @Test func requestsFromAnotherSitesPagesAreRefused() throws {
        let gw = try TestGateway()
        gw.connect("phone").register("tok-phone")
        let body: JSONValue = ["push_token": "tok-phone", "message": "hi", "data": ["tag": "a", "live_update": true]]
        for origin in ["http://evil.example", "null", "http://127.0.0.1:8766", "https://192.168.1.5:8765.evil.example"] {
            let r = gw.request(.post, "/api/sendPushNotification", json: body, token: nil, headers: ["Origin": origin])
            #expect(r.status == 403 && r.json["field"] == "origin" && r.json["rule"] == "same_origin", "\(origin)")
            #expect(gw.request(.post, "/v1/pair", json: ["code": "ABCD-EFGH"], token: nil, headers: ["Origin": origin]).status == 403)
        }
        #expect(gw.core.throttle.retryAfter("127.0.0.1", now: gw.clock.now) == nil, "refused pages burn no attempts")
        // The gateway's own page, on the address it was opened at.
        let own = gw.request(.post, "/api/sendPushNotification", json: body, token: nil,
                             headers: ["Host": "192.168.1.5:8765", "Origin": "http://192.168.1.5:8765"])
        #expect(own.status == 201)
    }

    @Test func aWebSocketFromAnotherSitesPageIsRefusedAtTheUpgrade() throws {
        let gw = try TestGateway()
        func refusal(_ headers: [String: String]) -> HTTPRejection? {
            gw.core.upgradeRefusal(HTTPRequest(method: .get, path: "/v1/stream", headers: headers, remoteAddress: "192.168.1.30"))
        }
        #expect(refusal(["host": "evil.example:8765"])?.rule == "allowed_hosts")
        #expect(refusal(["host": "192.168.1.5:8765", "origin": "http://evil.example"])?.rule == "origin")
        #expect(refusal(["host": "192.168.1.5:8765", "origin": "null"])?.status == 403)
        // The client libraries and the Scripting app send no Origin; an HA dashboard on a .local name may connect.
        #expect(refusal(["host": "192.168.1.5:8765"]) == nil)
        #expect(refusal(["host": "192.168.1.5:8765", "origin": "http://homeassistant.local:8123"]) == nil)
        #expect(refusal(["host": "192.168.1.5:8765", "origin": "http://192.168.1.5:8765"]) == nil)
    }

    // MARK: What the viewer token reads

    @Test func theViewerSeesRelayCredentialsRedacted() throws {
        let gw = try TestGateway()
        let token = "fcm-token-abc:APA91bExample-0123456789"
        let viewer = gw.observe(token: TestGateway.viewerToken)
        let admin = gw.observe()
        gw.connect("phone").register(token, pushURL: "https://relay.example/api/x?key=secret")
        let seen = try #require(gw.request(.get, "/v1/devices/phone", token: TestGateway.viewerToken).json["registration"])
        #expect(seen["push_token"] == "…456789" && seen["push_url"] == "https://relay.example:443/…")
        #expect(gw.request(.get, "/v1/devices", token: TestGateway.viewerToken).json.description.contains("APA91b") == false)
        #expect(gw.device("phone")?["registration"]?["push_token"] == .string(token))
        // Observer frames likewise.
        #expect(viewer.frames("device").last?["registration"]?["push_token"] == "…456789")
        #expect(admin.frames("device").last?["registration"]?["push_token"] == .string(token))
    }

    // MARK: Pairing

    /// Wrong codes void the pairing they may have been guesses at, and nobody's wrong codes pause pairing for the
    /// household: a new pairing from a new address works at once.
    @Test func eachPairingHasItsOwnAttemptBudget() throws {
        let gw = try TestGateway()
        let first = gw.request(.post, "/v1/pairings", json: ["device": "kitchen"])
        let code = try #require(first.json["code"]?.stringValue)
        for i in 0..<10 {
            gw.request(.post, "/v1/pair", json: ["code": .string("WRONG\(i)CODE")], token: nil, from: "10.0.0.\(i)")
        }
        let late = gw.request(.post, "/v1/pair", json: ["code": .string(code)], token: nil, from: "10.0.1.1")
        #expect(late.status == 403, "void after 10 wrong codes")
        // 60 more wrong codes from six addresses, then a new pairing redeemed from a new address.
        for i in 0..<60 { gw.request(.post, "/v1/pair", json: ["code": "NOPE"], token: nil, from: "10.0.2.\(i % 6)") }
        let again = gw.request(.post, "/v1/pairings", json: ["device": "kitchen"])
        let redeemed = gw.request(.post, "/v1/pair", json: ["code": again.json["short_code"]!], token: nil, from: "10.0.3.1")
        #expect(redeemed.status == 200 && redeemed.json["device_id"] == "kitchen")
    }

    /// The pairing URL names only the gateway's own addresses: a `Host` the request made up is not offered to a
    /// client as where to connect.
    @Test func thePairingURLIsBuiltFromTheGatewaysOwnAddresses() throws {
        var config = TestGateway.defaultConfig()
        config.listenHost = "0.0.0.0"
        config.http.allowedHosts = ["evil.example"]
        let gw = try TestGateway(config: config)
        let viaEvil = gw.request(.post, "/v1/pairings", json: ["device": "x"], headers: ["Host": "evil.example:8765"])
        let url = try #require(viaEvil.json["url"]?.stringValue)
        #expect(!url.contains("evil") && url.hasPrefix("lanpush://192.168.1.5:\(gw.core.port)/pair?"))
        let viaV6 = gw.request(.post, "/v1/pairings", json: ["device": "y"], headers: ["Host": "[fe80::5]:8765"])
        #expect(viaV6.json["url"]?.stringValue?.hasPrefix("lanpush://192.168.1.5:") == true, "link-local is never offered")
    }

    // MARK: The open proxy

    @Test func unknownPushTokensAreProxiedOnlyWhenAskedAndThenPerAddress() throws {
        let off = try TestGateway()
        for i in 0..<200 { #expect(off.relayBody("stranger-\(i)", message: "m").status == 404) }
        #expect(off.relayRequests.isEmpty)

        var config = GatewayConfig.proxying()
        config.relay.proxyPerMinute = 5
        let on = try TestGateway(config: config)
        for i in 0..<5 { #expect(on.relayBody("stranger-\(i)", message: "m", from: "10.0.0.1").status == 202) }
        let refused = on.relayBody("stranger-9", message: "m", from: "10.0.0.1")
        #expect(refused.status == 429 && refused.json["errorType"] == "RateLimited" && refused.header("Retry-After") != nil)
        #expect(on.relayBody("stranger-9", message: "m", from: "10.0.0.2").status == 202)
        on.advance(by: 61, tick: 5)
        #expect(on.relayBody("stranger-10", message: "m", from: "10.0.0.1").status == 202)
        #expect(on.relayRequests.count == 7)
    }

    // MARK: Sessions that never authenticate

    @Test func unauthenticatedSessionsAreBoundedPerAddressApartFromTheSessionBudget() throws {
        var config = TestGateway.defaultConfig()
        config.limits.maxSessions = 2
        config.limits.unauthenticatedPerAddress = 8
        let gw = try TestGateway(config: config)
        let idle = (0..<8).map { _ in gw.open(peer: "192.168.1.66") }
        #expect(idle.allSatisfy { $0.closeCode == nil })
        let ninth = gw.open(peer: "192.168.1.66")
        #expect(ninth.closeCode == 1013 && ninth.frames("error").first?["rule"] == "unauthenticated_per_address")
        // A real device, from another address, is not kept out by them.
        let phone = gw.connect("phone", peer: "192.168.1.20")
        #expect(phone.closeCode == nil && phone.types.last == "synced")
        // They time out as every unauthenticated session does, and the address may open sessions again.
        gw.advance(by: SessionProtocol.authTimeout + 1)
        gw.completeCloses()
        #expect(idle.allSatisfy { $0.closeCode == 4001 })
        #expect(gw.open(peer: "192.168.1.66").closeCode == nil)
    }
}
