import LanpushCore

/// One session of a test gateway (lanpush.v1, or v2 when opened with that subprotocol), with what a client would
/// hold: the frames it got and, applied to them as docs/PROTOCOL.md says, its activities (by tag) and plain
/// notifications.
public final class TestSession {
    public let id: UInt64
    public let transport: RecordingTransport
    private unowned let gateway: TestGateway
    private var applied = 0
    /// The client's picture: tag → `{"attributes","state","phase",...}` as a snapshot entry has it.
    public private(set) var activities: [String: [String: JSONValue]] = [:]
    /// Activities an end removed at once (`"phase":"dismissed"`), with their last state.
    public private(set) var dismissed: [String: [String: JSONValue]] = [:]
    public private(set) var notifications: [JSONValue] = []
    public private(set) var epoch: String?
    /// The device its `auth_ok` named.
    public private(set) var deviceId: String?
    /// The newest seq of an event it was sent (what it acks).
    public private(set) var seq: UInt64 = 0

    init(gateway: TestGateway, id: UInt64, transport: RecordingTransport) {
        self.gateway = gateway
        self.id = id
        self.transport = transport
    }

    /// Every frame the gateway sent this session, a v2 array frame as the object it stands for (each frame read
    /// once: the fuzz harness and the tests ask for this after every step).
    public var frames: [JSONValue] {
        let sent = transport.sent
        if normalized.count < sent.count {
            normalized += sent[normalized.count...].map { frame in
                frame.arrayValue.flatMap(CompactFrame.object).map(JSONValue.object) ?? frame
            }
        }
        return normalized
    }
    private var normalized: [JSONValue] = []

    public func frames(_ type: String) -> [JSONValue] { frames.filter { $0["type"]?.stringValue == type } }

    public var closeCode: UInt16? { transport.closed?.code }

    public func send(_ frame: JSONValue) {
        gateway.receive(sessionId: id, frame.serializedBytes())
    }

    /// A publisher's `push` frame: `body` as `POST /v1/push` takes it, with `id` when given.
    public func push(_ body: JSONValue, id: JSONValue? = nil) {
        guard case .object(var o) = body else { preconditionFailure("a push body is an object") }
        o["type"] = "push"
        if let id { o["id"] = id }
        send(.object(o))
    }

    public func send(text: String) {
        gateway.receive(sessionId: id, Array(text.utf8))
    }

    /// Takes over what another session of the same client held (a reconnect); its own frames apply on top.
    func adopt(_ other: TestSession) {
        activities = other.activities
        dismissed = other.dismissed
        notifications = other.notifications
        seq = other.seq
    }

    /// Applies the frames not yet applied; returns them.
    @discardableResult
    public func read() -> [JSONValue] {
        let new = Array(frames.dropFirst(applied))
        applied = frames.count
        for f in new { apply(f) }
        return new
    }

    /// Acknowledges everything received so far (cumulative).
    public func ack() {
        read()
        send(["type": "ack", "seq": .number(Double(seq))])
    }

    /// The socket takes data again (after `transport.choked` or `chokeAfter`): the gateway writes only if it asked
    /// to, as lws calls back only on a pending write request.
    public func drain() {
        transport.choked = false
        transport.chokeAfter = nil
        gateway.turn()
    }

    /// The client goes away.
    public func close() {
        gateway.close(sessionId: id)
    }

    public func state(_ tag: String) -> [String: JSONValue]? { activities[tag]?["state"]?.objectValue }

    public func phase(_ tag: String) -> String? { activities[tag]?["phase"]?.stringValue }

    private func apply(_ f: JSONValue) {
        guard let type = f["type"]?.stringValue, let o = f.objectValue else { return }
        switch type {
        case "auth_ok":
            epoch = o["epoch"]?.stringValue
            deviceId = o["device_id"]?.stringValue
        case "snapshot":
            epoch = o["epoch"]?.stringValue
            activities = [:]
            for a in o["activities"]?.arrayValue ?? [] {
                if let tag = a["tag"]?.stringValue, let entry = a.objectValue { activities[tag] = entry }
            }
        case "start":
            guard let tag = o["tag"]?.stringValue else { return }
            // Kept as a snapshot entry has it, so a picture built from events compares with one from a snapshot.
            var entry = o.filter { ["tag", "attributes", "state", "stale_date", "relevance_score", "dismissal_date"].contains($0.key) }
            entry["phase"] = o["phase"] ?? "active"
            activities[tag] = entry
        case "update", "end":
            guard let tag = o["tag"]?.stringValue, var entry = activities[tag] else { return }
            let state = entry["state"]?.objectValue ?? [:]
            entry["state"] = .object(MergePatch.apply(o["patch"]?.objectValue ?? [:], to: state))
            entry["phase"] = type == "end" ? "ended" : (o["phase"] ?? "active")
            // Every update and end carries the activity's stale date and relevance when it has them; `null` removes a
            // stale date the client held (absent: none, which the gateway only sends when the client held none).
            for key in ["stale_date", "relevance_score"] {
                if let value = o[key], !value.isNull { entry[key] = value } else { entry.removeValue(forKey: key) }
            }
            if let date = o["dismissal_date"] { entry["dismissal_date"] = date }
            if o["phase"] == "dismissed" {
                activities.removeValue(forKey: tag)
                dismissed[tag] = entry
            } else {
                activities[tag] = entry
            }
        case "lifecycle":
            guard let tag = o["tag"]?.stringValue else { return }
            if o["phase"] == "dismissed" {
                activities.removeValue(forKey: tag)
            } else {
                activities[tag]?["phase"] = o["phase"]
            }
        case "notification", "clear":
            notifications.append(f)
        default:
            break
        }
        if let s = o["seq"]?.numberValue, ["start", "update", "end", "lifecycle", "notification", "clear", "snapshot"].contains(type) {
            seq = max(seq, UInt64(s))
        }
    }
}
