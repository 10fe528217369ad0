import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// The answers of the two ingest endpoints: HA's relay body is answered as HA's relay answers (HA's handler reads
/// `rateLimits` and crashes on a missing key), `/v1/push` with a result per target.
@Suite struct IngestEndpointsTests {
    static let rateLimitKeys: Set<String> = ["attempts", "successful", "errors", "total", "maximum", "remaining", "resetsAt"]

    @Test func aRelayBodyIs201WhenALANSessionCarriesItAnd202Otherwise() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        let lan = gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer"))
        #expect(lan.status == 201 && lan.committed)
        #expect(lan.json["target"] == "tok-phone" && lan.json["messageId"]?.stringValue?.isEmpty == false)
        let limits = try #require(lan.json["rateLimits"]?.objectValue)
        #expect(Set(limits.keys) == Self.rateLimitKeys)
        #expect(limits["successful"] == 1 && limits["attempts"] == 1 && limits["total"] == 1 && limits["errors"] == 0)
        #expect(limits["maximum"] == 500 && limits["remaining"] == 500)
        let resetsAt = try #require(limits["resetsAt"]?.stringValue)
        #expect(resetsAt.hasSuffix("Z"))
        let reset = try #require(ISO8601Timestamp.unixSeconds(resetsAt))
        #expect(reset > gw.clock.now && reset <= gw.clock.now + 86_400 && reset.truncatingRemainder(dividingBy: 86_400) == 0)
        s.close()
        let queued = gw.relayBody("tok-phone", message: "Rinsing", data: Payload.live("washer"))
        #expect(queued.status == 202 && queued.json["rateLimits"]?["successful"] == 2)
        #expect(queued.json["messageId"] != lan.json["messageId"])
    }

    @Test func remainingIsTheRelaysLastWordElseTheQuotaLessWhatWasRelayed() throws {
        var config = TestGateway.defaultConfig()
        config.relay.quota = 300
        let gw = try TestGateway(config: config)
        gw.goneDevice()
        gw.holdRelayAnswers = true
        let first = gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer"))
        #expect(first.json["rateLimits"]?["maximum"] == 300)
        #expect(first.json["rateLimits"]?["remaining"] == 299, "one request went to the relay, unanswered")
        gw.relayAnswer = { _ in
            (201, ["rateLimits": ["attempts": 9, "successful": 9, "errors": 0, "total": 9, "maximum": 500, "remaining": 123,
                                  "resetsAt": "2030-01-01T00:00:00.000Z"]])
        }
        gw.answerRelay()
        let next = gw.relayBody("tok-phone", message: "Door", data: ["lanpush": ["path": "lan"]])
        #expect(next.json["rateLimits"]?["remaining"] == 123)
        #expect(gw.device("phone")?["relay"]?["remaining"] != nil)
    }

    @Test(arguments: [
        #"{"message":"x","data":{}}"#, #"{"push_token":"","message":"x"}"#, #"{"push_token":null,"message":"x"}"#,
        #"{"data":{"tag":"bad tag!","live_update":true}}"#,
    ])
    func aRelayBodyWithoutAPushTokenIs403AsTheRelayAnswers(body: String) throws {
        let gw = try TestGateway()
        let r = gw.request(.post, "/api/sendPushNotification", raw: Array(body.utf8), token: nil,
                           headers: ["Content-Type": "application/json"])
        #expect(r.status == 403 && r.json["errorMessage"] == "You did not send a token!")
        #expect(r.json["field"] == "push_token" && r.json["rule"] == "required")
    }

    /// What HA's relay takes and the apps render is never refused on the relay path: each field a strict rule
    /// refuses is read as the apps read it and named in a warning (field and rule); `/v1/push` stays strict and
    /// answers 400 naming the same field and rule.
    @Test(arguments: [
        (#"{"data":{"tag":"bad tag!","live_update":true}}"#, "data.tag", "pattern"),
        (#"{"data":{"live_update":true}}"#, "data.tag", "required"),
        (#"{"data":{"tag":"a","live_update":true,"progress":-1}}"#, "data.progress", "non_negative"),
        (#"{"data":{"tag":"a","live_update":true,"progress":"unavailable"}}"#, "data.progress", "type"),
        (#"{"data":{"tag":"a","live_update":true,"progress_max":0}}"#, "data.progress_max", "positive"),
        (#"{"data":{"tag":"a","live_update":true,"chronometer":true}}"#, "data.chronometer", "requires_when"),
        (##"{"data":{"tag":"a","live_update":true,"notification_icon_color":"#12"}}"##, "data.notification_icon_color", "color"),
        (#"{"data":{"tag":"a","live_update":true,"notification_icon_color":"rgb(33,150,243)"}}"#, "data.notification_icon_color", "color"),
        (#"{"data":{"tag":"a","live_update":true,"notification_icon":"mdi:Washing_Machine"}}"#, "data.notification_icon", "pattern"),
        (#"{"data":{"tag":"a","live_update":true,"stale_date":1e300}}"#, "data.stale_date", "range"),
        (#"{"data":[]}"#, "data", "type"),
        (#"{"data":[1,2],"message":"m"}"#, "data", "type"),
        (#"{"data":{"lanpush":{"path":"cloud"}}}"#, "data.lanpush.path", "enum"),
    ])
    func onTheRelayPathAFieldTheStrictRulesRefuseIsAWarning(fields: String, field: String, rule: String) throws {
        var config = TestGateway.defaultConfig()
        config.devices[0].notifications = .lan  // what becomes a plain notification stays on the LAN too
        let gw = try TestGateway(config: config)
        let s = gw.connect("phone")
        s.register("tok")
        var body = Array(#"{"push_token":"tok","#.utf8)
        body += Array(fields.utf8.dropFirst())
        let relay = gw.request(.post, "/api/sendPushNotification", raw: body, token: nil, headers: ["Content-Type": "application/json"])
        #expect(relay.status == 201, "\(relay.text)")
        let warnings = relay.json["warnings"]?.arrayValue ?? []
        #expect(warnings.contains { $0["rule"] == .string(rule) && ($0["field"]?.stringValue?.hasPrefix(field) ?? false) },
                "\(relay.text)")
        #expect(gw.device("phone")?["seq"] == 1, "delivered")
        let push = gw.request(.post, "/v1/push", raw: Array(fields.utf8), headers: ["Content-Type": "application/json"])
        #expect(push.status == 400 && push.json["field"] == .string(field) && push.json["rule"] == .string(rule), "\(push.text)")
        #expect(gw.device("phone")?["seq"] == 1, "nothing applied for the refused /v1/push")
    }

    /// The HA payloads the LAN-attacker review found refused, and what each delivers to the LAN.
    @Test func theHAPayloadsOnceRefusedAreDeliveredAsTheAppsShowThem() throws {
        var config = TestGateway.defaultConfig()
        config.devices[0].notifications = .lan
        let gw = try TestGateway(config: config)
        let s = gw.connect("phone")
        s.register("tok")
        func post(_ data: JSONValue, title: String? = "Washer") -> TestResponse {
            defer { s.read() }
            return gw.relayBody("tok", title: title, message: "Rinsing", data: data)
        }
        #expect(post(["tag": "washer.cycle", "live_update": true]).status == 201)
        #expect(s.state("washer.cycle") == ["message": "Rinsing", "title": "Washer"])
        #expect(post(["live_update": true, "progress": 10]).status == 201)
        #expect(s.notifications.last?["message"] == "Rinsing", "no tag: a plain notification")
        #expect(post(["tag": "w", "live_update": true, "progress": "unavailable", "progress_max": 100]).status == 201)
        #expect(s.state("w") == ["message": "Rinsing", "title": "Washer", "progress_max": 100], "no bar")
        #expect(post(["tag": "w", "live_update": true, "chronometer": true]).status == 201)
        #expect(s.state("w") == ["message": "Rinsing", "title": "Washer"], "no timer")
        #expect(post(["tag": "w", "live_update": true, "progress": 5, "progress_max": 0]).status == 201)
        #expect(s.state("w") == ["message": "Rinsing", "title": "Washer", "progress": 5])
        #expect(post(["tag": "w", "live_update": true, "notification_icon": "mdi:Washing_Machine"]).status == 201)
        #expect(s.state("w")?["icon"] == "mdi:washing-machine")
        #expect(post(["tag": "w", "live_update": true, "notification_icon_color": "rgb(33,150,243)", "color": "2196F3"]).status == 201)
        #expect(s.state("w")?["color"] == "#2196F3", "the colour the apps read wins; rgb() is ignored")
        // The coercions are counted per field and rule.
        #expect(gw.core.ingest.coercions["data.progress|type"] == 1)
    }

    @Test func aLiveUpdateWithoutTitleIsAcceptedWithAWarning() throws {
        let gw = try TestGateway()
        gw.connect("phone").register("tok-phone")
        let relay = gw.relayBody("tok-phone", message: "Washing", data: Payload.live("washer"))
        #expect(relay.status == 201)
        let warning = try #require(relay.json["warnings"]?.arrayValue?.first)
        #expect(warning["field"] == "title" && warning["message"]?.stringValue?.contains("Android") == true)
        let push = gw.push(Payload.liveUpdate(["tablet"], tag: "oven", title: nil, message: "Baking"))
        #expect(push.status == 202 && push.json["warnings"]?.arrayValue?.first?["field"] == "title")
        // A title, or a plain notification without one, warns of nothing.
        #expect(gw.relayBody("tok-phone", title: "Washer", message: "Rinsing", data: Payload.live("washer")).json["warnings"] == nil)
        #expect(gw.push(Payload.push(["tablet"], message: "Door")).json["warnings"] == nil)
    }

    @Test func pushAnswersWithAResultPerTarget() throws {
        var config = TestGateway.defaultConfig(devices: ["phone", "tablet", "watch"])
        config.devices[2].notifications = .relay
        let gw = try TestGateway(config: config)
        _ = gw.connect("phone")
        gw.goneDevice("tablet", pushToken: "tok-tablet")
        let r = gw.push(Payload.push(["phone", "tablet", "watch", "ghost"], title: "Door", message: "Front door"))
        #expect(r.status == 202)
        #expect(r.json["results"] == [
            ["target": "phone", "result": "delivered"], ["target": "tablet", "result": "relay"],
            ["target": "watch", "result": "no_relay"], ["target": "ghost", "result": "unknown_target"],
        ])
        // A live update for the gone tablet waits for it and goes to the relay.
        let live = gw.push(Payload.liveUpdate(["tablet"], tag: "oven", message: "Baking"))
        #expect(live.json["results"] == [["target": "tablet", "result": "relay"]])
    }

    /// The 202 is written without building a dictionary per target: the same bytes as the JSON value it stands for
    /// (sorted members), whatever the words, the relay flag, escapes in a name and the warnings.
    @Test func pushAnswerIsByteForByteItsJSONValue() {
        let results = [
            TargetResult(target: "phone", word: .delivered, relay: true), TargetResult(target: "tab\"let\u{1}é", word: .relay, relay: false),
            TargetResult(target: "ghost", word: .unknownTarget, relay: false), TargetResult(target: "tv", word: .noRelay, relay: false),
            TargetResult(target: "watch", word: .queued, relay: true),
        ]
        let warnings: [JSONValue] = [["field": "title", "rule": "missing", "message": "a \"title\""]]
        for (rs, ws) in [(results, warnings), (results, []), ([], warnings), ([], [])] {
            var value: [String: JSONValue] = ["results": .array(rs.map(\.json))]
            if !ws.isEmpty { value["warnings"] = .array(ws) }
            #expect(TargetResult.answer(rs, warnings: ws) == JSONValue.object(value).serializedBytes())
        }
        #expect(results[0].json == ["target": "phone", "result": "delivered", "relay": true])
    }

    @Test(arguments: [
        (["targets": ["ghost"], "message": "x"] as JSONValue, 404, "targets", "exists"),
        (["targets": [], "message": "x"] as JSONValue, 404, "targets", "exists"),
        (["targets": 5, "message": "x"] as JSONValue, 400, "targets", "type"),
        (["targets": ["phone", 5], "message": "x"] as JSONValue, 400, "targets[1]", "type"),
        (["x", "y"] as JSONValue, 400, "", "type"),
    ])
    func aPushWithNoUsableTargetIsRefused(body: JSONValue, status: Int, field: String, rule: String) throws {
        let gw = try TestGateway()
        let r = gw.push(body)
        #expect(r.status == status && r.json["field"] == .string(field) && r.json["rule"] == .string(rule), "\(r.text)")
        if status == 404 { #expect(r.json["results"] != nil) }
        #expect(gw.device("phone")?["seq"] == 0)
    }

    @Test func aDuplicateIsAnswered201WithoutCountingAgain() throws {
        let gw = try TestGateway()
        gw.goneDevice()
        let extra: [String: JSONValue] = ["hass_confirm_id": "c-9"]
        let first = gw.relayBody("tok-phone", message: "Door", data: ["lanpush": ["path": "lan"]], extra: extra)
        let again = gw.relayBody("tok-phone", message: "Door", data: ["lanpush": ["path": "lan"]], extra: extra)
        #expect(first.status == 202 && again.status == 201)
        #expect(again.json["rateLimits"]?["successful"] == 1 && again.json["rateLimits"]?["attempts"] == 1)
        #expect(gw.relayRequests.count == 1)
    }
}
