import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// A session speaks the version its handshake chose (or its `auth` frame asked for), whatever the other sessions of
/// the same device speak.
@Suite struct ProtocolVersionTests {
    @Test func aV2SessionGetsArraysBesideAV1SessionOfTheSameDevice() throws {
        let gw = try TestGateway()
        let v1 = gw.connect("phone")
        let v2 = gw.connect("phone", subprotocol: ProtocolVersion.v2.rawValue)
        #expect(v1.transport.sent.first?["version"] == "lanpush.v1")
        #expect(v2.transport.sent.first?["version"] == "lanpush.v2", "auth_required says the handshake's version")
        #expect(v2.frames("auth_ok").first?["version"] == "lanpush.v2")
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Preheating", ["progress": 10, "progress_max": 100]))
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking", ["progress": 20, "progress_max": 100]))
        let raw = v2.transport.sent.filter { $0.arrayValue != nil }
        #expect(raw.map { $0.arrayValue?.first } == ["start", "update"])
        #expect(raw.last == ["update", 2, "oven", ["message": "Baking", "progress": 20]], "no phase: the update made it active")
        #expect(v1.frames("update").last?["phase"] == "active", "the v1 session still gets objects")
        #expect(!v1.transport.sent.contains { $0.arrayValue != nil })
        v1.read()
        v2.read()
        #expect(v2.activities == v1.activities, "both hold the same activity")
        #expect(v2.state("oven")?["message"] == "Baking")
    }

    @Test func theAuthFrameChoosesForASocketWithoutSubprotocols() throws {
        let gw = try TestGateway()
        let s = gw.open()
        s.send(["type": "auth", "token": .string(TestGateway.token(for: "phone")), "version": "lanpush.v2"])
        s.send(["type": "subscribe"])
        #expect(s.frames("auth_ok").first?["version"] == "lanpush.v2")
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking"))
        #expect(s.transport.sent.last?.arrayValue?.first == "start")
    }

    @Test func anUnknownVersionKeepsTheSessionsOwn() throws {
        let gw = try TestGateway()
        let s = gw.open(subprotocol: ProtocolVersion.v2.rawValue)
        s.send(["type": "auth", "token": .string(TestGateway.token(for: "phone")), "version": "lanpush.v9"])
        s.send(["type": "subscribe"])
        #expect(s.frames("auth_ok").first?["version"] == "lanpush.v2", "auth_ok names the version spoken")
        let old = gw.open(subprotocol: ProtocolVersion.v2.rawValue)
        old.send(["type": "auth", "token": .string(TestGateway.token(for: "phone")), "version": "lanpush.v1"])
        #expect(old.frames("auth_ok").first?["version"] == "lanpush.v1", "a client may ask for the older version")
    }

    @Test func aVersionThatIsNoStringIsRefused() throws {
        let gw = try TestGateway()
        let s = gw.open()
        s.send(["type": "auth", "token": .string(TestGateway.token(for: "phone")), "version": 2])
        #expect(s.frames("auth_invalid").first?["message"]?.stringValue?.contains("version") == true)
        #expect(s.closeCode == 4001)
    }

    @Test func aV2ObserverGetsTheDeviceInTheExtras() throws {
        let gw = try TestGateway()
        let o = gw.open(subprotocol: ProtocolVersion.v2.rawValue)
        o.send(["type": "auth", "token": .string(TestGateway.adminToken), "role": "observer"])
        o.send(["type": "subscribe"])
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking"))
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Done"))
        let update = try #require(o.transport.sent.last?.arrayValue)
        #expect(update.count == 5 && update[0] == "update")
        #expect(update[4] == ["device_id": "phone"])
    }
}
