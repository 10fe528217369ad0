/// One accepted change of a device: every one takes the next seq in the device's epoch.
/// Sessions learn of changes through these; the ledger holds the resulting state.
public struct Change: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case start, update, end, lifecycle, notification, clear

        /// Changes of this kind live in a per-tag slot (coalesced); the others queue in order.
        public var isSlot: Bool {
            switch self {
            case .start, .update, .end, .lifecycle: return true
            case .notification, .clear: return false
            }
        }
    }

    public var seq: UInt64
    public var kind: Kind
    /// The activity's tag; `nil` for a plain notification without a tag.
    public var tag: String?
    /// Belongs to this one event: a merged delta is silent only if every change in it was.
    public var silent: Bool
    /// Belongs to this one event; never replayed in a snapshot.
    public var alert: ActivityAlert?
    /// What a client in step with the ledger held of the tag just before this change (`nil`: nothing, or a
    /// dismissed activity). A session keeps no view of a tag it is in step with — that view is the ledger's — so
    /// this is how it learns what its client still holds once the ledger has moved on. Not part of the change's
    /// value: what it replaced, not what it is.
    public var before: ClientView?

    public init(
        seq: UInt64, kind: Kind, tag: String?, silent: Bool = false, alert: ActivityAlert? = nil,
        before: ClientView? = nil
    ) {
        self.seq = seq
        self.kind = kind
        self.tag = tag
        self.silent = silent
        self.alert = alert
        self.before = before
    }

    public static func == (a: Change, b: Change) -> Bool {
        a.seq == b.seq && a.kind == b.kind && a.tag == b.tag && a.silent == b.silent && a.alert == b.alert
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(seq)
        hasher.combine(kind)
        hasher.combine(tag)
        hasher.combine(silent)
        hasher.combine(alert)
    }

    /// Changes that live in a per-tag slot (coalesced); the others queue in order.
    public var isSlotChange: Bool { kind.isSlot }
}
