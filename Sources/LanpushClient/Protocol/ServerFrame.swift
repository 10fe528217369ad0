import LanpushCore

/// One frame from the gateway (docs/PROTOCOL.md): a JSON object with a `type` (a lanpush.v2 array frame is read as
/// the object it stands for), kept as received so nothing a newer gateway adds is lost, with typed access to the
/// fields every frame kind shares.
public struct ServerFrame: Sendable, Hashable {
    public let type: String
    public let object: [String: JSONValue]

    /// The kinds that change what a device shows (and, but for `replay`, `synced` and `notifications_dropped`,
    /// carry a seq to acknowledge).
    public static let eventTypes: Set<String> = [
        "snapshot", "replay", "synced", "start", "update", "end", "lifecycle", "notification", "clear",
        "notifications_dropped",
    ]

    public init?(object: [String: JSONValue]) {
        guard let type = object["type"]?.stringValue else { return nil }
        self.type = type
        self.object = object
    }

    /// Parses one text message; nil for anything that is neither a JSON object with a string `type` nor a
    /// well-formed lanpush.v2 array frame.
    public init?(text: String) {
        guard let value = try? JSONValue.parse(text),
            let object = value.objectValue ?? value.arrayValue.flatMap(CompactFrame.object)
        else { return nil }
        self.init(object: object)
    }

    public subscript(key: String) -> JSONValue? { object[key] }

    public var isEvent: Bool { Self.eventTypes.contains(type) }

    /// The frame's seq, when it is a whole number in the protocol's range (0 … 2^53).
    public var seq: UInt64? { Self.integer(object["seq"]) }

    public var tag: String? { object["tag"]?.stringValue }

    /// Observers: the device the frame belongs to.
    public var deviceId: String? { object["device_id"]?.stringValue }

    public var phase: ActivityPhase? { object["phase"]?.stringValue.flatMap(ActivityPhase.init(rawValue:)) }

    public var json: JSONValue { .object(object) }

    static func integer(_ value: JSONValue?) -> UInt64? {
        guard let n = value?.numberValue, n >= 0, n <= 9_007_199_254_740_992, n == n.rounded() else { return nil }
        return UInt64(n)
    }
}
