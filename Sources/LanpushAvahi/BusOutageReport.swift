/// When the log speaks about the D-Bus system bus: one warning when it becomes unreachable, another only when the
/// reason changes (a different Avahi error), one line when it is reachable again — never one per retry, which on a
/// machine without avahi would be a line every few seconds for as long as the gateway runs.
struct BusOutageReport: Sendable, Equatable {
    /// The Avahi error of the outage last reported; nil while the bus is reachable.
    private(set) var reportedError: Int32?

    /// An attempt to reach the bus failed with `error`: true when that is news (log a warning).
    mutating func failed(error: Int32) -> Bool {
        guard reportedError != error else { return false }
        reportedError = error
        return true
    }

    /// An attempt reached the bus: true when an outage had been reported (log that it is over).
    mutating func reached() -> Bool {
        guard reportedError != nil else { return false }
        reportedError = nil
        return true
    }
}
