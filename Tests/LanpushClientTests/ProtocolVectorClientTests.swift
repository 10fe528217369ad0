import Foundation
import LanpushCore
import Testing

@testable import LanpushClient

/// The protocol vectors through the whole `LanpushClient` over a scripted transport: the subscribe frames it sends,
/// the cumulative acks, and that the state covering an ack was saved before the ack went out (rule 9).
@Suite struct ProtocolVectorClientTests {
    @Test(arguments: ProtocolVectorReducerTests.names)
    func theClientFollowsTheVector(_ name: String) async throws {
        let vector = try ProtocolVectorReducerTests.load(name)
        let script = ScriptedTransport()
        let store = MemoryStore()
        let now = Clock()
        var configuration = LanpushConfiguration(url: URL(string: "ws://gateway.invalid/v1/stream")!, token: "t", store: store)
        configuration.transport = script
        configuration.clock = { now.value }
        configuration.initialState = DeviceState(json: try #require(vector["initial"]))
        configuration.keepaliveInterval = 0
        let client = LanpushClient(configuration)
        let consumer = Task { for await _ in client.events {} }
        await client.start()

        var highest: UInt64?
        var session: ScriptedConnection?
        for (i, step) in (vector["steps"]?.arrayValue ?? []).enumerated() {
            let label = "\(name) step \(i)"
            if let subscribe = step["subscribe"] {
                // A new session: end the previous one as a gateway restart would, then authenticate.
                let count = script.connections.count
                session?.inbox.finish(code: 1001, reason: "going away")
                try await eventually { script.connections.count > count }
                let connection = script.connections.last!
                connection.inbox.push(#"{"type":"auth_required","version":"lanpush.v1"}"#)
                try await eventually { connection.sent.contains { $0["type"] == "auth" } }
                connection.inbox.push(#"{"type":"auth_ok","device_id":"phone","epoch":"x","seq":0,"version":"lanpush.v1"}"#)
                try await eventually { connection.sent.contains { $0["type"] == "subscribe" } }
                #expect(connection.sent.first { $0["type"] == "subscribe" } == subscribe, "\(label): subscribe")
                session = connection
                highest = nil
                continue
            }
            let connection = try #require(session)
            now.value = try #require(step["now"]?.numberValue)
            let want = try #require(step["state"])
            let acksBefore = connection.acks.count
            connection.inbox.push(try #require(step["frame"]).serialized())
            if let ack = step["ack"]?.numberValue.map({ UInt64($0) }) {
                highest = max(highest ?? 0, ack)
                try await eventually { connection.acks.count > acksBefore }
                #expect(connection.acks.last == highest, "\(label): ack")
                #expect(await store.load(key: configuration.resolvedStoreKey)?.json == want, "\(label): saved before the ack")
            }
            try await eventually { await client.state.json == want }
        }
        await client.stop()
        await consumer.value
    }
}

final class Clock: @unchecked Sendable {
    private let lock = NSLock()
    private var now = 0.0
    var value: Double {
        get { lock.withLock { now } }
        set { lock.withLock { now = newValue } }
    }
}

/// A transport whose "gateway" is the test: it pushes frames into each connection's inbox and reads what was sent.
final class ScriptedTransport: LanpushTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var opened: [ScriptedConnection] = []

    var connections: [ScriptedConnection] { lock.withLock { opened } }

    func connect(to url: URL, subprotocols: [String], tls: TLSPolicy) async throws -> any WebSocketConnection {
        let connection = ScriptedConnection()
        lock.withLock { opened.append(connection) }
        return connection
    }

    func post(to url: URL, body: JSONValue, tls: TLSPolicy) async throws -> (status: Int, body: JSONValue?) {
        throw TransportError("no HTTP here")
    }
}

final class ScriptedConnection: WebSocketConnection, @unchecked Sendable {
    let inbox = TransportInbox()
    private let lock = NSLock()
    private var frames: [JSONValue] = []

    var sent: [JSONValue] { lock.withLock { frames } }
    var acks: [UInt64] { sent.filter { $0["type"] == "ack" }.compactMap { $0["seq"]?.numberValue.map { UInt64($0) } } }

    func send(_ text: String) async throws {
        guard !inbox.isClosed else { throw TransportError("closed") }
        let frame = try JSONValue.parse(text)
        lock.withLock { frames.append(frame) }
    }

    func close(code: Int, reason: String) async {
        inbox.finish(code: code, reason: reason)
    }
}
