import Foundation
import Testing

@testable import LanpushCore

/// The shared protocol vectors (`Tests/Fixtures/protocol/*.json`, format in docs/CLIENTS.md): named scenarios of
/// server frames, each with the state a client must hold after it and the seq it must acknowledge. They are
/// recorded here from the real core — `DeviceLedger` and `Coalescer` on a fixed clock, frames from
/// `OutboundEvent.json` as the gateway sends them — and the expected state comes from `VectorClient`, a client
/// reducer written from docs/PROTOCOL.md alone. Every client (TypeScript now, Python and Swift later) replays
/// the files. The test fails when the core's output drifts from them; `LANPUSH_RECORD_VECTORS=1` rewrites them.
@Suite struct ProtocolVectorTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/protocol")
    static var recording: Bool { ProcessInfo.processInfo.environment["LANPUSH_RECORD_VECTORS"] == "1" }

    /// Where a version's vectors live: v1 at the top, later versions in a folder of their own.
    static func directory(_ version: ProtocolVersion) -> URL {
        version == .v1 ? directory : directory.appendingPathComponent(String(version.rawValue.split(separator: ".").last!))
    }

    @Test(arguments: VectorScenario.all, ProtocolVersion.allCases)
    func vectorMatchesTheCore(_ scenario: VectorScenario, _ version: ProtocolVersion) throws {
        let vector = scenario.record()
        #expect(vector.violations.isEmpty, "the core sent frames a client cannot apply: \(vector.violations)")
        let folder = Self.directory(version)
        let file = folder.appendingPathComponent("\(scenario.name).json")
        if Self.recording {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try (VectorJSON.pretty(vector.json(version)) + "\n").write(to: file, atomically: true, encoding: .utf8)
            return
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        let committed = try JSONValue.parse(text)
        let difference = VectorJSON.firstDifference(committed, vector.json(version))
        #expect(difference == nil, "\(version.rawValue) \(scenario.name).json differs from the core at \(difference ?? ""); re-record with LANPUSH_RECORD_VECTORS=1 if the change is intended")
    }

    @Test(.disabled(if: recording, "files are being rewritten"), arguments: ProtocolVersion.allCases)
    func everyCommittedVectorHasAScenario(_ version: ProtocolVersion) throws {
        let names = Set(VectorScenario.all.map(\.name))
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory(version).path).filter { $0.hasSuffix(".json") }
        #expect(Set(files.map { String($0.dropLast(5)) }) == names)
    }

    /// The v2 frames of every scenario carry what the v1 frames do: a client reading them ends every step in the
    /// same state, and they are smaller.
    @Test(arguments: VectorScenario.all)
    func v2FramesLeadToTheSameStates(_ scenario: VectorScenario) {
        let vector = scenario.record()
        #expect(vector.v2Violations.isEmpty, "\(vector.v2Violations)")
        let v1 = vector.json(.v1)["steps"]!.arrayValue!.compactMap { $0["frame"] }
        let v2 = vector.json(.v2)["steps"]!.arrayValue!.compactMap { $0["frame"] }
        #expect(v1.count == v2.count)
        let v1Bytes = v1.reduce(0) { $0 + $1.serializedCount }
        let v2Bytes = v2.reduce(0) { $0 + $1.serializedCount }
        let compact = v2.filter { $0.arrayValue != nil }.count
        #expect(compact == v1.filter { ["start", "update", "end", "lifecycle"].contains($0["type"]?.stringValue ?? "") }.count)
        #expect(compact == 0 ? v2Bytes == v1Bytes : v2Bytes < v1Bytes)
    }

    @Test func theReferenceReducerFollowsTheProtocol() {
        var client = VectorClient()
        let start: JSONValue = [
            "type": "start", "seq": 1, "tag": "w", "attributes": ["tag": "w", "title": "W", "started_at": 1],
            "state": ["message": "a", "progress": 1],
        ]
        #expect(client.apply(start.objectValue!, now: 10) == 1)
        #expect(client.apply(["type": "update", "seq": 3, "tag": "w", "phase": "active", "patch": ["progress": .null, "message": "b"]], now: 10) == 3)
        #expect(client.activities["w"]?["state"] == ["message": "b"])
        #expect(client.apply(["type": "end", "seq": 4, "tag": "w", "patch": [:], "dismissal_date": 10], now: 10) == 4)
        #expect(client.activities["w"] == nil, "an end whose dismissal date has come removes the activity")
        #expect(client.apply(["type": "synced", "seq": 4], now: 10) == nil)
        #expect(client.seq == 4)
    }
}

/// One named scenario: a script run against the core that produces one vector file.
struct VectorScenario: Sendable, CustomTestStringConvertible {
    let name: String
    let summary: String
    let window: Int
    let script: @Sendable (inout VectorRecorder) -> Void

    init(_ name: String, _ summary: String, window: Int = 32, script: @escaping @Sendable (inout VectorRecorder) -> Void) {
        self.name = name
        self.summary = summary
        self.window = window
        self.script = script
    }

    var testDescription: String { name }

    func record() -> VectorRecorder {
        var recorder = VectorRecorder(name: name, summary: summary, window: window)
        script(&recorder)
        return recorder
    }
}

/// Drives a device's ledger and one session's coalescer the way the gateway does, and writes down every frame.
struct VectorRecorder {
    static let t0 = 1_700_000_000.0
    let name: String
    let summary: String
    let window: Int
    var ledger = DeviceLedger(deviceId: "phone", epoch: "epoch-a", historyCapacity: 64, notificationQueueBytes: 2048)
    var coalescer: Coalescer?
    var client = VectorClient()
    let initial: JSONValue
    var steps: [JSONValue] = []
    var now = t0
    var violations: [String] = []

    init(name: String, summary: String, window: Int) {
        self.name = name
        self.summary = summary
        self.window = window
        self.initial = client.json
    }

    /// The same steps with the frames in v2 form, read by a second client that must end each in the same state.
    var stepsV2: [JSONValue] = []
    var clientV2 = VectorClient()
    var v2Violations: [String] = []

    func json(_ version: ProtocolVersion) -> JSONValue {
        var o: [String: JSONValue] = [
            "format": 1, "name": .string(name), "description": .string(summary), "initial": initial,
            "steps": .array(version == .v1 ? steps : stepsV2),
        ]
        if version != .v1 { o["protocol"] = .string(version.rawValue) }
        return .object(o)
    }

    /// A notify payload as HA posts it (`{"title","message","data"}`), through the gateway's own interpreter.
    mutating func push(_ payload: String) {
        let command: PushCommand
        do {
            command = try PayloadFixture.command(payload, now: now)
        } catch {
            fatalError("vector payload rejected: \(error) — \(payload)")
        }
        note(ledger.apply(command, now: now))
    }

    /// `DELETE /v1/activities/{tag}?dismissal=…`.
    mutating func end(_ tag: String, dismissal: DismissalPolicy) {
        note(ledger.end(tag: tag, dismissal: dismissal, now: now).map { [$0] } ?? [])
    }

    /// A `dismissed` frame from one of the device's sessions.
    mutating func dismissedByUser(_ tag: String) {
        note(ledger.dismissedByUser(tag: tag, now: now).map { [$0] } ?? [])
    }

    /// Time passes: the gateway's tick (stale dates, dismissals that fall due, housekeeping).
    mutating func advance(by seconds: Double) {
        now += seconds
        note(ledger.advance(to: now))
        ledger.pruneDismissed()
    }

    /// The gateway restarts after an unclean stop: the device starts a new epoch.
    mutating func restartUnclean(epoch: String) {
        coalescer = nil
        ledger.startEpoch(epoch)
    }

    private mutating func note(_ changes: [Change]) {
        guard coalescer != nil else { return }
        for change in changes { coalescer!.note(change) }
    }

    /// A new session: subscribes with the client's resume point (when it has one and `resume` is set).
    mutating func connect(resume: Bool = true) {
        var subscribe: [String: JSONValue] = ["type": "subscribe"]
        var point: (epoch: String, seq: UInt64)?
        if resume, let epoch = client.epoch {
            point = (epoch, UInt64(client.seq))
            subscribe["epoch"] = .string(epoch)
            subscribe["seq"] = .number(client.seq)
        }
        steps.append(["now": .number(now), "subscribe": .object(subscribe)])
        stepsV2.append(["now": .number(now), "subscribe": .object(subscribe)])
        let (c, start) = Coalescer.subscribe(ledger: ledger, resume: point, window: window)
        coalescer = c
        if case .replay(let from) = start {
            receive(["type": "replay", "from": .number(Double(from)), "epoch": .string(ledger.epoch)])
        }
    }

    mutating func disconnect() {
        coalescer = nil
    }

    /// Reads what the session has due, as the gateway's session writer does (events, then `synced`), then acks.
    mutating func read(max: Int = .max, ack: Bool = true) {
        var count = 0
        while count < max, coalescer != nil {
            if let event = coalescer!.next(ledger: &ledger, now: now) {
                receive(event.json, v2: event.json(.v2))
            } else if let seq = coalescer!.takeSynced(queued: ledger.notifications) {
                receive(["type": "synced", "seq": .number(Double(seq))])
            } else {
                break
            }
            count += 1
        }
        if ack { acknowledge() }
    }

    /// Sends the session's cumulative ack (the gateway prunes notifications every session has acknowledged).
    mutating func acknowledge() {
        guard coalescer != nil, let seq = sessionAck else { return }
        coalescer!.acknowledge(UInt64(seq))
        ledger.pruneNotifications(through: coalescer!.ackedSeq)
    }

    private var sessionAck: Double? {
        var highest: Double?
        for step in steps.reversed() {
            if step["subscribe"] != nil { break }
            if let ack = step["ack"]?.numberValue { highest = max(highest ?? ack, ack) }
        }
        return highest
    }

    /// One frame as both versions send it (`v2` defaults to the same object: the frames v2 leaves as they are).
    private mutating func receive(_ frame: JSONValue, v2: JSONValue? = nil) {
        let ack = client.apply(frame.objectValue!, now: now)
        violations += client.violations
        client.violations = []
        steps.append(["now": .number(now), "frame": frame, "state": client.json, "ack": ack.map(JSONValue.number) ?? .null])
        let v2Frame = v2 ?? frame
        let ackV2 = clientV2.apply(v2Frame, now: now)
        v2Violations += clientV2.violations
        clientV2.violations = []
        if clientV2.json != client.json || ackV2 != ack { v2Violations.append("state or ack differs after \(v2Frame)") }
        stepsV2.append(["now": .number(now), "frame": v2Frame, "state": clientV2.json, "ack": ackV2.map(JSONValue.number) ?? .null])
    }
}
