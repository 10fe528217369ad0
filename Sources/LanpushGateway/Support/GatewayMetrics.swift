import Metrics

/// The gateway's Prometheus series (swift-metrics API; the daemon bootstraps the Prometheus backend).
/// Handles are created once; the hot path only increments.
final class GatewayMetrics: Sendable {
    let sessions = Gauge(label: "lanpush_sessions")
    let devicesConnected = Gauge(label: "lanpush_devices_connected")
    let eventsIn = Counter(label: "lanpush_events_in_total")
    let framesOut = Counter(label: "lanpush_frames_out_total")
    let bytesOut = Counter(label: "lanpush_bytes_out_total")
    let coalesced = Counter(label: "lanpush_coalesced_updates_total")
    let relayBacklog = Gauge(label: "lanpush_relay_backlog")
    let notificationsDropped = Counter(label: "lanpush_notifications_dropped_total")
    let sessionsClosed = Counter(label: "lanpush_sessions_closed_total")
    private let rejectCounters: [String: Counter]

    static let rejectReasons = [
        "invalid_json", "content_type", "validation", "auth", "not_found", "method", "body_too_large",
        "length_required", "no_target", "forbidden",
    ]

    init() {
        var counters = [String: Counter]()
        for reason in Self.rejectReasons {
            counters[reason] = Counter(label: "lanpush_rejects_total", dimensions: [("reason", reason)])
        }
        rejectCounters = counters
    }

    func reject(_ reason: String) {
        rejectCounters[reason]?.increment()
    }
}
