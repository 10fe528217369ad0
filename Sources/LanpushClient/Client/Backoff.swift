/// Reconnect delays: exponential with jitter, so a gateway restart is not met by every client at once.
public struct Backoff: Sendable {
    /// First delay in seconds.
    public var initial: Double
    /// Ceiling in seconds.
    public var maximum: Double
    /// Growth per failed attempt.
    public var factor: Double
    /// Share of each delay that is random (0…1): the delay is drawn from [d·(1−jitter), d]. Some jitter spreads
    /// clients out; keeping half of the delay fixed keeps them from hammering.
    public var jitter: Double
    /// How many delays were handed out since the last reset.
    public private(set) var attempts = 0

    public init(initial: Double = 0.5, maximum: Double = 30, factor: Double = 2, jitter: Double = 0.5) {
        self.initial = initial
        self.maximum = maximum
        self.factor = factor
        self.jitter = min(1, max(0, jitter))
    }

    /// The delay before the next attempt; each call counts as one more failure. `random` is in 0..<1.
    public mutating func next(random: Double) -> Double {
        var ceiling = initial
        for _ in 0..<min(attempts, 64) { ceiling *= factor }
        ceiling = min(maximum, ceiling)
        attempts += 1
        return ceiling * (1 - jitter * random)
    }

    /// A session reached the live state: the next failure starts from the initial delay again.
    public mutating func reset() { attempts = 0 }
}
