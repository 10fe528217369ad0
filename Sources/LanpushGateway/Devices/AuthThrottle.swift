import Logging

/// Failed authentications per peer address (bad bearer tokens, wrong device or observer tokens, wrong pairing codes):
/// past `limit` in `window` seconds the address is refused — HTTP 429 with `Retry-After`, sessions closed with 4029
/// "try again in N s" — until the oldest of those failures leaves the window; then a valid token passes again.
/// Other addresses are never affected by one address's failures (pairing codes have a budget of their own per
/// pairing: `Pairings`). Loop thread only.
final class AuthThrottle {
    private var failures: AddressWindow
    private let metrics: GatewayMetrics
    private let logger: Logger

    init(limit: Int, window: Double, metrics: GatewayMetrics, logger: Logger) {
        failures = AddressWindow(limit: limit, window: window)
        self.metrics = metrics
        self.logger = logger
    }

    var limit: Int { failures.limit }
    var window: Double { failures.window }

    /// Seconds until `address` may try again; `nil` when it may now.
    func retryAfter(_ address: String, now: Double) -> Double? {
        failures.wait(address, now: now)
    }

    /// One failure from `address`. Logged once per burst: when it makes the address refused.
    func failed(_ address: String, now: Double) {
        metrics.authFailures.increment()
        if failures.record(address, now: now) == limit {
            metrics.authThrottled.increment()
            logger.warning("too many failed authentications: address refused for a while", metadata: [
                "peer": "\(address)", "failures": "\(limit)", "window_s": "\(Int(window))",
            ])
        }
    }

    /// `Retry-After` / the 4029 reason: whole seconds, at least one.
    static func seconds(_ wait: Double) -> Int { max(1, Int(wait.rounded(.up))) }
}
