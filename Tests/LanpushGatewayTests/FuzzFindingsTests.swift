import LanpushCore
import LanpushStore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// What the fuzz targets (Fuzz/, docs/RELIABILITY.md) found, kept as regression tests. The config loader's finding
/// is in ConfigLoaderTests.
@Suite struct FuzzFindingsTests {
    /// `scripts/fuzz store`: SQLite takes and gives text columns as C strings, so a NUL cut a stored string short
    /// and a restart brought back another value than was accepted. Strings that reach text columns from outside
    /// (a client's relay credentials and push-to-start token, a device's name) are refused with a NUL instead.
    @Test func relayCredentialsWithANULAreRefusedNotStoredCut() throws {
        let gw = try TestGateway(store: true)
        let s = gw.connect("phone")
        s.register("tok\u{0}tail")
        #expect(s.errors.last?.contains("NUL") == true)
        s.register("tok", pushURL: "http://relay.test/api\u{0}/x")
        #expect(s.errors.count == 2)
        s.send(["type": "push_to_start_token", "token": "pts\u{0}x"])
        #expect(s.errors.count == 3)
        s.register("tok-ok")
        #expect(s.errors.count == 3)
        try gw.restart()
        #expect(gw.device("phone")?["registration"]?["push_token"] == "tok-ok")
        #expect(try gw.storedState().devices["phone"]?.pushToStartToken == nil)
    }

    @Test func aDeviceNameWithANULIsA400NamingTheField() throws {
        let gw = try TestGateway(store: true)
        let added = gw.request(.post, "/v1/devices", json: ["id": "kitchen", "name": "Kit\u{0}chen"])
        #expect(added.status == 400 && added.json["field"] == "name" && added.json["rule"] == "nul")
        #expect(gw.request(.post, "/v1/devices", json: ["id": "kitchen", "name": "Kitchen"]).status == 201)
        let renamed = gw.request(.patch, "/v1/devices/kitchen", json: ["name": "a\u{0}b"])
        #expect(renamed.status == 400 && renamed.json["rule"] == "nul")
        let paired = gw.request(.post, "/v1/pairings", json: ["device": "hall", "name": "H\u{0}all"])
        #expect(paired.status == 400 && paired.json["field"] == "name")
        try gw.restart()
        #expect(gw.device("kitchen")?["name"] == "Kitchen")
    }
}
