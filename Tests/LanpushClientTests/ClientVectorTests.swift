import Foundation
import LanpushCore
import Testing

@testable import LanpushClient

/// The client rules shared with the TypeScript and Python libraries (`Tests/Fixtures/protocol/client`, docs/CLIENTS.md
/// "Protocol vectors"): what a closed session means for the next attempt, what a pairing URL or a typed code names,
/// and when the client acks what a read brought.
@Suite struct ClientVectorTests {
    static func load(_ name: String) throws -> JSONValue {
        let file = ProtocolVectorReducerTests.directory.appendingPathComponent("client/\(name).json")
        let vector = try JSONValue.parse(String(contentsOf: file, encoding: .utf8))
        guard vector["format"]?.numberValue == 1, vector["name"]?.stringValue == name else {
            throw TransportError("\(file.path): not a format 1 vector named \(name)")
        }
        return vector
    }

    static func cases(_ name: String) -> [JSONValue] { ((try? load(name))?["cases"]?.arrayValue) ?? [] }

    @Test func everyCloseCodeTheGatewaySendsHasACase() {
        let codes = Set(Self.cases("close-codes").map { $0["close"]?["code"]?.numberValue.map(Int.init) })
        for code in [4001, 4002, 4003, 4029, 1001, 1011, 1013, 1009, 1003] { #expect(codes.contains(code), "\(code)") }
        #expect(codes.contains(nil as Int?), "a transport without close codes")
        #expect(Self.cases("pairing").count > 10 && Self.cases("acks").count > 3)
    }

    @Test(arguments: cases("close-codes"))
    func aClosedSessionDecidesTheNextAttempt(_ c: JSONValue) {
        let known = c["close"]
        let info = CloseInfo(
            code: known?["code"]?.numberValue.map(Int.init), reason: known?["reason"]?.stringValue ?? "",
            authInvalid: known?["auth_invalid"]?.stringValue, lastError: known?["last_error"]?.stringValue)
        let delay = c["delay"]?.numberValue
        let want: CloseAction? =
            switch c["action"]?.stringValue {
            case "auth_rejected": .authRejected(message: c["message"]?.stringValue ?? "")
            case "reconnect_now" where delay == 0: .reconnectNow
            case "wait": delay.map { .wait(seconds: $0) }
            case "backoff": delay.map { .backoff(minimum: $0) }
            default: nil
            }
        #expect(want != nil, "a case this test cannot read: \(c)")
        #expect(CloseAction.classify(info) == want, "\(c["why"]?.stringValue ?? "") \(known.map { $0.serialized() } ?? "")")
    }

    @Test(arguments: cases("pairing"))
    func aPairingNamesItsGateway(_ c: JSONValue) {
        let input = c["input"]?.stringValue ?? ""
        let given = c["given"]
        let label = "\(c["why"]?.stringValue ?? ""): \(input)"
        let read = Result {
            try PairingURL.read(input, address: given?["address"]?.stringValue, fingerprint: given?["fingerprint"]?.stringValue)
        }
        if c["error"]?.boolValue == true {
            #expect(throws: PairingError.self, "\(label)") { try read.get() }
            return
        }
        guard case .success(let pairing) = read else {
            Issue.record("\(label): \(read)")
            return
        }
        let got: JSONValue = [
            "address": .string(pairing.addresses.first ?? ""),
            "alternates": .array(pairing.addresses.dropFirst().map { .string($0) }),
            "code": .string(pairing.code),
            "fingerprint": pairing.fingerprint.map { .string($0) } ?? .null,
        ]
        #expect(got == c["read"], "\(label)")
    }

    @Test(arguments: cases("acks"))
    func theClientAcksWhatAReadBrought(_ c: JSONValue) async throws {
        let vector = try Self.load("acks")
        let script = ScriptedTransport()
        var configuration = LanpushConfiguration(url: URL(string: "ws://gateway.invalid/v1/stream")!, token: "t")
        configuration.transport = script
        configuration.window = Int(try #require(vector["window"]?.numberValue))
        let now = try #require(vector["now"]?.numberValue)
        configuration.clock = { now }
        configuration.keepaliveInterval = 0
        let client = LanpushClient(configuration)
        let consumer = Task { for await _ in client.events {} }
        await client.start()
        try await eventually { !script.connections.isEmpty }
        let connection = script.connections[0]
        connection.inbox.push(#"{"type":"auth_required","version":"lanpush.v1"}"#)
        try await eventually { connection.sent.contains { $0["type"] == "auth" } }
        connection.inbox.push(#"{"type":"auth_ok","device_id":"phone","epoch":"e","seq":0,"version":"lanpush.v1"}"#)
        try await eventually { connection.sent.contains { $0["type"] == "subscribe" } }
        for (i, read) in (c["reads"]?.arrayValue ?? []).enumerated() {
            let want = (read["acks"]?.arrayValue ?? []).compactMap { $0.numberValue.map { UInt64($0) } }
            let before = connection.acks.count
            connection.inbox.push(contentsOf: (read["frames"]?.arrayValue ?? []).map { $0.serialized() })
            try await eventually { connection.acks.count - before >= want.count && connection.inbox.pending == 0 }
            try await Task.sleep(for: .milliseconds(100))  // an ack too many would be out by now
            #expect(Array(connection.acks.dropFirst(before)) == want, "\(c["name"]?.stringValue ?? "") read \(i)")
        }
        await client.stop()
        await consumer.value
    }
}
