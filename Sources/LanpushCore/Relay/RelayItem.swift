/// One request waiting for (or on its way to) HA's push relay.
public struct RelayItem: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A live activity starts: goes at once, within the device's start budget; takes the slot's first interval.
        case start
        /// A live activity changes: at most one per interval per slot, latest state wins.
        case update
        /// A live activity ends: goes at once, supersedes a pending update of the slot.
        case end
        /// A plain notification (or the clear of one): queued in order per device, goes at once.
        case notification

        /// The relay kind of an accepted change; `nil` for changes that never go to the relay (lifecycle
        /// transitions are the device's own business). A `clear` of a plain notification queues with them.
        public init?(_ change: Change.Kind) {
            switch change {
            case .start: self = .start
            case .update: self = .update
            case .end: self = .end
            case .notification, .clear: self = .notification
            case .lifecycle: return nil
            }
        }

        /// For traffic no ledger sees (a push_token no client registered): HA's `data.event` when it sent one;
        /// otherwise a live update starts an activity unless the caller already relayed a start for that tag
        /// (`activityLive`), an end is an end and anything else a notification.
        public init(_ command: PushCommand, activityLive: Bool) {
            switch command {
            case .liveUpdate(let update):
                switch update.event {
                case .start?: self = .start
                case .update?: self = .update
                case .end?: self = .end
                case nil: self = activityLive ? .update : .start
                }
            case .end: self = .end
            case .notification, .command: self = .notification
            }
        }

        var isSlotKind: Bool { self != .notification }
    }

    /// The pacer's device key: a configured device's id, or any stable key for a push_token no client
    /// registered (e.g. `"push_token:<token>"`). Quota, start budget, backoff and token state are per key.
    public var device: String
    /// The activity's tag. Required for start / update / end (a slot is a (device, tag) pair); optional
    /// for notifications. A slot kind without a tag is queued as a notification.
    public var tag: String?
    public var kind: Kind
    /// Full URL including the path, e.g. `https://mobile-apps.home-assistant.io/api/sendPushNotification`.
    public var url: String
    /// The JSON body to POST (`RelayBody.json`).
    public var body: JSONValue
    /// The device's seq of the change this item carries (the newest one when merged).
    public var seq: UInt64

    public init(device: String, tag: String?, kind: Kind, url: String, body: JSONValue, seq: UInt64) {
        self.device = device
        self.tag = tag
        self.kind = kind
        self.url = url
        self.body = body
        self.seq = seq
    }

    /// HA's Android relay path, or a registration from HA's Android app: Apple's render pacing and push-to-start
    /// budget mean nothing there (the relay's daily quota still holds).
    public var isAndroid: Bool {
        if url.contains(Self.androidPath) { return true }
        let appId = body["registration_info"]?["app_id"]?.stringValue ?? ""
        return appId.hasPrefix(Self.androidAppIdPrefix)
    }

    public static let androidPath = "/api/sendPush/android/"
    /// HA's Android companion app ids (`io.homeassistant.companion.android`, `….minimal`, `….debug`).
    public static let androidAppIdPrefix = "io.homeassistant.companion.android"

    /// Whether the item lives in a (device, tag) slot rather than the device's notification queue.
    public var isSlotItem: Bool { kind.isSlotKind && tag != nil }

    /// The `url` of an item that goes through a Home Assistant notify action instead of a relay: the scheme, then the
    /// action (`homeassistant:notify.mobile_app_pixel`). HA's own companion-app bookkeeping and relay do the rest.
    public static let actionScheme = "homeassistant:"

    /// The HA action this item goes through (`notify.mobile_app_pixel`), or `nil` for a relay URL.
    public var action: String? {
        url.hasPrefix(Self.actionScheme) ? String(url.dropFirst(Self.actionScheme.count)) : nil
    }
}

/// What the relay said about one request, as the pacer needs it.
public enum RelayOutcome: Sendable, Hashable {
    /// 2xx. `remaining` / `resetsAt` (Unix seconds) from the answer's `rateLimits`, when present.
    case success(remaining: Int?, resetsAt: Double?)
    /// 429: nothing more for that device before `resetsAt` (without one: exponential backoff).
    case rateLimited(resetsAt: Double?)
    /// The push token is invalid — 403 (no token, or one that is no FCM token), or 500 `InvalidToken` (FCM: not
    /// registered, invalid): the device's items are dropped and it is marked until `revalidate`.
    case forbidden
    /// Another 4xx (400, 404, 413, …) or 508 (a relay loop): this request will never succeed; it is dropped
    /// (counted), the device carries on.
    case rejected(status: Int)
    /// 500 `PayloadTooLarge` (FCM refused the message as too big or malformed): this item is dropped, counted.
    case payloadTooLarge
    /// Other 5xx (`InternalError`), 408, a timeout, no connection: retried with exponential backoff and full jitter.
    case failed
}

/// The `rateLimits` object of a relay answer (`attempts`, `successful`, `errors`, `total`, `maximum`,
/// `remaining`, `resetsAt`), read leniently: a missing or mistyped key is `nil`.
public struct RelayRateLimits: Sendable, Hashable {
    public var remaining: Int?
    public var maximum: Int?
    /// Unix seconds, from the ISO 8601 `resetsAt`.
    public var resetsAt: Double?
    /// The object as the relay sent it (`nil` when the answer had none), e.g. to pass on to HA.
    public var json: JSONValue?

    public init(remaining: Int? = nil, maximum: Int? = nil, resetsAt: Double? = nil, json: JSONValue? = nil) {
        self.remaining = remaining
        self.maximum = maximum
        self.resetsAt = resetsAt
        self.json = json
    }

    /// `body` is the whole answer; its `rateLimits` member is read.
    public init(_ body: JSONValue?) {
        guard let limits = body?["rateLimits"], case .object = limits else {
            self.init()
            return
        }
        func int(_ key: String) -> Int? {
            guard let n = limits[key]?.numberValue, n.isFinite, abs(n) < 9e15 else { return nil }
            return Int(n.rounded(.down))
        }
        var resets: Double?
        if let text = limits["resetsAt"]?.stringValue { resets = ISO8601Timestamp.unixSeconds(text) }
        else if let n = limits["resetsAt"]?.numberValue, n.isFinite { resets = n }
        self.init(remaining: int("remaining"), maximum: int("maximum"), resetsAt: resets, json: limits)
    }
}

/// The pacer's limits (docs/PROTOCOL.md; config `relay:`). Defaults are Apple's and the relay's.
public struct RelayLimits: Sendable, Hashable {
    /// `relay.min_update_interval`: at most one update per slot per interval (iOS 18 renders ~every 15 s).
    public var minUpdateInterval: Double = 15
    /// `relay.starts_per_hour`: push-to-start budget per device in any `startWindow`.
    public var startsPerHour: Int = 10
    public var startWindow: Double = 3600
    /// `relay.quota_reserve`: with `remaining <= quotaReserve` the device is in reserve mode: starts, ends and
    /// notifications go as usual, updates are thinned (see `RelayPacer`).
    public var quotaReserve: Int = 50
    /// In reserve mode updates stop altogether once `remaining <= quotaFloor`: the rest is for starts and ends.
    public var quotaFloor: Int = 10
    /// In reserve mode the device's updates are spaced by at least `minUpdateInterval * reserveIntervalFactor`.
    public var reserveIntervalFactor: Double = 4
    /// Retry delay after the n-th consecutive failure: full jitter over `min(backoffCap, backoffBase * 2^(n-1))`.
    public var backoffBase: Double = 1
    public var backoffCap: Double = 300
    /// Queued items (not counting requests in flight) across all devices; beyond it the oldest notification
    /// is dropped first, then the oldest update, start, end.
    public var maxItems: Int = 10_000
    /// An end that supersedes a pending update carries that update's state (see `RelayBodyEdit`).
    public var endCarriesFinalState: Bool = true
    /// `relay.quota`: requests a device may send per UTC day, counted by the pacer itself (the relay's `remaining`
    /// lowers it further when it says one).
    public var dailyQuota: Int = 500
    /// `relay.max_hold`: seconds a plain notification or command may wait before it is dropped.
    public var maxHold: Double = 900

    /// The limits for an Android device: no render interval and no push-to-start budget (both are iOS rules),
    /// the same quota.
    public var android: RelayLimits {
        var l = self
        l.minUpdateInterval = 0
        l.startsPerHour = Int(Int32.max)
        return l
    }

    public init() {}

    public init(minUpdateInterval: Double = 15, startsPerHour: Int = 10, quotaReserve: Int = 50, maxItems: Int = 10_000) {
        self.minUpdateInterval = minUpdateInterval
        self.startsPerHour = startsPerHour
        self.quotaReserve = quotaReserve
        self.quotaFloor = min(quotaFloor, max(0, quotaReserve / 5))
        self.maxItems = maxItems
    }
}
