import Foundation

/// Everything a `LanpushClient` needs: the stream URL and a token (a pairing URL gives both), and how to behave.
public struct LanpushConfiguration: Sendable {
    public enum Role: Sendable, Hashable {
        /// A device: acknowledges what it handled, keeps and resumes its state.
        case device
        /// A live-preview client with an admin or viewer token: sees every device (or `device`), never acks or resumes.
        case observer(device: String?)
    }

    /// `ws://HOST:PORT/v1/stream` (or `wss://`).
    public var url: URL
    /// A device token, or the admin / viewer token of an observer.
    public var token: String
    public var role: Role = .device
    /// How `wss://` checks the gateway: a pairing URL's fingerprint pins its certificate.
    public var tls: TLSPolicy = .system
    /// Where the resume point and state live across launches (device role). Nil: nothing is kept.
    public var store: (any StateStore)?
    /// The store key (default `lanpush:<url>`).
    public var storeKey: String?
    /// Where to start when the store holds nothing (e.g. a resume point kept elsewhere).
    public var initialState: DeviceState?
    /// Sent after every authentication (device role).
    public var registration: Registration?
    public var backoff = Backoff()
    /// The gateway's credit window (`session.window`): acks go out at least every half window.
    public var window = 32
    /// No `auth_ok` within this many seconds of connecting: give up on the attempt (a dying gateway never answers).
    public var handshakeTimeout = 5.0
    /// Asks the gateway to ping this session every this many seconds instead of its `session.ping_interval` (it
    /// grants it within `session.keepalive_min` … `keepalive_max`: `LanpushClient.keepalive`). Each ping wakes a
    /// phone's radio; a vanished client is counted as gone after about this long plus `session.ping_timeout`.
    /// `nil`: the gateway's interval.
    public var keepalive: Int?
    /// Quiet this long: send a `ping`; no frame within `keepaliveTimeout` after it: the link is dead. 0 = off. With a
    /// longer `keepalive` granted, at least twice that: the client's pings never come more often than the gateway's.
    public var keepaliveInterval = 30.0
    public var keepaliveTimeout = 10.0
    /// Plain notifications held at most.
    public var maxNotifications = 100
    /// False: stop after the first session ends instead of reconnecting (a command-line tool that reports it).
    public var reconnects = true
    /// Report every frame as received (`ClientEvent.frame`).
    public var reportsFrames = false
    public var transport: any LanpushTransport = PlatformTransport()
    /// Unix seconds now (rule 5 of docs/CLIENTS.md compares dismissal dates with it).
    public var clock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
    /// 0..<1, for jitter.
    public var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

    public init(url: URL, token: String, role: Role = .device, store: (any StateStore)? = nil) {
        self.url = url
        self.token = token
        self.role = role
        self.store = store
    }

    var isObserver: Bool {
        if case .observer = role { return true }
        return false
    }

    var resolvedStoreKey: String { storeKey ?? "lanpush:\(url.absoluteString)" }
}
