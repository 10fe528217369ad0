/// The time a test gateway sees: it moves only when the test says so, so timeouts, stale dates and relay pacing
/// are exact and instant.
public final class ManualClock: @unchecked Sendable {
    public private(set) var now: Double

    public init(_ start: Double = 1_800_000_000) {
        now = start
    }

    public func advance(by seconds: Double) {
        now += seconds
    }

    /// The closure the gateway reads the time through.
    public var reading: () -> Double { { [unowned self] in self.now } }
}
