/// Where an activity is in its life (the Scripting app's LiveActivity API): `active` → `stale` (past its stale date, an update makes it
/// active again) → `ended` (still visible until its dismissal date) → `dismissed` (gone).
public enum ActivityPhase: String, Sendable, Hashable, CaseIterable {
    case active, stale, ended, dismissed

    /// Still receiving content updates.
    public var isLive: Bool { self == .active || self == .stale }
}
