/// A Home Assistant release as its websocket's `auth_ok` names it (`ha_version`): `2025.4.4`, `2026.7.0b2`,
/// `2026.8.0.dev20260612`. Only the year and month matter here: HA ships one feature release a month, and what
/// lanpush may send depends on which release HA is.
struct HomeAssistantVersion: Comparable, CustomStringConvertible {
    let year: Int
    let month: Int

    /// The first release whose mobile_app has HA's iOS Live Activity bookkeeping: `supports_live_activities` and
    /// `start_live_activity_token` in the registration's app_data, the `live_activity_token` and
    /// `live_activity_dismissed` webhooks. Older releases answer those webhooks with 200 `{}` and an error in their
    /// log, so lanpush sends them only from this release on.
    static let liveActivityWebhooks = HomeAssistantVersion(year: 2026, month: 7)

    init(year: Int, month: Int) {
        self.year = year
        self.month = month
    }

    /// `nil` for anything that is not `YYYY.M…` (a custom build's version string): such an HA gets only what every
    /// release understands.
    init?(_ text: String?) {
        guard let text else { return nil }
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].count == 4, let year = Int(parts[0]) else { return nil }
        let monthDigits = parts[1].prefix { $0.isASCII && $0.isNumber }
        guard let month = Int(monthDigits), (1...12).contains(month) else { return nil }
        self.init(year: year, month: month)
    }

    /// Whether an HA reporting `version` has the Live Activity webhooks.
    static func hasLiveActivityWebhooks(_ version: String?) -> Bool {
        HomeAssistantVersion(version).map { $0 >= liveActivityWebhooks } ?? false
    }

    static func < (a: HomeAssistantVersion, b: HomeAssistantVersion) -> Bool {
        (a.year, a.month) < (b.year, b.month)
    }

    var description: String { "\(year).\(month)" }
}
