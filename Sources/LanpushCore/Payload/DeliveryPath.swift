/// Which way a plain notification travels to a device (the README's routing table).
///
/// Live updates are not routed by it: they always go to the device's LAN sessions first and to the relay when the
/// device is gone. Companion-app commands always go to the relay.
public enum DeliveryPath: String, Sendable, Hashable, CaseIterable {
    /// The device's LAN sessions; through the relay only while the device is gone.
    case lan
    /// Only through the relay, to the companion app (never on the LAN).
    case relay
    /// Both at once: queued for the LAN sessions and relayed now.
    case both
}

/// A device's setting for plain notifications: a path, or `auto` — the relay when the device has relay
/// credentials (so a phone's ordinary notifications keep arriving through its companion app), else the LAN.
public enum NotificationRouting: String, Sendable, Hashable, CaseIterable {
    case auto, lan, relay, both

    /// The path for one notification: the message's own override wins over the device's setting.
    public func path(override: DeliveryPath?, hasRelayCredentials: Bool) -> DeliveryPath {
        if let override { return override }
        switch self {
        case .auto: return hasRelayCredentials ? .relay : .lan
        case .lan: return .lan
        case .relay: return .relay
        case .both: return .both
        }
    }
}

/// Something worth telling the sender about an accepted payload: `{"field","message"}` in the answer's `warnings`.
public struct FieldWarning: Sendable, Hashable {
    public var field: String
    /// The rule the field broke (as a refusal names it), or what the warning is about.
    public var rule: String
    public var message: String

    public init(field: String, rule: String, message: String) {
        self.field = field
        self.rule = rule
        self.message = message
    }

    public var json: JSONValue { ["field": .string(field), "rule": .string(rule), "message": .string(message)] }
}

/// A notify payload accepted by every ingest (HA's relay body, `/v1/push`, the HA local push channel): what it
/// means, its routing override (`data.lanpush.path`) and the warnings for its sender.
public struct AcceptedPush: Sendable, Hashable {
    public var command: PushCommand
    public var path: DeliveryPath?
    public var warnings: [FieldWarning]

    public init(command: PushCommand, path: DeliveryPath? = nil, warnings: [FieldWarning] = []) {
        self.command = command
        self.path = path
        self.warnings = warnings
    }
}
