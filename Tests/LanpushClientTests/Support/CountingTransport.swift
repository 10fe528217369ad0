import Foundation
import LanpushClient
import LanpushCore

/// Wraps the real transport and watches the wire: how many connections were opened, what was sent, and how many
/// event frames were ever out unacknowledged at once (the gateway's credit window bounds it).
final class CountingTransport: LanpushTransport, @unchecked Sendable {
    let inner: any LanpushTransport
    private let lock = NSLock()
    private var connectionCount = 0
    private var sentFrames: [JSONValue] = []
    private var unacked: [UInt64] = []
    private var maxUnackedCount = 0
    private var arrayFrameCount = 0
    private var versionsSpoken: [String] = []

    init(_ inner: any LanpushTransport = PlatformTransport()) {
        self.inner = inner
    }

    var connections: Int { lock.withLock { connectionCount } }
    var sent: [JSONValue] { lock.withLock { sentFrames } }
    var maxUnacked: Int { lock.withLock { maxUnackedCount } }
    /// Event frames that came as lanpush.v2 arrays.
    var arrayFrames: Int { lock.withLock { arrayFrameCount } }
    /// What each session's `auth_ok` said it speaks.
    var versions: [String] { lock.withLock { versionsSpoken } }
    var acks: [UInt64] { sent.filter { $0["type"] == "ack" }.compactMap { $0["seq"]?.numberValue.map { UInt64($0) } } }

    func connect(to url: URL, subprotocols: [String], tls: TLSPolicy) async throws -> any WebSocketConnection {
        lock.withLock { connectionCount += 1 }
        let connection = try await inner.connect(to: url, subprotocols: subprotocols, tls: tls)
        lock.withLock { unacked = [] }
        return CountedConnection(inner: connection, owner: self)
    }

    func post(to url: URL, body: JSONValue, tls: TLSPolicy) async throws -> (status: Int, body: JSONValue?) {
        try await inner.post(to: url, body: body, tls: tls)
    }

    fileprivate func received(_ text: String) {
        guard let frame = ServerFrame(text: text) else { return }
        if frame.type == "auth_ok", let version = frame["version"]?.stringValue {
            lock.withLock { versionsSpoken.append(version) }
        }
        guard let seq = frame.seq, ["start", "update", "end", "lifecycle", "notification", "clear"].contains(frame.type)
        else { return }
        lock.withLock {
            if text.utf8.first == UInt8(ascii: "[") { arrayFrameCount += 1 }
            unacked.append(seq)
            maxUnackedCount = max(maxUnackedCount, unacked.count)
        }
    }

    fileprivate func sending(_ text: String) {
        guard let frame = try? JSONValue.parse(text) else { return }
        lock.withLock {
            sentFrames.append(frame)
            if frame["type"] == "ack", let seq = frame["seq"]?.numberValue {
                unacked.removeAll { $0 <= UInt64(seq) }
            }
        }
    }
}

/// Forwards the real connection's inbox, counting what passes.
private final class CountedConnection: WebSocketConnection, @unchecked Sendable {
    let inner: any WebSocketConnection
    let inbox = TransportInbox()
    weak var owner: CountingTransport?

    init(inner: any WebSocketConnection, owner: CountingTransport) {
        self.inner = inner
        self.owner = owner
        let inbox = self.inbox
        Task { [inner, weak owner] in
            while true {
                switch await inner.inbox.next() {
                case .text(let text):
                    owner?.received(text)
                    inbox.push(text)
                case .closed(let code, let reason):
                    inbox.finish(code: code, reason: reason)
                    return
                case .interrupted:
                    return
                }
            }
        }
    }

    func send(_ text: String) async throws {
        owner?.sending(text)
        try await inner.send(text)
    }

    func close(code: Int, reason: String) async {
        await inner.close(code: code, reason: reason)
    }
}
