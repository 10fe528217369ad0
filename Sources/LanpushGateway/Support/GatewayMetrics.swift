import Metrics

/// The gateway's Prometheus series (swift-metrics API; the daemon bootstraps the Prometheus backend).
/// Handles are created once; the hot path only increments.
final class GatewayMetrics: Sendable {
    let sessions = Gauge(label: "lanpush_sessions")
    let devicesConnected = Gauge(label: "lanpush_devices_connected")
    /// Every device's resume history together, in estimated bytes (bounded by `limits.resume_history_bytes`).
    let resumeHistoryBytes = Gauge(label: "lanpush_resume_history_bytes")
    let eventsIn = Counter(label: "lanpush_events_in_total")
    let framesOut = Counter(label: "lanpush_frames_out_total")
    let bytesOut = Counter(label: "lanpush_bytes_out_total")
    let coalesced = Counter(label: "lanpush_coalesced_updates_total")
    // The relay path.
    let relayQueue = Gauge(label: "lanpush_relay_queue")
    let relayRequests = Counter(label: "lanpush_relay_requests_total")
    let relayDropped = Counter(label: "lanpush_relay_dropped_total")
    let relayTemplatesStripped = Counter(label: "lanpush_relay_templates_stripped_total")
    let relayInvalidTokens = Gauge(label: "lanpush_relay_invalid_tokens")
    /// Push tokens the relay said are invalid (403, or 500 `InvalidToken`): each stops its device's relay path.
    let relayInvalidatedTokens = Counter(label: "lanpush_relay_tokens_invalidated_total")
    private let relayAnswers: [String: Counter] = Dictionary(uniqueKeysWithValues: ["2xx", "403", "429", "4xx", "5xx", "error"].map {
        ($0, Counter(label: "lanpush_relay_answers_total", dimensions: [("status", $0)]))
    })
    let notificationsDropped = Counter(label: "lanpush_notifications_dropped_total")
    /// Loop turns whose changes were committed, by where: on the event loop (a transaction each), or handed to the
    /// writer's thread (which may join several in one transaction). `CommitPath` chooses.
    let commitsOnLoop = Counter(label: "lanpush_store_commits_total", dimensions: [("on", "loop")])
    let commitsOnWriter = Counter(label: "lanpush_store_commits_total", dimensions: [("on", "writer")])
    let sessionsClosed = Counter(label: "lanpush_sessions_closed_total")
    /// Failed authentications (bearer tokens, session tokens, pairing codes), and addresses refused for a while.
    let authFailures = Counter(label: "lanpush_auth_failures_total")
    let authThrottled = Counter(label: "lanpush_auth_throttled_total")
    // HA-native mode: the local push channel to Home Assistant.
    /// Notifications received over the channel, and how many of them were rejected (invalid payload) or were
    /// duplicates of one already accepted (same `hass_confirm_id`, e.g. through the push_url fallback).
    let haEvents = Counter(label: "lanpush_ha_events_total")
    let haEventsRejected = Counter(label: "lanpush_ha_events_rejected_total")
    let haEventsDuplicate = Counter(label: "lanpush_ha_events_duplicate_total")
    /// `mobile_app/push_notification_confirm`s HA accepted, and those it answered with an error (it had given up
    /// waiting — 10 s — fallen back to the push_url and torn the channel down).
    let haConfirms = Counter(label: "lanpush_ha_confirms_total")
    let haConfirmErrors = Counter(label: "lanpush_ha_confirm_errors_total")
    /// Connections to HA's websocket API (each attempt), registrations made, subscribed channels, link up.
    let haConnects = Counter(label: "lanpush_ha_connects_total")
    let haRegistrations = Counter(label: "lanpush_ha_registrations_total")
    let haChannels = Gauge(label: "lanpush_ha_channels")
    let haConnected = Gauge(label: "lanpush_ha_connected")
    /// mobile_app webhook calls for the devices' entities (`register_sensor`, `update_sensor_states`) HA accepted, and
    /// the Live Activity bookkeeping sent to an HA that has it (`live_activity_token`, `live_activity_dismissed`).
    let haSensorCalls = Counter(label: "lanpush_ha_sensor_calls_total")
    let haLiveActivityCalls = Counter(label: "lanpush_ha_live_activity_calls_total")
    private let rejectCounters: [String: Counter]

    static let rejectReasons = [
        "invalid_json", "content_type", "validation", "auth", "not_found", "method", "body_too_large",
        "length_required", "no_target", "forbidden", "no_relay", "bad_path", "throttled", "conflict",
    ]

    init() {
        var counters = [String: Counter]()
        for reason in Self.rejectReasons {
            counters[reason] = Counter(label: "lanpush_rejects_total", dimensions: [("reason", reason)])
        }
        rejectCounters = counters
    }

    func relayAnswer(_ status: Int?) {
        let key: String
        switch status {
        case nil: key = "error"
        case let s? where (200..<300).contains(s): key = "2xx"
        case 403?: key = "403"
        case 429?: key = "429"
        case let s? where (400..<500).contains(s): key = "4xx"
        default: key = "5xx"
        }
        relayAnswers[key]?.increment()
    }

    func reject(_ reason: String) {
        rejectCounters[reason]?.increment()
    }
}
