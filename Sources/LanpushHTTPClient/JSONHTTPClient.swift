import Foundation
import LanpushCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one HTTP client of lanpush (the relay path, HA's REST API, the CLI): JSON in and out over URLSession, a
/// hard timeout for the whole exchange, no cookies, no cache, TLS verified against the system's trust store.
///
/// `send` returns at once; its completion runs exactly once, on a URLSession / Dispatch thread — a caller on an
/// event loop hops back to it before touching anything. `sendAndWait` blocks (for the CLI, which runs no loop).
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
    private let session: LazySession

    /// `bearer`: sent as `Authorization: Bearer <token>` on every request.
    public init(timeout: Double = 10, userAgent: String = JSONHTTPClient.defaultUserAgent, bearer: String? = nil) {
        self.timeout = timeout
        self.userAgent = userAgent
        self.bearer = bearer
        // swift-corelibs-foundation hands libcurl whole seconds (0.5 s becomes "time out at once"): URLSession's own
        // limits are a backstop a second past the watchdog in `send`, which enforces `timeout` exactly.
        session = LazySession(backstop: (max(timeout, 0) + 1).rounded(.up))
    }

    /// Cancels every request in flight (their completions report a network error) and frees the session; a request
    /// sent afterwards fails at once.
    public func shutdown() {
        session.shutdown()
    }

    /// `method` `url` (`http://` or `https://`), `body` as JSON when given. Never blocks.
    public func send(
        _ method: String, _ url: String, body: JSONValue? = nil, completion: @escaping @Sendable (Response) -> Void
    ) {
        let started = DispatchTime.now()
        let once = OnceCompletion(completion)
        @Sendable func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9 }

        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(),
            scheme == "https" || scheme == "http", target.host != nil
        else {
            DispatchQueue.global().async { once.fire(Response(failure: .invalidURL(url))) }
            return
        }
        var request = URLRequest(
            url: target, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: (max(timeout, 0) + 1).rounded(.up))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        if let bearer, !bearer.isEmpty { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body.serializedBytes())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        guard let session = session.get() else {
            DispatchQueue.global().async { once.fire(Response(failure: .network("the HTTP client was shut down"))) }
            return
        }
        let task = session.dataTask(with: request) { data, response, error in
            if let http = response as? HTTPURLResponse, error == nil {
                let bytes = data.map { [UInt8]($0) } ?? []
                let json = bytes.isEmpty ? nil : try? JSONValue.parse(bytes)
                once.fire(Response(status: http.statusCode, body: json, bytes: bytes, duration: elapsed()))
                return
            }
            let failure: Failure
            if let urlError = error as? URLError {
                failure = urlError.code == .timedOut ? .timeout : .network(Self.describe(urlError))
            } else {
                failure = .network(error.map { "\($0)" } ?? "no HTTP answer")
            }
            once.fire(Response(failure: failure, duration: elapsed()))
        }
        // URLSession's own timeouts are per stage on some platforms: this one bounds the whole exchange.
        DispatchQueue.global().asyncAfter(deadline: .now() + max(timeout, 0)) { [weak task] in
            if once.fire(Response(failure: .timeout, duration: elapsed())) { task?.cancel() }
        }
        task.resume()
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

    static func describe(_ error: URLError) -> String {
        switch error.code {
        case .cannotConnectToHost: return "connection refused"
        case .cannotFindHost, .dnsLookupFailed: return "host not found"
        case .notConnectedToInternet: return "not connected"
        case .networkConnectionLost: return "connection lost"
        case .badServerResponse: return "bad HTTP answer"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return "TLS: \(error.localizedDescription)"
        default: return error.localizedDescription
        }
    }
}

/// The URLSession, made at the first request rather than with the client: a session brings libcurl up (about 0.4 MiB
/// of its code touched at once), and a gateway whose devices are all on the LAN may never send a request to the relay
/// or to Home Assistant.
private final class LazySession: @unchecked Sendable {
    private let lock = NSLock()
    private let backstop: Double
    private var session: URLSession?
    private var shut = false

    init(backstop: Double) {
        self.backstop = backstop
    }

    /// The session, made now if this is the first request; `nil` once shut down.
    func get() -> URLSession? {
        lock.lock()
        defer { lock.unlock() }
        if shut { return nil }
        if let session { return session }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = backstop
        configuration.timeoutIntervalForResource = backstop
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        let made = URLSession(configuration: configuration)
        session = made
        return made
    }

    func shutdown() {
        lock.lock()
        let made = session
        session = nil
        shut = true
        lock.unlock()
        made?.invalidateAndCancel()
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
