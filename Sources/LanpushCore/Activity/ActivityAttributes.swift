/// The static half of an activity (iOS `HALiveActivityAttributes`): sent once, at start, never changed.
public struct ActivityAttributes: Sendable, Hashable {
    public var tag: String
    /// Static: set by the payload that started the activity; later titles are ignored.
    public var title: String
    /// Unix seconds.
    public var startedAt: Double
    /// `webhook_id` of the HA server that started it, when known (relay body `registration_info`).
    public var webhookId: String?

    public init(tag: String, title: String, startedAt: Double, webhookId: String? = nil) {
        self.tag = tag
        self.title = title
        self.startedAt = startedAt
        self.webhookId = webhookId
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "tag": .string(tag), "title": .string(title), "started_at": .number(startedAt.rounded()),
        ]
        if let webhookId { o["webhook_id"] = .string(webhookId) }
        return .object(o)
    }
}
