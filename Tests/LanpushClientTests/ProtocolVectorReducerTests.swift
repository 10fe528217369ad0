import Foundation
@testable import LanpushClient
import LanpushCore
import Testing

/// The shared protocol vectors (`Tests/Fixtures/protocol/*.json` in lanpush.v1, `v2/*.json` the same scenarios in
/// lanpush.v2, recorded from the gateway's core) replayed through
/// the client's reducer: after every frame its state and ack must equal the vector's, and every subscribe it would
/// send must equal the vector's. So the client and the server cannot drift apart.
@Suite struct ProtocolVectorReducerTests {
    static let directory = GatewayProcess.repoRoot.appendingPathComponent("Tests/Fixtures/protocol")

    /// The vectors' names, the v2 ones as `v2/<name>`.
    static var names: [String] { files(in: "") + files(in: "v2/") }

    static func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { folder + String($0.dropLast(5)) }.sorted()
    }

    static func load(_ name: String) throws -> JSONValue {
        try JSONValue.parse(String(contentsOf: directory.appendingPathComponent("\(name).json"), encoding: .utf8))
    }

    @Test func everyVectorIsHere() {
        #expect(Self.files(in: "").count >= 12, "\(Self.names)")
        #expect(Self.files(in: "v2/").count == Self.files(in: "").count, "every scenario in both versions")
    }

    @Test(arguments: names)
    func theReducerHoldsTheVectorsState(_ name: String) throws {
        let vector = try Self.load(name)
        let initial = try #require(vector["initial"])
        var state = try #require(DeviceState(json: initial))
        let reducer = StateReducer()
        for (i, step) in (vector["steps"]?.arrayValue ?? []).enumerated() {
            if let subscribe = step["subscribe"] {
                #expect(ClientFrame.subscribe(resumeFrom: state) == subscribe, "\(name) step \(i): subscribe")
                continue
            }
            // Through the client's own parsing: a v2 frame is an array on the wire.
            let frame = try #require(step["frame"].flatMap { ServerFrame(text: $0.serialized()) }, "\(name) step \(i)")
            let now = try #require(step["now"]?.numberValue)
            let result = reducer.reduce(state, frame, now: now)
            #expect(result.resync == nil, "\(name) step \(i): \(result.resync ?? "")")
            state = result.state
            let want = step["state"] ?? .null
            #expect(state.json == want, "\(name) step \(i) (\(frame.type)): \(state.json) vs \(want)")
            let ack = step["ack"].flatMap { $0.numberValue.map { UInt64($0) } }
            #expect(result.ack == ack, "\(name) step \(i): ack")
            // The state round-trips through its stored form (what FileStore writes).
            #expect(DeviceState(json: state.json) == state)
        }
    }

    @Test func anUpdateForATagNotHeldAsksForASnapshot() {
        let frame = ServerFrame(object: ["type": "update", "seq": 5, "tag": "ghost", "patch": ["message": "x"], "phase": "active"])!
        let result = StateReducer().reduce(DeviceState(epoch: "e", seq: 4), frame, now: 0)
        #expect(result.resync != nil)
        #expect(result.state == DeviceState(epoch: "e", seq: 4), "nothing applied")
        #expect(ClientFrame.subscribe(resumeFrom: nil) == ["type": "subscribe"])
    }
}
