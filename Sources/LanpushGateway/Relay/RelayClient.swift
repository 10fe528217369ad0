import LanpushCore
import LanpushHTTPClient

/// POSTs relay bodies to HA's push relay (or any URL speaking its protocol), off the loop thread, through the shared
/// `JSONHTTPClient` (its hard timeout bounds the whole exchange). The completion runs exactly once, on the HTTP
/// client's thread or a Dispatch thread — hop to the loop with `LoopInbox.post` before touching the gateway's state.
final class RelayClient: Sendable {
    private let http: JSONHTTPClient

    init(timeout: Double = 10, userAgent: String = JSONHTTPClient.defaultUserAgent) {
        http = JSONHTTPClient(timeout: timeout, userAgent: userAgent)
    }

    var timeout: Double { http.timeout }
    var userAgent: String { http.userAgent }

    /// Cancels every request in flight (their completions report a network error).
    func shutdown() {
        http.shutdown()
    }

    /// Sends one pacer item: its body to its URL.
    func send(_ item: RelayItem, completion: @escaping @Sendable (RelayResponse) -> Void) {
        post(item.body, to: item.url, completion: completion)
    }

    /// POSTs `body` as JSON to `url` (`https://…` or, for tests, `http://…`). Never blocks.
    func post(_ body: JSONValue, to url: String, completion: @escaping @Sendable (RelayResponse) -> Void) {
        http.send("POST", url, body: body) { response in
            completion(RelayResponse(status: response.status, body: response.body, error: response.failure, duration: response.duration))
        }
    }
}

/// Why a relay request got no HTTP answer.
typealias RelayTransportError = JSONHTTPClient.Failure

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
