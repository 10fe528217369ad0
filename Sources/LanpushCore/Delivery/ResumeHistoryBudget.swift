/// One bound, in bytes, on every device's resume history together. A per-device count alone lets memory grow
/// with the number of devices times their update rate; a gateway on a Raspberry Pi needs a ceiling it can set.
///
/// Who gives way: the biggest histories. Trimming finds the level such that, with every history above it cut
/// down to it (oldest entries first), the total fits — so a busy device loses replay depth while a quiet one
/// keeps its short history and still resumes by replay. Pure: the gateway reports each history's size as it
/// changes and applies the level this returns.
public struct ResumeHistoryBudget: Sendable {
    /// 8 MiB: a Raspberry Pi 3 (1 GiB, shared with Home Assistant) does not miss it, yet at the ~300 bytes an
    /// entry with a small view weighs it holds about 28,000 changes — every one of the 1,024 a dozen devices may
    /// keep, or some 28 per device across a thousand. Replay matters for a phone that blinked off the network for
    /// seconds; one gone longer gets a snapshot, which costs one frame per activity, not a lost update.
    public static let defaultLimit = 8 << 20

    /// The ceiling for all histories together.
    public let limit: Int
    /// The sum the owner reports (`add`).
    public private(set) var total = 0

    public init(limit: Int) {
        self.limit = max(0, limit)
    }

    public var isOver: Bool { total > limit }

    /// Where a trim aims: an eighth under the limit, so the scan of every history it takes happens once per
    /// eighth of the budget appended rather than on every change once the budget is full.
    public var target: Int { limit - limit / 8 }

    public mutating func add(_ delta: Int) {
        total += delta
    }

    /// The largest per-history size such that cutting every history above it down to it brings the sum of
    /// `sizes` to at most `target`; `nil` when they already fit. Histories at or below the level are untouched.
    public static func level(sizes: [Int], target: Int) -> Int? {
        var remaining = max(0, target)
        let ascending = sizes.sorted()
        for (i, size) in ascending.enumerated() {
            let share = remaining / (ascending.count - i)
            if size > share { return share }
            remaining -= size
        }
        return nil
    }
}
