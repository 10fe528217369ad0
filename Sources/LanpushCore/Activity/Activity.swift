/// One live activity of one device: its attributes, current content, and lifecycle.
public struct Activity: Sendable, Hashable {
    /// Identifies this activity among all that ever used the tag on the device: the seq of its start.
    public let generation: UInt64
    public var attributes: ActivityAttributes
    public var state: ContentState
    public var phase: ActivityPhase
    /// Unix seconds; a property of the activity (kept until an update sets another).
    public var staleDate: Double?
    /// 0...1; a property of the activity.
    public var relevanceScore: Double?
    public var endedAt: Double?
    public var dismissalDate: Double?
    public var updatedAt: Double
    /// The seq of the newest change of this activity.
    public var lastSeq: UInt64

    public var tag: String { attributes.tag }

    public init(
        generation: UInt64, attributes: ActivityAttributes, state: ContentState, phase: ActivityPhase = .active,
        staleDate: Double? = nil, relevanceScore: Double? = nil, endedAt: Double? = nil,
        dismissalDate: Double? = nil, updatedAt: Double, lastSeq: UInt64
    ) {
        self.generation = generation
        self.attributes = attributes
        self.state = state
        self.phase = phase
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.endedAt = endedAt
        self.dismissalDate = dismissalDate
        self.updatedAt = updatedAt
        self.lastSeq = lastSeq
    }

    /// What a client holding this activity has: the part a delta is computed against.
    public var view: ClientView {
        ClientView(
            generation: generation, state: state, phase: phase, staleDate: staleDate,
            relevanceScore: relevanceScore, dismissalDate: dismissalDate)
    }

    /// The activity as the REST API and snapshots show it.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "tag": .string(tag), "attributes": attributes.json, "state": .object(state),
            "phase": .string(phase.rawValue), "updated_at": .number(updatedAt.rounded()),
        ]
        if let staleDate { o["stale_date"] = .number(staleDate) }
        if let relevanceScore { o["relevance_score"] = .number(relevanceScore) }
        if let endedAt { o["ended_at"] = .number(endedAt.rounded()) }
        if let dismissalDate { o["dismissal_date"] = .number(dismissalDate.rounded()) }
        return .object(o)
    }
}

/// The per-tag picture a client holds, as far as the server knows.
public struct ClientView: Sendable, Hashable {
    public var generation: UInt64
    public var state: ContentState
    public var phase: ActivityPhase
    public var staleDate: Double?
    public var relevanceScore: Double?
    public var dismissalDate: Double?
}
