import LanpushCore

/// One activity as the client holds it: what a UI renders. Built from the server's own types (`ActivityAttributes`,
/// `ContentState`, `ActivityPhase`), so the client and the gateway describe an activity with the same words.
public struct ClientActivity: Sendable, Hashable {
    public var tag: String
    /// Static: set by the start, never changed.
    public var attributes: ActivityAttributes
    public var state: ContentState
    /// Never `.dismissed`: a dismissed activity is removed.
    public var phase: ActivityPhase
    /// Unix seconds.
    public var staleDate: Double?
    /// Any finite number; higher is more relevant.
    public var relevanceScore: Double?
    /// Unix seconds; set once the activity ended. An ended activity is shown until then.
    public var dismissalDate: Double?

    public init(
        tag: String, attributes: ActivityAttributes, state: ContentState, phase: ActivityPhase = .active,
        staleDate: Double? = nil, relevanceScore: Double? = nil, dismissalDate: Double? = nil
    ) {
        self.tag = tag
        self.attributes = attributes
        self.state = state
        self.phase = phase
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.dismissalDate = dismissalDate
    }

    /// Still receiving content updates.
    public var isLive: Bool { phase.isLive }
}

/// A plain notification, held until a `clear` with its tag (or the app) removes it.
public struct HeldNotification: Sendable, Hashable {
    public var seq: UInt64
    public var title: String?
    public var message: String?
    /// As HA sent it; `data.tag` is what a `clear` matches.
    public var data: [String: JSONValue]

    public init(seq: UInt64, title: String? = nil, message: String? = nil, data: [String: JSONValue] = [:]) {
        self.seq = seq
        self.title = title
        self.message = message
        self.data = data
    }

    /// The tag a `clear` matches (an opaque string: numbers in their JSON spelling, as the gateway reads them).
    public var tag: String? { NotifyMessage(title: title, message: message, data: data).tag }
}

/// Everything a device client holds: the resume point (`epoch`, `seq` = the highest seq applied) and the picture
/// it describes. This is what a store persists and what the protocol vectors spell out.
public struct DeviceState: Sendable, Hashable {
    public var epoch: String?
    public var seq: UInt64
    public var activities: [String: ClientActivity]
    public var notifications: [HeldNotification]

    public init(
        epoch: String? = nil, seq: UInt64 = 0, activities: [String: ClientActivity] = [:],
        notifications: [HeldNotification] = []
    ) {
        self.epoch = epoch
        self.seq = seq
        self.activities = activities
        self.notifications = notifications
    }

    public static let empty = DeviceState()

    /// Live activities first, then by relevance (higher first), then the newest start: the order a phone shows them.
    public var sortedActivities: [ClientActivity] {
        activities.values.sorted { a, b in
            let ra = a.phase == .ended ? 1 : 0
            let rb = b.phase == .ended ? 1 : 0
            if ra != rb { return ra < rb }
            let sa = a.relevanceScore ?? 0
            let sb = b.relevanceScore ?? 0
            if sa != sb { return sa > sb }
            if a.attributes.startedAt != b.attributes.startedAt { return a.attributes.startedAt > b.attributes.startedAt }
            return a.tag < b.tag
        }
    }
}
