import Foundation
import Testing

@testable import LanpushCore

/// The publisher's protocol vectors (`Tests/Fixtures/protocol/publisher/*.json`): what a publisher session sends after
/// `auth_ok` and what the gateway answers, step by step, in memory (every step ends a loop turn, so its items are
/// accepted at once). Recorded here from the core's stream (`PublisherStream`) and its payload validation, with one
/// device, `phone`; `LanpushGatewayTests` replays every file through the real gateway. In a folder of their own: the
/// device vectors beside them are what the client libraries replay, and a publisher is not one of those clients.
/// `LANPUSH_RECORD_VECTORS=1` rewrites them.
@Suite struct PublisherVectorTests {
    static let directory = ProtocolVectorTests.directory.appendingPathComponent("publisher")

    @Test(arguments: PublisherVectorScenario.all)
    func vectorMatchesTheCore(_ scenario: PublisherVectorScenario) throws {
        let vector = scenario.record()
        let file = Self.directory.appendingPathComponent("\(scenario.name).json")
        if ProtocolVectorTests.recording {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            try (VectorJSON.pretty(vector) + "\n").write(to: file, atomically: true, encoding: .utf8)
            return
        }
        let committed = try JSONValue.parse(String(contentsOf: file, encoding: .utf8))
        let difference = VectorJSON.firstDifference(committed, vector)
        #expect(difference == nil, "publisher/\(scenario.name).json differs from the core at \(difference ?? "")")
    }

    @Test(.disabled(if: ProtocolVectorTests.recording, "files are being rewritten")) func everyCommittedVectorHasAScenario() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".json") }
        #expect(Set(files.map { String($0.dropLast(5)) }) == Set(PublisherVectorScenario.all.map(\.name)))
    }
}

/// One named publisher scenario: the frames a publisher sends, one step each.
struct PublisherVectorScenario: Sendable, CustomTestStringConvertible {
    static let t0 = 1_700_000_000.0
    static let devices = ["phone"]

    let name: String
    let summary: String
    /// Each step is one text message: a JSON frame, or raw text (`.string`) sent as it is.
    let sends: [JSONValue]

    var testDescription: String { name }

    static let all: [PublisherVectorScenario] = [
        PublisherVectorScenario(
            name: "publisher-stream",
            summary: "Updates and a notification streamed to a device: accepted cumulatively; a ping is not an item.",
            sends: [
                ["type": "push", "id": "w-1", "targets": ["phone"], "title": "Washer", "message": "Washing",
                 "data": ["tag": "washer", "live_update": true, "progress": 600, "progress_max": 3600]],
                ["type": "push", "targets": "all", "message": "Rinsing", "data": ["tag": "washer", "live_update": true, "progress": 1800]],
                ["type": "ping"],
                ["type": "push", "id": 3, "title": "Door", "message": "Front door opened", "data": ["group": "doors"]],
                ["type": "push", "targets": ["phone"], "message": "clear_notification", "data": ["tag": "washer"]],
            ]),
        PublisherVectorScenario(
            name: "publisher-rejections",
            summary: "Items that change nothing are named with their field and rule; the stream goes on.",
            sends: [
                ["type": "push", "id": "bad-progress", "targets": ["phone"], "message": "x",
                 "data": ["tag": "washer", "live_update": true, "progress": "lots"]],
                ["type": "push", "id": "nobody", "targets": ["fridge"], "message": "x"],
                .string("{not json"),
                ["type": "ack", "seq": 1],
                ["type": "push", "id": ["no": "objects"], "message": "x"],
                ["type": "push", "targets": [1], "message": "x"],
                ["type": "push", "targets": ["phone"], "title": "Oven", "message": "Preheating", "data": ["tag": "oven", "live_update": true]],
            ]),
        PublisherVectorScenario(
            name: "publisher-warnings",
            summary: "Items applied with a caveat: targets that name no device beside one that does, a live update without a title.",
            sends: [
                ["type": "push", "id": "w", "targets": ["phone", "fridge"], "title": "Washer", "message": "Washing",
                 "data": ["tag": "washer", "live_update": true]],
                ["type": "push", "targets": ["phone"], "message": "Untitled", "data": ["tag": "dryer", "live_update": true]],
            ]),
    ]

    /// The vector: `{"format","role","name","description","devices","window","steps":[{"now","send","frames"}]}`.
    func record() -> JSONValue {
        var stream = PublisherStream()
        var steps: [JSONValue] = []
        for (i, send) in sends.enumerated() {
            let now = Self.t0 + Double(i)
            let bytes: [UInt8] = send.stringValue.map { Array($0.utf8) } ?? send.serializedBytes()
            if case .item(let item, let id, let body) = stream.receive(bytes) {
                judge(item, id: id, body: body, now: now, &stream)
            }
            stream.committed(through: stream.items)  // in memory: the turn ended
            var frames: [JSONValue] = []
            while let reply = stream.nextReply() { frames.append(reply.json) }
            steps.append(["now": .number(now), "send": send, "frames": .array(frames)])
        }
        return [
            "format": 1, "role": "publisher", "name": .string(name), "description": .string(summary),
            "devices": .array(Self.devices.map { .string($0) }), "window": .number(Double(stream.window)), "steps": .array(steps),
        ]
    }

    /// What the gateway's ingest decides for one item, for devices that have no relay credentials: the body's
    /// validation, then its targets.
    private func judge(_ item: UInt64, id: JSONValue?, body: [String: JSONValue], now: Double, _ stream: inout PublisherStream) {
        let accepted: AcceptedPush
        let targets: [String]
        do {
            switch try PushTargets.decode(body["targets"]) {
            case .all: targets = Self.devices
            case .devices(let ids): targets = ids
            }
            accepted = try PayloadInterpreter.accept(try NotifyMessage.decode(body), now: now)
        } catch {
            return stream.reject(item, id: id, error)
        }
        let unknown = targets.filter { !Self.devices.contains($0) }
        if unknown.count == targets.count {
            return stream.reject(item, id: id, FieldError(field: "targets", rule: "exists", message: "targets: no such device"))
        }
        if !unknown.isEmpty {
            stream.warn(item, id: id, FieldWarning(field: "targets", rule: "exists", message: "no such device: '\(unknown.joined(separator: "', '"))'"))
        }
        for warning in accepted.warnings { stream.warn(item, id: id, warning) }
    }
}
