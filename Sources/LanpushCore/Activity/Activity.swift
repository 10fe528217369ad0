/// One live activity of one device: its attributes, current content, and lifecycle.
///
/// A value type whose fields live in one shared, copy-on-write box. A gateway holds one activity per device and tag
/// (10,000 of them for 100 tags on 100 devices), in dictionaries at most 3/4 full: inline, each ~160-byte activity
/// cost its table ~470 bytes a tag; boxed, the table holds a pointer. A copy (a snapshot, the store's queue) is one
/// retain, not one per string and dictionary inside; a change through the ledger's dictionary happens in place
/// while nothing else holds the box.
public struct Activity: Sendable, Hashable {
    private struct Fields: Hashable {
        let generation: UInt64
        var attributes: ActivityAttributes
        var state: ContentState
        /// `state`'s size as JSON, set with it.
        var stateBytes: Int
        var phase: ActivityPhase
        var staleDate: Double?
        var relevanceScore: Double?
        var endedAt: Double?
        var dismissalDate: Double?
        var updatedAt: Double
        var lastSeq: UInt64

        mutating func replaceState(_ state: ContentState, bytes: Int) {
            self.state = state
            stateBytes = bytes
        }
    }

    /// Sendable because it is never mutated while shared: `fields` and `relayBody` copy the box first unless it is
    /// the only reference (the standard library's copy-on-write rule).
    private final class Box: @unchecked Sendable {
        var fields: Fields
        var relayBody: DeferredJSON?
        var stateID: UInt64
        init(_ fields: Fields, relayBody: DeferredJSON? = nil, stateID: UInt64 = 0) {
            self.fields = fields
            self.relayBody = relayBody
            self.stateID = stateID
        }
    }

    private var box: Box

    private mutating func makeBoxUnique() {
        if !isKnownUniquelyReferenced(&box) { box = Box(box.fields, relayBody: box.relayBody, stateID: box.stateID) }
    }

    private var fields: Fields {
        get { box.fields }
        _modify {
            makeBoxUnique()
            yield &box.fields
        }
    }

    /// The request that last started, changed or ended it, as Home Assistant's relay takes it for this device: what a
    /// hand-over sends when the device leaves the LAN before it has that change. Kept here, not in a table of the
    /// device's own, because the ledger already finds the activity for each change (a second lookup by tag for every
    /// device an update goes to cost ~5 % of a fan-out). Not part of the activity's value — equality, hash, the store:
    /// after a restart there is none, as the relay path keeps nothing across one.
    ///
    /// Kept deferred (`DeferredJSON`): nearly every change is acknowledged on the LAN and replaced before its body is
    /// ever read.
    public var deferredRelayBody: DeferredJSON? {
        get { box.relayBody }
        set {
            makeBoxUnique()
            box.relayBody = newValue
        }
    }

    /// The relay body, built (see `deferredRelayBody`).
    public var relayBody: JSONValue? { box.relayBody?.value }

    public var hasRelayBody: Bool { box.relayBody != nil }

    /// Identifies this activity among all that ever used the tag on the device: the seq of its start.
    public var generation: UInt64 { box.fields.generation }
    public var attributes: ActivityAttributes {
        get { box.fields.attributes }
        set { fields.attributes = newValue }
    }
    public var state: ContentState {
        get { box.fields.state }
        set { replaceState(newValue, bytes: JSONWriter.count(.object(newValue))) }
    }
    /// The request whose state this is (`LiveUpdate.stateID`), or 0 for a state no request stamped (restored from
    /// the store, or set here directly). Not part of the activity's value, like the relay body.
    public var stateID: UInt64 { box.stateID }
    /// The state's size as JSON (what the resume history weighs the view it keeps by), kept with it so a change
    /// does not walk the state it replaces.
    public var stateBytes: Int { box.fields.stateBytes }

    /// Sets the state with its size already counted (a live update counts it once for all the devices it goes to)
    /// and the id of the request it came from (0: none).
    public mutating func replaceState(_ state: ContentState, bytes: Int, id: UInt64 = 0) {
        fields.replaceState(state, bytes: bytes)
        box.stateID = id
    }
    public var phase: ActivityPhase {
        get { box.fields.phase }
        set { fields.phase = newValue }
    }
    /// Unix seconds; a property of the activity (kept until an update sets another).
    public var staleDate: Double? {
        get { box.fields.staleDate }
        set { fields.staleDate = newValue }
    }
    /// 0...1; a property of the activity.
    public var relevanceScore: Double? {
        get { box.fields.relevanceScore }
        set { fields.relevanceScore = newValue }
    }
    public var endedAt: Double? {
        get { box.fields.endedAt }
        set { fields.endedAt = newValue }
    }
    public var dismissalDate: Double? {
        get { box.fields.dismissalDate }
        set { fields.dismissalDate = newValue }
    }
    public var updatedAt: Double {
        get { box.fields.updatedAt }
        set { fields.updatedAt = newValue }
    }
    /// The seq of the newest change of this activity.
    public var lastSeq: UInt64 {
        get { box.fields.lastSeq }
        set { fields.lastSeq = newValue }
    }

    public var tag: String { attributes.tag }

    public init(
        generation: UInt64, attributes: ActivityAttributes, state: ContentState, phase: ActivityPhase = .active,
        staleDate: Double? = nil, relevanceScore: Double? = nil, endedAt: Double? = nil,
        dismissalDate: Double? = nil, updatedAt: Double, lastSeq: UInt64, stateBytes: Int? = nil, stateID: UInt64 = 0
    ) {
        box = Box(
            Fields(
                generation: generation, attributes: attributes, state: state,
                stateBytes: stateBytes ?? JSONWriter.count(.object(state)), phase: phase, staleDate: staleDate,
                relevanceScore: relevanceScore, endedAt: endedAt, dismissalDate: dismissalDate, updatedAt: updatedAt,
                lastSeq: lastSeq), stateID: stateID)
    }

    /// Which box holds the fields: the same one after an in-place change.
    var boxIdentity: ObjectIdentifier { ObjectIdentifier(box) }

    /// The fields only: the relay body is how the activity was sent, not what it is.
    public static func == (a: Activity, b: Activity) -> Bool { a.box === b.box || a.box.fields == b.box.fields }

    public func hash(into hasher: inout Hasher) { box.fields.hash(into: &hasher) }

    /// What a client holding this activity has: the part a delta is computed against.
    public var view: ClientView {
        ClientView(
            generation: generation, state: state, phase: phase, staleDate: staleDate,
            relevanceScore: relevanceScore, dismissalDate: dismissalDate, stateID: stateID)
    }

    /// What a client can still hold of it: nothing once it is dismissed.
    public var visibleView: ClientView? { phase == .dismissed ? nil : view }

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
    /// `Activity.stateID` of `state`: what the loop's `PatchMemo` knows the state by. Not part of the view's value
    /// (a state restored from the store equals the one stamped before the restart).
    public var stateID: UInt64 = 0

    public static func == (a: ClientView, b: ClientView) -> Bool {
        a.generation == b.generation && a.phase == b.phase && a.staleDate == b.staleDate
            && a.relevanceScore == b.relevanceScore && a.dismissalDate == b.dismissalDate && a.state == b.state
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(generation)
        hasher.combine(state)
        hasher.combine(phase)
        hasher.combine(staleDate)
        hasher.combine(relevanceScore)
        hasher.combine(dismissalDate)
    }
}
