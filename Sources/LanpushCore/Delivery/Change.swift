/// One accepted change of a device: every one takes the next seq in the device's epoch.
/// Sessions learn of changes through these; the ledger holds the resulting state.
public struct Change: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case start, update, end, lifecycle, notification, clear
    }

    public var seq: UInt64
    public var kind: Kind
    /// The activity's tag; `nil` for a plain notification without a tag.
    public var tag: String?
    /// Belongs to this one event: a merged delta is silent only if every change in it was.
    public var silent: Bool
    /// Belongs to this one event; never replayed in a snapshot.
    public var alert: ActivityAlert?

    public init(seq: UInt64, kind: Kind, tag: String?, silent: Bool = false, alert: ActivityAlert? = nil) {
        self.seq = seq
        self.kind = kind
        self.tag = tag
        self.silent = silent
        self.alert = alert
    }

    /// Changes that live in a per-tag slot (coalesced); the others queue in order.
    public var isSlotChange: Bool {
        switch kind {
        case .start, .update, .end, .lifecycle: return true
        case .notification, .clear: return false
        }
    }
}
