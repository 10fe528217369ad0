import LanpushCore
import LanpushHTTPClient

/// POSTs relay bodies to HA's push relay (or any URL speaking its protocol), off the loop thread, through the shared
/// `JSONHTTPClient` (its hard timeout bounds the whole exchange). The completion runs exactly once, on the HTTP
/// client's thread or a Dispatch thread — hop to the loop with `LoopInbox.post` before touching the gateway's state.
///
/// Every request carries `X-Lanpush-Hop: <gateway id>`: a request that comes back to this gateway (a push_url that
/// names it by a name or address the push_url check could not know) is refused at its ingest, not relayed again.
/// A host name that resolves to a loopback or link-local address is not connected to unless the URL is under one of
/// `reachable` (the configured upstream, `relay.allowed_push_urls`).
final class RelayClient: Sendable {
    /// The header that marks a request relayed by a lanpush gateway, with the gateway's id as its value.
    static let hopHeader = "x-lanpush-hop"

    private let http: JSONHTTPClient
    private let gatewayId: String
    private let reachable: [PushURLPolicy.Origin]

    init(
        timeout: Double = 10, userAgent: String = JSONHTTPClient.defaultUserAgent, gatewayId: String = "",
        reachable: [String] = []
    ) {
        http = JSONHTTPClient(timeout: timeout, userAgent: userAgent)
        self.gatewayId = gatewayId
        self.reachable = reachable.compactMap(PushURLPolicy.Origin.init)
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
        let listed = PushURLPolicy.Origin(url).map { target in reachable.contains { $0.covers(target) } } ?? false
        let admits: (@Sendable (String) -> Bool)? = listed
            ? nil : { @Sendable address in !AddressClass.isInternal(address) }
        let hop = gatewayId.isEmpty ? [] : [(Self.hopHeader, gatewayId)]
        http.send("POST", url, body: body, headers: hop, admitsAddress: admits) { response in
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

/// The relay's HTTP answers read as the pacer's outcomes — here, in the relay client: the core knows outcomes, not
/// status codes.
extension RelayOutcome {
    /// Maps an HTTP answer (`status` nil = no answer: timeout or network error) and its parsed JSON body, as HA's
    /// relay means them (mobile-apps-fcm-push `functions/handlers.js`, `handleRequest` and `handleError`): its
    /// 500s name their cause in `errorType`.
    init(status: Int?, body: JSONValue?) {
        guard let status else {
            self = .failed
            return
        }
        let limits = RelayRateLimits(body)
        switch (status, body?["errorType"]?.stringValue) {
        case (200..<300, _): self = .success(remaining: limits.remaining, resetsAt: limits.resetsAt)
        case (429, _): self = .rateLimited(resetsAt: limits.resetsAt)
        case (403, _), (500, "InvalidToken"): self = .forbidden
        case (500, "PayloadTooLarge"): self = .payloadTooLarge
        case (408, _): self = .failed
        case (400..<500, _), (508, _): self = .rejected(status: status)
        default: self = .failed
        }
    }
}
