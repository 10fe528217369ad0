/// How long a publisher waits before its next attempt after consecutive failures: `initial` seconds, doubling
/// with each further failure, never more than `maximum`. A gateway on a machine without avahi (no D-Bus system
/// bus, no daemon) keeps trying for as long as it runs, so the attempts soon thin out to one every few minutes;
/// one that meets a passing outage (a restarting bus) still retries within seconds.
struct RetryBackoff: Sendable, Equatable {
    let initial: Double
    let maximum: Double
    /// Failures since the last success.
    private(set) var failures = 0

    init(initial: Double, maximum: Double) {
        self.initial = initial
        self.maximum = max(initial, maximum)
    }

    /// The wait before the attempt after the failure just seen (the first failure waits `initial`).
    mutating func delayAfterFailure() -> Double {
        // 2^failures overflows nothing here: the exponent stops growing once the delay has reached the cap.
        let delay = min(initial * Double(1 << min(failures, 30)), maximum)
        failures += 1
        return delay
    }

    /// A success: the next failure starts again from `initial`.
    mutating func reset() { failures = 0 }
}
