import Foundation
import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// The device session's vectors (`Tests/Fixtures/protocol/session/*.json`): what a client sends from the socket's
/// opening to its relay-path frames, and what the gateway answers — the handshake (`auth`'s `keepalive`), `register`
/// and the push_token it claims, `unregister`, and the `error` frames with their `field` and `rule`. Recorded from the
/// gateway (these frames are its, not the core's), compared on every run; `LANPUSH_RECORD_VECTORS=1` rewrites them.
/// `{"format":1,"role":"device","name","description","devices","steps":[{"session","peer"?,"open"|"send"|"close",
/// "frames","closed"?}]}`: each step opens a session, sends one frame or closes it; `frames` are the gateway's answers
/// to that step on that session, `closed` the close code and reason it ended it with.
@Suite struct SessionVectorTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/protocol/session")
    static let recording = ProcessInfo.processInfo.environment["LANPUSH_RECORD_VECTORS"] == "1"

    /// One step of a scenario: a session opens (from `peer`), sends a frame, or goes away.
    enum Step {
        case open(String, peer: String = "192.168.1.20")
        case send(String, JSONValue)
        case close(String)
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        let name: String
        let summary: String
        var devices = ["phone", "tablet"]
        var configure: @Sendable (inout GatewayConfig) -> Void = { _ in }
        let steps: [Step]
        var testDescription: String { name }
    }

    static func auth(_ device: String, _ extra: [String: JSONValue] = [:]) -> JSONValue {
        var o: [String: JSONValue] = ["type": "auth", "token": .string(TestGateway.token(for: device))]
        for (k, v) in extra { o[k] = v }
        return .object(o)
    }

    static let registration: JSONValue = [
        "type": "register", "push_token": "fcm:phone", "push_url": "https://relay.example/api/sendPushNotification",
        "registration_info": ["app_id": "io.robbie.HomeAssistant", "webhook_id": "hook-phone"],
    ]
    static let stolenURL: JSONValue = ["type": "register", "push_token": "fcm:phone", "push_url": "http://192.168.1.1/steal"]
    static let longToken: JSONValue = ["type": "register", "push_token": .string(String(repeating: "t", count: 513))]
    static let claim: JSONValue = ["type": "register", "push_token": "fcm:phone"]

    static let handshake: [Step] = [
        .open("a"), .send("a", auth("phone", ["keepalive": 120])), .send("a", ["type": "subscribe"]),
        .send("a", registration), .send("a", stolenURL), .send("a", longToken),
        .send("a", ["type": "unregister"]), .send("a", ["type": "ack", "seq": "one"]), .send("a", ["type": "what"]),
        .send("a", ["type": "ping"]),
        .open("b"), .send("b", auth("tablet", ["keepalive": 5])),
        .open("c"), .send("c", auth("tablet", ["keepalive": 86400])),
        .open("d"), .send("d", auth("tablet", ["keepalive": "often"])),
    ]

    static let ownership: [Step] = [
        .open("phone"), .send("phone", auth("phone")), .send("phone", claim),
        .open("tablet"), .send("tablet", auth("tablet")), .send("tablet", claim),
        .send("phone", ["type": "unregister"]),
        .send("tablet", claim),
    ]

    static let noRoom: [Step] = [
        .open("a"), .open("b"), .open("c"),
        .open("d", peer: "192.168.1.21"), .send("d", auth("phone")),
        .send("a", auth("tablet")),
    ]

    static let scenarios: [Scenario] = [
        Scenario(
            name: "handshake",
            summary: "auth with a keepalive (held to session.keepalive_min … keepalive_max), register, unregister, and frames refused with their field and rule.",
            steps: handshake),
        Scenario(
            name: "push-token-ownership",
            summary: "A push_token belongs to the device that registered it until that device unregisters it: another device's claim is refused.",
            steps: ownership),
        Scenario(
            name: "no-room",
            summary: "Sockets that never authenticate are bounded per address; sessions count toward max_sessions from their auth.",
            configure: { config in
                config.limits.unauthenticatedPerAddress = 2
                config.limits.maxSessions = 1
            },
            steps: noRoom),
    ]

    @Test(arguments: scenarios)
    func theGatewayAnswersAsTheVectorSays(_ scenario: Scenario) throws {
        let recorded = try Self.record(scenario)
        let file = Self.directory.appendingPathComponent("\(scenario.name).json")
        if Self.recording {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            let object = try JSONSerialization.jsonObject(with: Data(recorded.serializedBytes()))
            let pretty = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            try (pretty + Data("\n".utf8)).write(to: file)
            return
        }
        let committed = try JSONValue.parse(Array(Data(contentsOf: file)))
        #expect(committed == recorded, "session/\(scenario.name).json differs from the gateway")
    }

    @Test(.disabled(if: recording, "files are being rewritten")) func everyCommittedVectorHasAScenario() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".json") }
        #expect(Set(files.map { String($0.dropLast(5)) }) == Set(Self.scenarios.map(\.name)))
    }

    /// A device's epoch is random per gateway start: the vectors say `"epoch-a"`, as the core's vectors do.
    static func stableEpoch(_ frame: JSONValue) -> JSONValue {
        guard case .object(var o) = frame, o["epoch"]?.stringValue != nil else { return frame }
        o["epoch"] = "epoch-a"
        return .object(o)
    }

    static func record(_ scenario: Scenario) throws -> JSONValue {
        var config = TestGateway.defaultConfig(devices: scenario.devices)
        scenario.configure(&config)
        let gw = try TestGateway(config: config, clock: ManualClock(1_700_000_000))
        var sessions: [String: TestSession] = [:]
        var steps: [JSONValue] = []
        for step in scenario.steps {
            var entry: [String: JSONValue]
            let session: TestSession
            switch step {
            case .open(let name, let peer):
                session = gw.open(peer: peer)
                sessions[name] = session
                entry = ["session": .string(name), "peer": .string(peer), "open": true]
            case .send(let name, let frame):
                session = try #require(sessions[name])
                entry = ["session": .string(name), "send": frame]
                let before = session.frames.count
                session.send(frame)
                entry["frames"] = .array(session.frames.dropFirst(before).map(stableEpoch))
            case .close(let name):
                session = try #require(sessions[name])
                session.close()
                entry = ["session": .string(name), "close": true]
            }
            if case .open = step { entry["frames"] = .array(session.frames.map(stableEpoch)) }
            if let closed = session.transport.closed {
                entry["closed"] = ["code": .number(Double(closed.code)), "reason": .string(closed.reason)]
            }
            steps.append(.object(entry))
        }
        return [
            "format": 1, "role": "device", "name": .string(scenario.name), "description": .string(scenario.summary),
            "devices": .array(scenario.devices.map(JSONValue.string)), "steps": .array(steps),
        ]
    }
}
