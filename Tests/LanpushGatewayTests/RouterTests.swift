import LanpushCore
import LanpushLWS
import LanpushTesting
import Testing

@testable import LanpushGateway

/// The HTTP layer before any endpoint: authentication, unknown paths and methods, content type and JSON checks,
/// paths that must never reach an endpoint, and the open and token-guarded reads. Every error is JSON naming the
/// field and the rule.
@Suite struct RouterTests {
    static func expectError(_ r: TestResponse, _ status: Int, field: String, rule: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == status, "\(r.text)", sourceLocation: sourceLocation)
        #expect(r.contentType == "application/json", sourceLocation: sourceLocation)
        #expect(r.json["field"] == .string(field) && r.json["rule"] == .string(rule), "\(r.text)", sourceLocation: sourceLocation)
        #expect(r.json["message"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        (nil, "missing bearer token"),
        ("wrong-token", "invalid token"),
        (TestGateway.viewerToken, "the viewer token cannot write"),
        (TestGateway.token(for: "phone"), "invalid token"),  // a device's token is no API token
    ] as [(String?, String)])
    func writesNeedTheAdminToken(token: String?, message: String) throws {
        let gw = try TestGateway()
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking"))
        for r in [
            gw.request(.post, "/v1/push", json: Payload.push(message: "x"), token: token),
            gw.request(.delete, "/v1/activities/oven", token: token),
            gw.request(.delete, "/v1/activities", token: token),
        ] {
            Self.expectError(r, 401, field: "authorization", rule: "auth")
            #expect(r.json["message"]?.stringValue?.hasPrefix(message) == true)
        }
        #expect(gw.device("phone")?["seq"] == 1, "nothing was applied")
    }

    /// A refusal names what was sent, but never repeats a large input whole: message and field are cut to 512 bytes
    /// of UTF-8 (at a character boundary, ending in `…`), whatever the size of the key or header they quote.
    @Test func aRefusalQuotesAtMost512BytesOfWhatWasSent() throws {
        let gw = try TestGateway()
        let key = String(repeating: "ключ", count: 5_000)  // 40,000 bytes of two-byte characters
        let r = gw.request(.post, "/v1/devices", json: .object(["id": "porch", key: 1]))
        #expect(r.status == 400 && r.json["rule"] == "unknown_key")
        let message = try #require(r.json["message"]?.stringValue)
        let field = try #require(r.json["field"]?.stringValue)
        #expect(message.utf8.count <= 512 && message.hasSuffix("…") && message.hasPrefix("ключключ"))
        #expect(field.utf8.count <= 512 && field.hasSuffix("…") && key.hasPrefix(field.dropLast()))
        #expect(r.body.count < 2_000)
        // A short one is quoted as it is.
        let short = gw.request(.post, "/v1/devices", json: ["id": "porch", "colour": 1])
        #expect(short.json["field"] == "colour" && short.json["message"]?.stringValue?.hasSuffix("…") == false)
    }

    @Test func theBearerSchemeIsCaseInsensitiveAndBlanksAroundTheTokenDoNotCount() {
        #expect(Router.bearerToken("Bearer abc") == "abc")
        #expect(Router.bearerToken("bEaReR   abc  ") == "abc")
        #expect(Router.bearerToken("Bearer ") == "")
        #expect(Router.bearerToken("Bearer\u{0}abc") == "")  // only a blank separates the scheme
        #expect(Router.bearerToken("Basic abc") == "")
        #expect(Router.bearerToken("Bearerabc") == "")
        #expect(Router.bearerToken("") == "")
    }

    @Test func readsTakeTheAdminOrViewerTokenAndNothingElse() throws {
        let gw = try TestGateway()
        for path in ["/v1/devices", "/v1/activities", "/metrics"] {
            #expect(gw.request(.get, path).status == 200)
            #expect(gw.request(.get, path, token: TestGateway.viewerToken).status == 200)
            Self.expectError(gw.request(.get, path, token: nil), 401, field: "authorization", rule: "auth")
            Self.expectError(gw.request(.get, path, token: "nope"), 401, field: "authorization", rule: "auth")
        }
        // The scheme is case-insensitive and spaces around the token do not matter.
        let lower = gw.request(.get, "/v1/devices", token: nil, headers: ["Authorization": "bearer   \(TestGateway.adminToken) "])
        #expect(lower.status == 200)
        Self.expectError(gw.request(.get, "/v1/devices", token: nil, headers: ["Authorization": TestGateway.adminToken]),
                         401, field: "authorization", rule: "auth")
    }

    @Test func healthzIsOpenAndMetricsOnlyWithOpenMetrics() throws {
        let gw = try TestGateway()
        let health = gw.request(.get, "/healthz", token: nil)
        #expect(health.status == 200 && health.json["status"] == "ok")
        #expect(gw.request(.head, "/healthz", token: nil).status == 200)
        let metrics = gw.request(.get, "/metrics")
        #expect(metrics.contentType.hasPrefix("text/plain; version=0.0.4") && metrics.header("Cache-Control") == "no-cache")
        var config = TestGateway.defaultConfig()
        config.openMetrics = true
        let open = try TestGateway(config: config)
        #expect(open.request(.get, "/metrics", token: nil).status == 200)
        // Only metrics: everything else still needs its token.
        #expect(open.request(.get, "/v1/devices", token: nil).status == 401)
    }

    @Test(arguments: ["/v1/nope", "/v1", "/api/sendPush/ios/v1", "/v1/activities/a/b", "/v1/devices/phone/extra", "/preview/nothing.js"])
    func anUnknownPathIs404(path: String) throws {
        let gw = try TestGateway()
        Self.expectError(gw.request(.get, path), 404, field: "path", rule: "exists")
    }

    @Test(arguments: [
        (HTTPMethod.put, "/v1/push"), (.get, "/v1/push"), (.get, "/api/sendPushNotification"),
        (.get, "/api/sendPush/android/v1"), (.put, "/v1/devices"), (.delete, "/healthz"), (.post, "/v1/activities/oven"),
        (.post, "/metrics"), (.put, "/v1/activities"),
    ])
    func aKnownPathWithTheWrongMethodIs405(method: HTTPMethod, path: String) throws {
        let gw = try TestGateway()
        Self.expectError(gw.request(method, path), 405, field: "method", rule: "method")
    }

    @Test(arguments: [
        (nil as String?, 400), ("text/plain", 400), ("application/x-www-form-urlencoded", 400),
        ("application/json", 201), ("application/json; charset=utf-8", 201), ("Application/JSON", 201),
        // Only application/json: a page on another site may send text/plain (even "text/plain;x=+json") without
        // a preflight, and a +json type was how such a request got in.
        ("application/vnd.lanpush+json", 400), ("text/plain;x=+json", 400), ("text/plain; charset=utf-8", 400),
        ("application/jso", 400), ("json", 400), ("application/json+", 400), ("application/xjson", 400),
        (" application/json ;charset=utf-8", 201), ("application/jsonx", 400),
    ])
    func theBodyMustBeDeclaredJSON(contentType: String?, status: Int) throws {
        let gw = try TestGateway()
        gw.connect("phone").register("tok")
        let body = Array(#"{"push_token":"tok","message":"hi","data":{"tag":"a","live_update":true}}"#.utf8)
        let r = gw.request(.post, "/api/sendPushNotification", raw: body, token: nil,
                           headers: contentType.map { ["Content-Type": $0] } ?? [:])
        if status == 400 {
            Self.expectError(r, 400, field: "content-type", rule: "content_type")
        } else {
            #expect(r.status == status)
        }
    }

    @Test(arguments: [
        #"{not json"#, "", #"{"push_token":"t","message":"m","data":[],"data":{}}"#, #"{"a":1}x"#,
    ])
    func aBodyThatIsNoSingleJSONValueIs400(body: String) throws {
        let gw = try TestGateway()
        for path in ["/api/sendPushNotification", "/v1/push"] {
            let r = gw.request(.post, path, raw: Array(body.utf8), headers: ["Content-Type": "application/json"])
            Self.expectError(r, 400, field: "body", rule: "json")
        }
        let repeated = gw.request(.post, "/v1/push", raw: Array(#"{"message":"a","message":"b"}"#.utf8),
                                  headers: ["Content-Type": "application/json"])
        #expect(repeated.json["message"]?.stringValue?.contains("repeated key") == true)
        #expect(gw.device("phone")?["seq"] == 0 && gw.device("tablet")?["seq"] == 0)
    }

    /// lws cuts a decoded path at `%00`: `DELETE /v1/activities/%00` arrives as `/v1/activities/`, which must not
    /// read as "every activity".
    @Test(arguments: [
        (HTTPMethod.delete, "/v1/activities/"), (.delete, "/v1/activities/\0"), (.get, "/v1/activities/\0"),
        (.delete, "/v1//activities"), (.get, "//v1/devices"), (.post, "/v1/push/"),
    ])
    func emptySegmentsAndNULNeverReachAnEndpoint(method: HTTPMethod, path: String) throws {
        let gw = try TestGateway()
        gw.push(Payload.liveUpdate(["phone"], tag: "a", message: "m"))
        let r = gw.request(method, path, query: [("device", "phone")])
        Self.expectError(r, 400, field: "path", rule: "segment")
        #expect(gw.request(.get, "/v1/activities/a").json["activities"]?.arrayValue?.first?["phase"] == "active")
    }

    @Test(arguments: ["/", "/preview", "/preview/", "/preview/index.html"])
    func thePreviewIsServedOpenWithOrWithoutATrailingSlash(path: String) throws {
        let gw = try TestGateway()
        let r = gw.request(.get, path, token: nil)
        #expect(r.status == 200 && r.contentType == "text/html; charset=utf-8")
        #expect(r.header("Cache-Control") == "no-cache" && r.text.contains("<html"))
    }
}
