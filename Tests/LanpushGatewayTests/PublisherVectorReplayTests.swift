import Foundation
import LanpushCore
import LanpushTesting
import Testing

/// The publisher vectors (`Tests/Fixtures/protocol/publisher/*.json`, recorded from the core) replayed through the
/// real gateway: after each frame a publisher sends, the gateway answers exactly what the vector says. So the stream's
/// documented behaviour, the vectors and the gateway cannot drift apart.
@Suite struct PublisherVectorReplayTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/protocol/publisher")

    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    @Test func thereAreVectors() {
        #expect(Self.names.count >= 3, "\(Self.names)")
    }

    @Test(arguments: names)
    func theGatewayAnswersAsTheVectorSays(_ name: String) throws {
        let vector = try JSONValue.parse(String(contentsOf: Self.directory.appendingPathComponent("\(name).json"), encoding: .utf8))
        let devices = try #require(vector["devices"]?.arrayValue).compactMap(\.stringValue)
        let steps = try #require(vector["steps"]?.arrayValue)
        let start = steps.first?["now"]?.numberValue ?? 0
        let gw = try TestGateway(config: TestGateway.defaultConfig(devices: devices), clock: ManualClock(start))
        let p = gw.publisher()
        #expect(p.frames.last?["window"] == vector["window"])
        for (i, step) in steps.enumerated() {
            gw.clock.advance(by: try #require(step["now"]?.numberValue) - gw.clock.now)
            let before = p.frames.count
            let send = try #require(step["send"])
            if let text = send.stringValue { p.send(text: text) } else { p.send(send) }
            #expect(Array(p.frames.dropFirst(before)) == step["frames"]?.arrayValue, "\(name) step \(i)")
        }
    }
}
