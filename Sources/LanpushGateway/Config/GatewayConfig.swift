import LanpushCore

/// The daemon's configuration. YAML on disk; the HA add-on's `/data/options.json` uses the
/// same keys and is read by the same code (JSON is YAML).
public struct GatewayConfig: Sendable, Equatable {
    public struct Device: Sendable, Equatable {
        public var id: String
        public var name: String
        public var token: String
        /// How its plain notifications travel (`devices[].notifications`; the README's routing table).
        public var notifications: NotificationRouting = .auto
        /// The HA action that reaches the person while this device is gone (`devices[].fallback`, e.g.
        /// `notify.mobile_app_pixel`): HA's companion app then shows what the device would have.
        public var fallback: String?

        public init(
            id: String, name: String, token: String, notifications: NotificationRouting = .auto, fallback: String? = nil
        ) {
            self.id = id
            self.name = name
            self.token = token
            self.notifications = notifications
            self.fallback = fallback
        }
    }

    public struct Session: Sendable, Equatable {
        public var pingInterval: Double = 10
        public var pingTimeout: Double = 10
        public var ackTimeout: Double = 10
        public var window: Int = 32
        /// The keepalive a client may ask for in its `auth` (seconds between pings), clamped to this range: a phone
        /// asks for a longer one to save its radio, and is counted gone later for it.
        public var keepaliveMin: Double = 15
        public var keepaliveMax: Double = 300
    }

    public struct Limits: Sendable, Equatable {
        public var maxBody: Int = 64 * 1024
        public var maxSessions: Int = 10_000
        /// Per device, in bytes of frames; past it the oldest undelivered notification is dropped (counted, logged,
        /// and told to the client in-band). Never a disconnect.
        public var notificationQueueBytes: Int = DeviceLedger.defaultNotificationQueueBytes
        /// All devices' resume histories together, in estimated bytes; past it the biggest histories lose their
        /// oldest changes (a client resuming from before them gets a snapshot instead of a replay).
        public var resumeHistoryBytes: Int = ResumeHistoryBudget.defaultLimit
        /// Failed authentications from one address within `authWindow` seconds before it is refused for a while.
        public var authFailures: Int = 10
        public var authWindow: Double = 60
        /// Wrong codes a pairing survives: each wrong code tried while it is open counts against it, and past this
        /// many it is void (the admin makes a new one). No pairing's budget is shared with another's.
        public var pairingAttempts: Int = 10
        /// WebSocket sessions from one address that have not authenticated yet; more are closed at once (1013).
        /// They do not count toward `maxSessions`, so sockets that never authenticate cannot keep devices out.
        public var unauthenticatedPerAddress: Int = 8
        /// Seconds a new connection may take to send its request headers (then 408/400 and closed).
        public var headerTimeout: Int = 5
        /// Connections still sending headers from one address; more are refused at once.
        public var pendingPerAddress: Int = 256
        /// HTTP connections open from one address, idle keep-alive ones included; more are refused at once.
        public var connectionsPerAddress: Int = 512
    }

    public struct Relay: Sendable, Equatable {
        public var upstream: String = "https://mobile-apps.home-assistant.io"
        public var minUpdateInterval: Double = 15
        public var startsPerHour: Int = 10
        public var quotaReserve: Int = 50
        public var timeout: Double = 10
        public var quota: Int = 500
        /// `push_url`s a client may register beyond `https://` to a public host (a relay on the LAN, a test's fake
        /// relay): URL prefixes, matched by scheme, host, port and path.
        public var allowedPushURLs: [String] = []
        /// Forward relay bodies for a push_token no device registered to `upstream` (for a phone whose own
        /// registration points at lanpush). Off: they are refused, so nobody on the LAN spends the relay's quota.
        public var proxyUnknownTokens = false
        /// Proxied requests per source address per minute, when proxying is on.
        public var proxyPerMinute: Int = 60
        /// How long a plain notification or command may wait for the relay (a 429, an outage) before it is
        /// dropped: yesterday's doorbell is not worth delivering after midnight. Live activities keep their
        /// latest state regardless.
        public var maxHold: Double = 900
    }

    /// Who may address the gateway by which name (DNS rebinding) and from which pages.
    public struct HTTP: Sendable, Equatable {
        /// `Host` names (and WebSocket `Origin` hosts) allowed beside IP literals, `localhost`, `*.local` and this
        /// host's own names: e.g. a DNS name the router gives the gateway.
        public var allowedHosts: [String] = []
    }

    /// `wss://` and `https://` on the same port as plain (lws tells them apart by the first bytes).
    public struct TLS: Sendable, Equatable {
        public var enabled = false
        /// PEM files; both empty: a self-signed certificate made at first start, kept in the state folder.
        public var cert: String?
        public var key: String?
        /// Plain `ws://` / `http://` beside TLS (clients that cannot pin a self-signed certificate). Off: plain only
        /// from loopback (HA's relay ingest on the same host keeps working).
        public var plain = true
    }

    public struct MDNS: Sendable, Equatable {
        public var enabled: Bool = true
        public var name: String?
    }

    public struct Store: Sendable, Equatable {
        public var synchronous: String = "normal"
        /// false: keep everything in memory only (benchmarks compare the two).
        public var enabled: Bool = true
        /// SQLite's page cache per connection, bytes.
        public var cacheBytes: Int = 256 << 10
    }

    /// HA-native mode (see HomeAssistant/HomeAssistantSettings.swift for how it resolves).
    public struct HomeAssistant: Sendable, Equatable {
        /// HA's base URL (`http://host:8123`); `http://supervisor/core` for the add-on's Supervisor proxy.
        public var url: String?
        /// Long-lived access token; with the Supervisor URL and no token, `$SUPERVISOR_TOKEN`.
        public var token: String?
        /// Device ids to expose; `nil` or empty: all.
        public var devices: [String]?
        /// `nil`: on when `url` is set. `true` without a url: the Supervisor proxy. `false`: off.
        public var enabled: Bool?
        /// What HA posts to when the local push channel is down (lanpush's relay-compatible ingest);
        /// `nil`: `http://<listen host, or 127.0.0.1>:<port>/api/sendPushNotification`.
        public var pushURL: String?
        /// Seconds between two sensor updates of one device (the first change after a quiet spell goes at once).
        public var sensorInterval: Double = 5
    }

    public var listenHost = "0.0.0.0"
    public var listenPort = 8765
    public var adminToken: String?
    public var viewerToken: String?
    public var openMetrics = false
    public var devices: [Device] = []
    public var session = Session()
    public var limits = Limits()
    public var relay = Relay()
    public var http = HTTP()
    public var mdns = MDNS()
    public var tls = TLS()
    public var store = Store()
    public var homeAssistant = HomeAssistant()
    public var logLevel = "info"
    /// Keys that were accepted but mean nothing any more (the daemon logs each at start).
    public var deprecations: [String] = []

    public init() {}
}

/// A configuration key that is missing, mistyped or out of range: the daemon refuses to start.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public let key: String
    public let message: String
    public var description: String { "config key '\(key)': \(message)" }
}
