import LanpushCore

/// `connecting` until the session is synced, `live` while it is, `offline` between attempts, `authRejected` for good.
public enum ConnectionStatus: String, Sendable, Hashable {
    case connecting, live, offline, authRejected
}

public struct StatusChange: Sendable, Hashable {
    public var status: ConnectionStatus
    public var previous: ConnectionStatus
    /// How the last session ended, when this change is about that: the close code (nil when the transport could not
    /// tell, or there was no session) and reason, or why no connection could be made.
    public var code: Int?
    public var reason: String
    /// The next attempt starts in this many seconds (offline, while the client keeps trying).
    public var retryIn: Double?
    /// The attempt failed before a WebSocket was open (refused, unreachable, TLS): `reason` says why.
    public var connectFailed: Bool
}

/// `auth_ok`: who the gateway says this client is.
public struct SessionInfo: Sendable, Hashable {
    /// The device (device role); nil for an observer.
    public var deviceId: String?
    public var observer: Bool
    /// The device's own epoch and seq at this moment (not a resume point: docs/CLIENTS.md, rule 2).
    public var epoch: String?
    public var seq: UInt64?
}

/// Everything the client tells the app, in order. Iterate `LanpushClient.events`: the client hands out the next event
/// only once the app asks for it, so leaving the loop body is what "handled" means — a frame is acknowledged after
/// every event it caused was handled and the state was saved.
public enum ClientEvent: Sendable {
    case status(StatusChange)
    /// A session authenticated.
    case connected(SessionInfo)
    /// What a frame did to a device's state; `device` is this client's device, or for observers the frame's.
    case state(StateChange, device: String)
    /// The token was refused (4001 / `auth_invalid`): the client stopped and will not retry.
    case authRejected(message: String, code: Int?)
    /// `registered`: the gateway took the registration.
    case registered(pushToken: String?, supportsLiveActivities: Bool?)
    /// Observers: a device's sessions or registration changed (the `GET /v1/devices` entry).
    case device([String: JSONValue])
    /// A gateway `error` frame, a resynchronization, a store that failed. Informational: the client carries on.
    case error(String)
    /// Every frame as received, after the client handled it (only with `reportsFrames`: tools such as
    /// `lanpush watch --json`). `text` is the message exactly as it arrived.
    case frame(ServerFrame, text: String)
}
