import Foundation
import LanpushClient
import LanpushCore
import Testing

/// Everything a client told its app, in order.
actor EventLog {
    private(set) var events: [ClientEvent] = []

    func append(_ event: ClientEvent) { events.append(event) }

    var changes: [StateChange] {
        events.compactMap { if case .state(let change, _) = $0 { return change } else { return nil } }
    }

    var activityChanges: [ActivityChange] {
        changes.compactMap { if case .activity(let a) = $0 { return a } else { return nil } }
    }

    var ended: [ClientActivity] {
        changes.compactMap { if case .ended(_, let a) = $0 { return a } else { return nil } }
    }

    var replays: [UInt64] {
        changes.compactMap { if case .replay(_, let from) = $0 { return from } else { return nil } }
    }

    var snapshots: [String] {
        changes.compactMap { if case .snapshot(let epoch, _) = $0 { return epoch } else { return nil } }
    }

    var statuses: [StatusChange] {
        events.compactMap { if case .status(let s) = $0 { return s } else { return nil } }
    }

    var authRejections: [String] {
        events.compactMap { if case .authRejected(let message, _) = $0 { return message } else { return nil } }
    }
}

/// A client against a real gateway, its events consumed (slowly, if asked) into a log.
final class Harness: Sendable {
    let client: LanpushClient
    let log = EventLog()
    let transport: CountingTransport
    let consumer: Task<Void, Never>

    init(
        url: URL, token: String, role: LanpushConfiguration.Role = .device, store: (any StateStore)? = MemoryStore(),
        handlerDelay: Duration? = nil, configure: (inout LanpushConfiguration) -> Void = { _ in }
    ) {
        let transport = CountingTransport()
        var c = LanpushConfiguration(url: url, token: token, role: role, store: store)
        c.transport = transport
        c.backoff = Backoff(initial: 0.1, maximum: 1)
        c.handshakeTimeout = 2
        configure(&c)
        let client = LanpushClient(c)
        let log = self.log
        self.client = client
        self.transport = transport
        consumer = Task {
            for await event in client.events {
                await log.append(event)
                if let handlerDelay, case .state(.activity, _) = event { try? await Task.sleep(for: handlerDelay) }
            }
        }
    }

    convenience init(_ gw: GatewayProcess, _ device: String, url: URL? = nil, handlerDelay: Duration? = nil,
        configure: (inout LanpushConfiguration) -> Void = { _ in }
    ) {
        self.init(url: url ?? gw.streamURL, token: gw.tokens[device] ?? "not-a-token", handlerDelay: handlerDelay, configure: configure)
    }

    func start() async { await client.start() }

    func live(timeout: Duration = .seconds(10)) async throws {
        do {
            try await eventually(timeout) { await self.client.status == .live }
        } catch {
            Issue.record("not live: \(await client.status); events: \(await log.events.suffix(8))")
            throw error
        }
    }

    func stop() async {
        await client.stop()
        await consumer.value
    }

    /// The client holds exactly what the gateway's `GET /v1/activities` shows.
    func converged(with gw: GatewayProcess, device: String = "phone", timeout: Duration = .seconds(15)) async throws {
        var last = ""
        do {
            try await eventually(timeout) {
                let want = try await gw.activities(device)
                let have = JSONValue.object(await self.client.state.activities.mapValues(\.json))
                last = "client \(have.serialized())\ngateway \(want.serialized())"
                return have == want
            }
        } catch {
            Issue.record("did not converge:\n\(last)")
            throw error
        }
    }
}

struct Timeout: Error {}

/// Polls until `check` holds; throws `Timeout` after `timeout`.
func eventually(_ timeout: Duration = .seconds(10), _ check: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if (try? await check()) == true { return }
        if ContinuousClock.now > deadline { throw Timeout() }
        try await Task.sleep(for: .milliseconds(50))
    }
}
