/// The loop's most frequent counts, kept as plain integers and handed to their Prometheus counters once per loop turn
/// and before the metrics are read. Each `Counter.increment` is an atomic add, and at saturation the fan-out made
/// two for every device an update goes to and two more for every frame: each one waits for the stores before it to
/// reach the cache, and the fan-out's stores are to tables that miss it. Loop thread only.
final class TurnCounters {
    /// Changes handed to a device's sessions (`lanpush_events_in_total`).
    var eventsIn = 0
    /// Changes merged into one still waiting to be sent (`lanpush_coalesced_updates_total`).
    var coalesced = 0
    /// Event frames written to sessions (`lanpush_frames_out_total`).
    var framesOut = 0
    /// Bytes of every frame written to sessions (`lanpush_bytes_out_total`).
    var bytesOut = 0

    func flush(into metrics: GatewayMetrics) {
        if eventsIn > 0 { metrics.eventsIn.increment(by: Int64(eventsIn)) }
        if coalesced > 0 { metrics.coalesced.increment(by: Int64(coalesced)) }
        if framesOut > 0 { metrics.framesOut.increment(by: Int64(framesOut)) }
        if bytesOut > 0 { metrics.bytesOut.increment(by: Int64(bytesOut)) }
        eventsIn = 0
        coalesced = 0
        framesOut = 0
        bytesOut = 0
    }
}
