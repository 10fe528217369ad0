import Foundation
import LanpushCore
import LanpushLWS

/// The one HTTP client of the gateway (the relay path, HA's REST API): JSON in and out over libwebsockets' own
/// client (``HTTPClientLoop``), a hard timeout for the whole exchange, no cookies, no cache, no redirects followed,
/// TLS verified against the system's trust store (or `SSL_CERT_FILE`).
///
/// `send` returns at once; its completion runs exactly once, on the HTTP client's thread or a Dispatch thread — a
/// caller on an event loop hops back to it before touching anything. `sendAndWait` blocks (for tools that run no
/// loop).
public final class JSONHTTPClient: Sendable {
    /// What came back (or why nothing did).
    public struct Response: Sendable {
        /// HTTP status; `nil` when there was no answer (`failure` says why).
        public var status: Int?
        /// The body parsed as JSON; `nil` when empty or not JSON (`bytes` has it as sent).
        public var body: JSONValue?
        public var bytes: [UInt8]
        public var failure: Failure?
        /// Seconds from `send` to the answer.
        public var duration: Double

        public init(status: Int? = nil, body: JSONValue? = nil, bytes: [UInt8] = [], failure: Failure? = nil, duration: Double = 0) {
            self.status = status
            self.body = body
            self.bytes = bytes
            self.failure = failure
            self.duration = duration
        }

        /// One line for a log: the failure, or the status and the start of the body.
        public var summary: String {
            if let failure { return "\(failure)" }
            let text = String(String(decoding: bytes, as: UTF8.self).prefix(200))
            return "HTTP \(status ?? 0)\(text.isEmpty ? "" : ": \(text)")"
        }
    }

    /// Why a request got no HTTP answer.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case invalidURL(String)
        case timeout
        case network(String)

        public var description: String {
            switch self {
            case .invalidURL(let url): return "invalid URL \(url)"
            case .timeout: return "timed out"
            case .network(let message): return message
            }
        }
    }

    public static let defaultUserAgent = "lanpush/\(LanpushVersion.current)"

    public let timeout: Double
    public let userAgent: String
    private let bearer: String?
    private let transport: HTTPClientLoop
    private let inFlight = InFlight()

    /// `bearer`: sent as `Authorization: Bearer <token>` on every request.
    public init(timeout: Double = 10, userAgent: String = JSONHTTPClient.defaultUserAgent, bearer: String? = nil) {
        self.timeout = timeout
        self.userAgent = userAgent
        self.bearer = bearer
        transport = .shared
    }

    /// Cancels every request in flight (their completions report a network error); a request sent afterwards
    /// fails at once.
    public func shutdown() {
        for (ticket, once) in inFlight.shut() {
            transport.cancel(ticket)
            once.fire(Response(failure: .network("the HTTP client was shut down")))
        }
    }

    /// `method` `url` (`http://` or `https://`), `body` as JSON when given, `headers` beside the client's own.
    /// `admitsAddress`: asked with the address the host resolved to; `false` fails the request unsent. Never blocks.
    public func send(
        _ method: String, _ url: String, body: JSONValue? = nil, headers extra: [(String, String)] = [],
        admitsAddress: (@Sendable (String) -> Bool)? = nil, completion: @escaping @Sendable (Response) -> Void
    ) {
        let started = DispatchTime.now()
        let once = OnceCompletion(completion)
        @Sendable func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9 }

        var headers: [(String, String)] = [("accept", "application/json"), ("user-agent", userAgent)]
        if let bearer, !bearer.isEmpty { headers.append(("authorization", "Bearer \(bearer)")) }
        if body != nil { headers.append(("content-type", "application/json")) }
        headers += extra
        let request = HTTPClientLoop.Request(
            method: method, url: url, headers: headers, body: body?.serializedBytes(), admitsAddress: admitsAddress)
        let ticket = inFlight.reserve(once)
        guard ticket.open else {
            DispatchQueue.global().async { once.fire(Response(failure: .network("the HTTP client was shut down"))) }
            return
        }
        let inFlight = self.inFlight
        let sent = transport.send(request) { outcome in
            inFlight.remove(ticket.key)
            switch outcome {
            case .answer(let status, let bytes):
                let json = bytes.isEmpty ? nil : try? JSONValue.parse(bytes)
                once.fire(Response(status: status, body: json, bytes: bytes, duration: elapsed()))
            case .invalidURL(let text):
                once.fire(Response(failure: .invalidURL(text), duration: elapsed()))
            case .failed(let reason):
                once.fire(Response(failure: .network(reason), duration: elapsed()))
            }
        }
        // Shut down meanwhile: `shutdown` could not cancel what it did not know yet.
        if !inFlight.bind(ticket.key, to: sent) && inFlight.isShut { transport.cancel(sent) }
        // Bounds the whole exchange: name resolution, connect, TLS, the request and the answer.
        let transport = self.transport
        DispatchQueue.global().asyncAfter(deadline: .now() + max(timeout, 0)) {
            if once.fire(Response(failure: .timeout, duration: elapsed())) {
                inFlight.remove(ticket.key)
                transport.cancel(sent)
            }
        }
    }

    /// `send`, waiting for the answer.
    public func sendAndWait(_ method: String, _ url: String, body: JSONValue? = nil) -> Response {
        let box = ResponseBox()
        let done = DispatchSemaphore(value: 0)
        send(method, url, body: body) { response in
            box.set(response)
            done.signal()
        }
        done.wait()
        return box.get() ?? Response(failure: .network("no answer"))
    }
}

/// The requests of one client still waiting for their answer, for ``JSONHTTPClient/shutdown()``.
private final class InFlight: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    private var shutDown = false
    private var entries: [Int: (ticket: UInt64, once: OnceCompletion)] = [:]

    func reserve(_ once: OnceCompletion) -> (key: Int, open: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if shutDown { return (0, false) }
        next += 1
        entries[next] = (0, once)
        return (next, true)
    }

    /// `false` when the request is no longer waiting (answered, timed out, or the client was shut down).
    func bind(_ key: Int, to ticket: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard entries[key] != nil else { return false }
        entries[key]?.ticket = ticket
        return true
    }

    var isShut: Bool {
        lock.lock()
        defer { lock.unlock() }
        return shutDown
    }

    func remove(_ key: Int) {
        lock.lock()
        entries.removeValue(forKey: key)
        lock.unlock()
    }

    func shut() -> [(UInt64, OnceCompletion)] {
        lock.lock()
        defer { lock.unlock() }
        shutDown = true
        let all = entries.values.map { ($0.ticket, $0.once) }
        entries.removeAll()
        return all
    }
}

/// Runs a completion at most once, whichever of the answer and the watchdog comes first.
private final class OnceCompletion: @unchecked Sendable {
    private let lock = NSLock()
    private var completion: (@Sendable (JSONHTTPClient.Response) -> Void)?

    init(_ completion: @escaping @Sendable (JSONHTTPClient.Response) -> Void) {
        self.completion = completion
    }

    /// Returns whether this call ran the completion.
    @discardableResult
    func fire(_ response: JSONHTTPClient.Response) -> Bool {
        lock.lock()
        let c = completion
        completion = nil
        lock.unlock()
        guard let c else { return false }
        c(response)
        return true
    }
}

/// Hands an answer from the session's thread to the waiting one.
private final class ResponseBox: @unchecked Sendable {
    private let lock = NSLock()
    private var response: JSONHTTPClient.Response?

    func set(_ r: JSONHTTPClient.Response) {
        lock.lock()
        response = r
        lock.unlock()
    }

    func get() -> JSONHTTPClient.Response? {
        lock.lock()
        defer { lock.unlock() }
        return response
    }
}
