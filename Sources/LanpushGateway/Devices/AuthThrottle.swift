import Logging

/// Failed authentications per peer address (bad bearer tokens, wrong device or observer tokens, wrong pairing codes):
/// past `limit` in `window` seconds the address is refused — HTTP 429 with `Retry-After`, sessions closed with 4029
/// "try again in N s" — until the oldest of those failures leaves the window; then a valid token passes again.
/// Pairing codes are also limited across all addresses (`globalLimit`), so many addresses cannot share one guess
/// budget. Other addresses are never affected by one address's failures. Loop thread only.
final class AuthThrottle {
    let limit: Int
    let window: Double
    let globalLimit: Int
    private var failures: [String: [Double]] = [:]
    private var pairingFailures: [Double] = []
    private let metrics: GatewayMetrics
    private let logger: Logger

    init(limit: Int, window: Double, globalLimit: Int, metrics: GatewayMetrics, logger: Logger) {
        self.limit = max(1, limit)
        self.window = max(1, window)
        self.globalLimit = max(1, globalLimit)
        self.metrics = metrics
        self.logger = logger
    }

    /// Seconds until `address` may try again; `nil` when it may now.
    func retryAfter(_ address: String, now: Double) -> Double? {
        guard var times = failures[address] else { return nil }
        times.removeAll { $0 <= now - window }
        failures[address] = times.isEmpty ? nil : times
        guard times.count >= limit else { return nil }
        return times[times.count - limit] + window - now
    }

    /// Seconds until anyone may try a pairing code again; `nil` when they may now.
    func pairingRetryAfter(now: Double) -> Double? {
        pairingFailures.removeAll { $0 <= now - window }
        guard pairingFailures.count >= globalLimit else { return nil }
        return pairingFailures[pairingFailures.count - globalLimit] + window - now
    }

    /// One failure from `address`. Logged once per burst: when it makes the address refused.
    func failed(_ address: String, now: Double, pairing: Bool = false) {
        metrics.authFailures.increment()
        failures[address, default: []].append(now)
        if pairing { pairingFailures.append(now) }
        if failures[address]!.filter({ $0 > now - window }).count == limit {
            metrics.authThrottled.increment()
            logger.warning("too many failed authentications: address refused for a while", metadata: [
                "peer": "\(address)", "failures": "\(limit)", "window_s": "\(Int(window))",
            ])
        }
    }

    /// `Retry-After` / the 4029 reason: whole seconds, at least one.
    static func seconds(_ wait: Double) -> Int { max(1, Int(wait.rounded(.up))) }
}
