import Foundation
import Histogram
import LanpushCore
import LanpushLWS

#if canImport(Glibc)
import Glibc
#endif

/// What a client session speaks.
enum SessionKind {
    /// A lanpush device session: auth with the device token, subscribe, ack event frames (`ClientHub.ackEvery`).
    case lanpush(token: String)
    /// MQTT 3.1.1 over WebSocket (subprotocol `mqtt`): CONNECT, SUBSCRIBE to `filters` at `qos`, receive PUBLISH
    /// (a QoS 1 one answered with PUBACK at once: MQTT has no cumulative ack).
    case mqtt(clientId: String, filters: [String], qos: UInt8 = 0)
}

/// One client connection's state. Loop thread only.
final class ClientSession {
    let index: Int
    let kind: SessionKind
    var connection: WSClientConnection?
    var ready = false
    var failed = false
    var outbox: [[UInt8]] = []
    /// Event frames the ack last in `outbox` covers (0: the last item is not a pending cumulative ack).
    var framesInPendingAck = 0
    var mqttDecoder = MQTT.Decoder()
    /// Slow reader: frames received but not processed yet (processed one per tick).
    var backlog: [[UInt8]] = []
    /// Reconstructed state per tag (lanpush) or topic (MQTT), when the hub tracks state.
    var states: [String: JSONValue] = [:]
    var deliveries = 0
    /// The newest `progress` seen per tag (`ClientHub.progressCount`).
    var progressSeen: [Int] = []
    /// Closed on purpose (reconnect churn): its end is not a failure.
    var leaving = false
    /// The new connection of a churned session.
    var rejoining = false

    init(index: Int, kind: SessionKind) {
        self.index = index
        self.kind = kind
    }

    var isMQTT: Bool {
        if case .mqtt = kind { return true }
        return false
    }
}

/// One frame as the bytes scenario sees it.
struct FrameRecord {
    var wireBytes: Int
    /// Bytes of the same frame if it carried the whole new state instead of the delta.
    var fullStateWireBytes: Int
    /// The patch alone and the new state alone (JSON bytes): the payload-level ratio.
    var patchBytes = 0
    var stateBytes = 0
}

/// Counters the hub keeps on the loop thread; copied out with `hub.sync { hub.stats }`.
struct ClientStats {
    /// Event frames received (lanpush: start/update/end/...; MQTT: PUBLISH).
    var frames = 0
    /// Frames that carried a publisher timestamp (one update's delivery).
    var deliveries = 0
    var framesInWindow = 0
    var deliveriesInWindow = 0
    /// Updates whose state reached a session inside the window, in a frame of their own or merged into a later one
    /// (counted from the frames' `progress`, when `ClientHub.progressCount` is set).
    var coveredInWindow = 0
    /// Bytes received / sent on the WebSocket streams (payload + frame headers), after the handshake.
    var bytesIn = 0
    var bytesOut = 0
    var bytesInWindow = 0
    var bytesOutWindow = 0
    /// Ingest → delivery, ns, for updates sent inside the window.
    var latency = Histogram<UInt64>(highestTrackableValue: 120_000_000_000, numberOfSignificantValueDigits: .three)
    var lastReceive: UInt64 = 0
    var firstReceive: UInt64 = 0
    var connectFailures = 0
    var closedUnexpectedly = 0
    var lastFailure = ""
}
