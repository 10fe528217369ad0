import LanpushCore
import Logging

/// One WebSocket session of the LAN client protocol. Owned by the `SessionRegistry`; touched only on the lws loop
/// thread.
final class StreamSession {
    enum Role: Equatable {
        /// Waiting for `auth`.
        case pending
        case device(String)
        /// Admin or viewer watching one device or all; never acks for a device, never counts as connected. A viewer
        /// sees relay credentials redacted (`admin` false).
        case observer(device: String?, admin: Bool)
        /// Admin streaming updates in (`push` frames through the one ingest); gets answers, never events.
        case publisher
    }

    let id: UInt64
    let transport: SessionTransport
    let openedAt: Double
    var role: Role = .pending
    /// The protocol version its frames are written in: the handshake's subprotocol, or the `auth` frame's choice.
    var version: ProtocolVersion
    /// Frames that go out ahead of events (auth answers, synced, errors).
    var control: [[UInt8]] = []
    /// Per device: what this session still has to be sent. A device session has one; an observer one per device.
    var coalescers: [String: Coalescer] = [:]

    /// Whether this session follows device `id`. Asked on every change and every frame: `coalescers[id] != nil`
    /// would copy the coalescer out of the dictionary (a retain and a release of each of its buffers) to compare it.
    func follows(_ id: String) -> Bool { coalescers.index(forKey: id) != nil }

    /// Runs `body` on the coalescer for device `id` where it lies; `nil` when the session does not follow `id`.
    /// Every change, frame and ack goes through here: `coalescers[id]!.note(…)` moves the ~300-byte coalescer
    /// out of the dictionary and back (hashing the key twice), and `coalescers[id]?.ackedSeq` copies it whole.
    /// A device's session follows that one device: its slot is found by comparing the id (short ids are compared as
    /// two words), not by hashing it, several times for every frame.
    func withCoalescer<Result>(_ id: String, _ body: (inout Coalescer) -> Result) -> Result? {
        let slot: Dictionary<String, Coalescer>.Index
        if coalescers.count == 1 {
            slot = coalescers.startIndex
            guard coalescers.keys[slot] == id else { return nil }
        } else {
            guard let found = coalescers.index(forKey: id) else { return nil }
            slot = found
        }
        return body(&coalescers.values[slot])
    }

    /// A publisher's stream (item numbers, answers, flow control); `nil` for every other role.
    var publisher: PublisherState?
    var subscribed = false
    /// Counted among the unauthenticated sessions of its address (`SessionRegistry.pendingByPeer`) until it
    /// authenticates.
    var countedPending = true
    var closing = false
    /// A close waiting for the control frames ahead of it (e.g. `auth_invalid`) to go out first.
    var pendingClose: (code: UInt16, reason: String)?
    var lastActivity: Double

    init(id: UInt64, transport: SessionTransport, now: Double) {
        self.id = id
        self.transport = transport
        self.version = ProtocolVersion(rawValue: transport.subprotocol) ?? .v1
        self.openedAt = now
        self.lastActivity = now
    }

    /// A device session's record and the directory's `changes` when it was found (`DeviceDirectory.device(of:)`).
    var foundDevice: (changes: UInt64, record: DeviceRecord?)?

    var deviceId: String? {
        if case .device(let id) = role { return id }
        return nil
    }

    var isObserver: Bool {
        if case .observer = role { return true }
        return false
    }

    func queueControl(_ value: JSONValue) {
        control.append(value.serializedBytes())
        transport.requestWritable()
    }

    /// Log metadata naming the session, its peer and who it is.
    func metadata(_ extra: Logger.Metadata = [:]) -> Logger.Metadata {
        var m: Logger.Metadata = ["session": "\(id)", "peer": "\(transport.peer)"]
        switch role {
        case .pending: m["role"] = "pending"
        case .device(let id): m["device"] = "\(id)"
        case .observer(let d, _): m["observer"] = "\(d ?? "*")"
        case .publisher: m["role"] = "publisher"
        }
        return m.merging(extra) { _, new in new }
    }
}
