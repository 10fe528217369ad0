import Foundation
import LanpushCore

/// How a `wss://` or `https://` connection checks the gateway's certificate.
public enum TLSPolicy: Sendable, Hashable {
    /// The platform's trust store and the host name (a certificate from a CA).
    case system
    /// Exactly this certificate: the hex SHA-256 of its DER (a pairing URL's `fp`; the gateway's self-signed one).
    /// Chain and name are not checked: the fingerprint is the identity.
    case pinned(sha256: String)
    /// No check at all (the CLI's `--insecure`; never for an app).
    case insecure
}

/// One WebSocket session. What arrives is queued in `inbox` in order; after the close, `inbox` reports it.
public protocol WebSocketConnection: Sendable {
    var inbox: TransportInbox { get }
    func send(_ text: String) async throws
    /// Starts the closing handshake (or drops the link when it is dead); the inbox reports the close when done.
    func close(code: Int, reason: String) async
}

/// The network under the client: a WebSocket offering the client's subprotocols (newest first: `lanpush.v2`,
/// `lanpush.v1`), and one JSON POST for pairing.
/// `PlatformTransport` is SwiftNIO on Linux and URLSession on Apple platforms; tests pass their own.
public protocol LanpushTransport: Sendable {
    func connect(to url: URL, subprotocols: [String], tls: TLSPolicy) async throws -> any WebSocketConnection
    /// POSTs a JSON body; answers the status and the JSON body (nil when empty or not JSON).
    func post(to url: URL, body: JSONValue, tls: TLSPolicy) async throws -> (status: Int, body: JSONValue?)
}

public struct TransportError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a session's reader gets next.
public enum InboxItem: Sendable, Equatable {
    case text(String)
    /// The session ended: the close code and reason, or nil and a description when the link died without one.
    case closed(code: Int?, reason: String)
    /// `TransportInbox.interrupt()` was called (the client is stopping): handle nothing more.
    case interrupted
}

/// The queue between a transport's network thread and the client's session: texts in arrival order, then the close.
/// One reader. `pending` lets the client ack when nothing else waits (docs/CLIENTS.md, "Handlers and acks").
public final class TransportInbox: @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [String] = []
    private var head = 0
    private var close: InboxItem?
    private var interrupted = false
    private var waiter: CheckedContinuation<InboxItem, Never>?
    private var received: ContinuousClock.Instant?

    public init() {}

    /// When the last text arrived (the keepalive counts frames still queued behind a slow app as signs of life).
    public var lastReceived: ContinuousClock.Instant? { lock.withLock { received } }

    /// Texts received and not read yet.
    public var pending: Int { lock.withLock { texts.count - head } }

    public var isClosed: Bool { lock.withLock { close != nil } }

    public func push(_ text: String) {
        push(contentsOf: [text])
    }

    /// Texts that arrived together (one read of the socket): the reader sees them all queued behind the first.
    public func push(contentsOf arrived: [String]) {
        guard let first = arrived.first else { return }
        let waiting: CheckedContinuation<InboxItem, Never>? = lock.withLock {
            guard close == nil else { return nil }
            received = .now
            if let w = waiter {
                waiter = nil
                texts.append(contentsOf: arrived.dropFirst())
                return w
            }
            texts.append(contentsOf: arrived)
            return nil
        }
        waiting?.resume(returning: .text(first))
    }

    /// The session ended; later pushes are ignored. The first close reported wins.
    public func finish(code: Int?, reason: String) {
        let waiting: CheckedContinuation<InboxItem, Never>? = lock.withLock {
            guard close == nil else { return nil }
            close = .closed(code: code, reason: reason)
            defer { waiter = nil }
            return head == texts.count ? waiter : nil
        }
        waiting?.resume(returning: .closed(code: code, reason: reason))
    }

    /// Makes the reader's next (or current) wait return `.interrupted`, ahead of anything queued.
    public func interrupt() {
        let waiting: CheckedContinuation<InboxItem, Never>? = lock.withLock {
            interrupted = true
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: .interrupted)
    }

    public func next() async -> InboxItem {
        await withCheckedContinuation { (continuation: CheckedContinuation<InboxItem, Never>) in
            let item: InboxItem? = lock.withLock {
                if interrupted { return .interrupted }
                if head < texts.count {
                    let text = texts[head]
                    head += 1
                    if head > 64 && head * 2 > texts.count {
                        texts.removeFirst(head)
                        head = 0
                    }
                    return .text(text)
                }
                if let close { return close }
                waiter = continuation
                return nil
            }
            if let item { continuation.resume(returning: item) }
        }
    }
}
