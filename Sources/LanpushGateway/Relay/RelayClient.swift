import Foundation
import LanpushCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// POSTs relay bodies to HA's push relay (or any URL speaking its protocol), off the loop thread.
///
/// One `URLSession` per client: TLS verification on (the system's trust store, URLSession's default),
/// `Content-Type: application/json`, `User-Agent: lanpush/<version>`, no cookies, no cache, and a hard
/// `timeout` for the whole exchange (connect + send + answer). `post` returns at once; the completion runs
/// exactly once, on a URLSession / Dispatch thread — hop to the loop with `LoopInbox.post` before touching the hub.
final class RelayClient: Sendable {
    static let defaultUserAgent = "lanpush/\(LanpushVersion.current)"

    let timeout: Double
    let userAgent: String
    private let session: URLSession

    init(timeout: Double = 10, userAgent: String = RelayClient.defaultUserAgent) {
        self.timeout = timeout
        self.userAgent = userAgent
        let configuration = URLSessionConfiguration.ephemeral
        // swift-corelibs-foundation hands libcurl whole seconds (0.5 s becomes "time out at once"): URLSession's
        // own limits are a backstop a second past the watchdog in `post`, which enforces `timeout` exactly.
        let backstop = (max(timeout, 0) + 1).rounded(.up)
        configuration.timeoutIntervalForRequest = backstop
        configuration.timeoutIntervalForResource = backstop
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        session = URLSession(configuration: configuration)
    }

    /// Cancels every request in flight (their completions report a network error) and frees the session.
    func shutdown() {
        session.invalidateAndCancel()
    }

    /// Sends one pacer item: its body to its URL.
    func send(_ item: RelayItem, completion: @escaping @Sendable (RelayResponse) -> Void) {
        post(item.body, to: item.url, completion: completion)
    }

    /// POSTs `body` as JSON to `url` (`https://…` or, for tests, `http://…`). Never blocks.
    func post(_ body: JSONValue, to url: String, completion: @escaping @Sendable (RelayResponse) -> Void) {
        let started = DispatchTime.now()
        let once = OnceCompletion(completion)
        @Sendable func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9 }

        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(),
            scheme == "https" || scheme == "http", target.host != nil
        else {
            DispatchQueue.global().async {
                once.fire(RelayResponse(error: .invalidURL(url), duration: 0))
            }
            return
        }
        var request = URLRequest(
            url: target, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: (max(timeout, 0) + 1).rounded(.up))
        request.httpMethod = "POST"
        request.httpBody = Data(body.serializedBytes())
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")

        let task = session.dataTask(with: request) { data, response, error in
            if let http = response as? HTTPURLResponse, error == nil {
                let bytes = data.map { [UInt8]($0) } ?? []
                let json = bytes.isEmpty ? nil : try? JSONValue.parse(bytes)
                once.fire(RelayResponse(status: http.statusCode, body: json, duration: elapsed()))
                return
            }
            let failure: RelayTransportError
            if let urlError = error as? URLError {
                failure = urlError.code == .timedOut ? .timeout : .network(Self.describe(urlError))
            } else {
                failure = .network(error.map { "\($0)" } ?? "no HTTP answer")
            }
            once.fire(RelayResponse(error: failure, duration: elapsed()))
        }
        // URLSession's own timeouts are per stage on some platforms: this one bounds the whole exchange.
        DispatchQueue.global().asyncAfter(deadline: .now() + max(timeout, 0)) { [weak task] in
            if once.fire(RelayResponse(error: .timeout, duration: elapsed())) { task?.cancel() }
        }
        task.resume()
    }

    private static func describe(_ error: URLError) -> String {
        switch error.code {
        case .cannotConnectToHost: return "connection refused"
        case .cannotFindHost, .dnsLookupFailed: return "host not found"
        case .notConnectedToInternet: return "not connected"
        case .networkConnectionLost: return "connection lost"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return "TLS: \(error.localizedDescription)"
        default: return error.localizedDescription
        }
    }
}

/// Why a relay request got no HTTP answer.
enum RelayTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidURL(String)
    case timeout
    case network(String)

    var description: String {
        switch self {
        case .invalidURL(let url): return "invalid relay URL \(url)"
        case .timeout: return "timed out"
        case .network(let message): return message
        }
    }
}

/// The relay's answer to one request (or why there was none).
struct RelayResponse: Sendable {
    /// HTTP status; `nil` when there was no answer (`error` says why).
    var status: Int?
    /// The answer's JSON body; `nil` when empty or not JSON.
    var body: JSONValue?
    var error: RelayTransportError?
    /// Seconds from `post` to the answer.
    var duration: Double

    init(status: Int? = nil, body: JSONValue? = nil, error: RelayTransportError? = nil, duration: Double) {
        self.status = status
        self.body = body
        self.error = error
        self.duration = duration
    }

    /// `rateLimits` of the answer (`remaining`, `maximum`, `resetsAt` in Unix seconds, and the object as sent).
    var rateLimits: RelayRateLimits { RelayRateLimits(body) }

    /// What the pacer makes of it: 2xx success, 429 rate limited, 403 forbidden, other 4xx rejected,
    /// 5xx / 408 / no answer failed.
    var outcome: RelayOutcome { RelayOutcome(status: error == nil ? status : nil, body: body) }
}

/// Runs a completion at most once, whichever of the answer and the watchdog comes first.
private final class OnceCompletion: @unchecked Sendable {
    private let lock = NSLock()
    private var completion: (@Sendable (RelayResponse) -> Void)?

    init(_ completion: @escaping @Sendable (RelayResponse) -> Void) {
        self.completion = completion
    }

    /// Returns whether this call ran the completion.
    @discardableResult
    func fire(_ response: RelayResponse) -> Bool {
        lock.lock()
        let c = completion
        completion = nil
        lock.unlock()
        guard let c else { return false }
        c(response)
        return true
    }
}
