import LanpushCore
import LanpushLWS
import LanpushTesting
import Testing

@testable import LanpushGateway

/// `GET` and `DELETE /v1/activities[/{tag}]` (ActivityCommands behind StateEndpoints), `GET /v1/devices` and
/// `/healthz`: listings, ends with the Scripting app's dismissal policies, re-dismissal of an ended activity, 404s.
@Suite struct StateEndpointsTests {
    /// `washer` on both devices, `oven` on phone only.
    static func gateway() throws -> TestGateway {
        let gw = try TestGateway()
        gw.push(Payload.liveUpdate(["phone", "tablet"], tag: "washer", message: "Washing"))
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", title: "Oven", message: "Baking"))
        return gw
    }

    static func listed(_ r: TestResponse) -> [String] {
        (r.json["activities"]?.arrayValue ?? []).map { "\($0["device_id"]?.stringValue ?? "?")/\($0["tag"]?.stringValue ?? "?")" }
    }

    @Test func activitiesAreListedPerDeviceAndTag() throws {
        let gw = try Self.gateway()
        #expect(Self.listed(gw.request(.get, "/v1/activities")) == ["phone/oven", "phone/washer", "tablet/washer"])
        #expect(Self.listed(gw.request(.get, "/v1/activities", query: [("device", "phone")])) == ["phone/oven", "phone/washer"])
        #expect(Self.listed(gw.request(.get, "/v1/activities/washer")) == ["phone/washer", "tablet/washer"])
        let oven = try #require(gw.request(.get, "/v1/activities/oven").json["activities"]?.arrayValue?.first)
        #expect(oven["phase"] == "active" && oven["state"] == ["message": "Baking", "title": "Oven"] && oven["attributes"]?["title"] == "Oven")
        #expect(oven["updated_at"] == .number(gw.clock.now))
        // The viewer token reads too.
        #expect(gw.request(.get, "/v1/activities", token: TestGateway.viewerToken).status == 200)
    }

    @Test(arguments: [
        (HTTPMethod.get, "/v1/activities/nothing", [(String, String)](), "tag"),
        (.get, "/v1/activities", [("device", "ghost")], "device"),
        (.delete, "/v1/activities/nothing", [], "tag"),
        (.delete, "/v1/activities", [("device", "ghost")], "device"),
        (.get, "/v1/activities/oven", [("device", "tablet")], "tag"),
    ])
    func anUnknownTagOrDeviceIs404NamingIt(method: HTTPMethod, path: String, query: [(String, String)], field: String) throws {
        let gw = try Self.gateway()
        let r = gw.request(method, path, query: query)
        #expect(r.status == 404 && r.json["field"] == .string(field) && r.json["rule"] == "exists")
        #expect(Self.listed(gw.request(.get, "/v1/activities")).count == 3, "nothing was ended")
    }

    @Test func deletingATagEndsItOnEveryDeviceVisibleForFourHours() throws {
        let gw = try Self.gateway()
        let s = gw.connect("tablet")
        let r = gw.request(.delete, "/v1/activities/washer")
        #expect(r.status == 200)
        #expect(r.json["ended"] == [["device_id": "phone", "tag": "washer"], ["device_id": "tablet", "tag": "washer"]])
        let end = try #require(s.frames("end").first)
        #expect(end["dismissal_date"] == .number(gw.clock.now + 4 * 3600) && end["phase"] == nil)
        let listed = gw.request(.get, "/v1/activities/washer").json["activities"]?.arrayValue ?? []
        #expect(listed.count == 2 && listed.allSatisfy { $0["phase"] == "ended" })
        #expect(gw.request(.get, "/v1/activities/oven").json["activities"]?.arrayValue?.first?["phase"] == "active")
    }

    @Test func deletingEverythingOfOneDeviceLeavesTheOthers() throws {
        let gw = try Self.gateway()
        let r = gw.request(.delete, "/v1/activities", query: [("device", "phone"), ("dismissal", "immediate")])
        #expect(r.json["ended"] == [["device_id": "phone", "tag": "oven"], ["device_id": "phone", "tag": "washer"]])
        #expect(Self.listed(gw.request(.get, "/v1/activities")) == ["tablet/washer"])
        // Nothing left to end on phone: an empty list, not a 404 (only a named tag can be missing).
        let again = gw.request(.delete, "/v1/activities", query: [("device", "phone")])
        #expect(again.status == 200 && again.json["ended"] == [])
    }

    @Test(arguments: [
        ("immediate", 0.0, true), ("default", 4 * 3600.0, false), ("90", 90.0, false), ("0", 0.0, true),
        ("-5", 0.0, true), ("86400", 86400.0, false), ("-86400", 0.0, true),
    ])
    func theDismissalPolicies(value: String, after: Double, gone: Bool) throws {
        let gw = try Self.gateway()
        let s = gw.connect("phone")
        #expect(gw.request(.delete, "/v1/activities/oven", query: [("dismissal", value)]).status == 200)
        let end = try #require(s.frames("end").first)
        #expect(end["dismissal_date"] == .number(gw.clock.now + after))
        #expect(end["phase"] == (gone ? "dismissed" : nil))
        #expect(gw.request(.get, "/v1/activities/oven").status == (gone ? 404 : 200))
    }

    @Test(arguments: ["1e300", "-1e300", "inf", "nan", "1e6", "86401", "soon", ""])
    func aDismissalOutOfRangeIs400(value: String) throws {
        let gw = try Self.gateway()
        let r = gw.request(.delete, "/v1/activities/oven", query: [("dismissal", value)])
        #expect(r.status == 400 && r.json["field"] == "dismissal" && r.json["rule"] == "enum")
        #expect(gw.request(.get, "/v1/activities/oven").json["activities"]?.arrayValue?.first?["phase"] == "active")
    }

    @Test func anEndedActivityTakesANewDismissalAndThenIsGone() throws {
        let gw = try Self.gateway()
        let s = gw.connect("phone")
        #expect(gw.request(.delete, "/v1/activities/oven").status == 200)
        gw.advance(by: 5)
        s.ack()
        let r = gw.request(.delete, "/v1/activities/oven", query: [("dismissal", "60")])
        #expect(r.status == 200 && r.json["ended"] == [["device_id": "phone", "tag": "oven"]])
        // One more end frame: an empty patch and the new dismissal, counted from now.
        let again = try #require(s.frames("end").last)
        #expect(s.frames("end").count == 2)
        #expect(again["patch"] == [:] && again["phase"] == nil && again["dismissal_date"] == .number(gw.clock.now + 60))
        s.ack()
        // Dismissed at once: the client removes it.
        #expect(gw.request(.delete, "/v1/activities/oven", query: [("dismissal", "immediate")]).status == 200)
        #expect(s.frames.last == ["type": "lifecycle", "seq": 5, "tag": "oven", "phase": "dismissed"])
        #expect(gw.request(.get, "/v1/activities/oven").status == 404)
        let gone = gw.request(.delete, "/v1/activities/oven")
        #expect(gone.status == 404 && gone.json["field"] == "tag")
    }

    @Test func devicesAndHealthDescribeTheGateway() throws {
        let gw = try Self.gateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        let devices = gw.request(.get, "/v1/devices", token: TestGateway.viewerToken).json["devices"]?.arrayValue ?? []
        #expect(devices.map { $0["id"] } == ["phone", "tablet"])
        let phone = try #require(devices.first)
        #expect(phone["name"] == "Phone" && phone["connected"] == true && phone["sessions"] == 1 && phone["path"] == "lan")
        #expect(phone["activities"] == 2 && phone["seq"] == 2 && phone["notifications"] == "auto")
        #expect(phone["epoch"]?.stringValue?.isEmpty == false && phone["last_seen"] == .number(gw.clock.now))
        #expect(devices.last?["path"] == "none" && devices.last?["registration"] == nil)
        let health = gw.request(.get, "/healthz", token: nil).json
        #expect(health["status"] == "ok" && health["sessions"] == 1 && health["devices"] == 2)
        #expect(health["version"] == .string(LanpushVersion.current))
    }
}
