/// The keys a ContentState may hold and the rule each value obeys, whether it comes from a
/// mapped `data` field or from a `data.content_state` override: one rule per key, so an override can never
/// smuggle in what the field itself would refuse.
public enum ContentStateKey: String, CaseIterable, Sendable {
    case message
    /// The current title: HA core and its relay put the notification's title in the content state on every update,
    /// and the iOS app shows it over the static attribute's (home-assistant/iOS `HALiveActivityAttributes.swift`).
    case title
    case criticalText = "critical_text"
    case progress
    case progressMax = "progress_max"
    case chronometer
    case countdownEnd = "countdown_end"
    /// Where a bounded count-up starts (a negative relative `when`): the timer counts up from here and stops at
    /// `countdown_end`, as the iOS app's local handler sets it (home-assistant/iOS `HandlerLiveActivity.swift`).
    case chronometerStart = "chronometer_start"
    case icon
    case color
    case backgroundColor = "background_color"
    case textColor = "text_color"
    case progressBarColor = "progress_bar_color"
    case progressBarDirection = "progress_bar_direction"
    case url
    case template

    /// The value as it goes into the state (numbers rounded to integers, templates stripped of nulls).
    func validate(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> JSONValue {
        switch self {
        case .message, .title, .criticalText:
            return .string(try Coerce.text(value, at: path))
        case .progress:
            // Checked before rounding: -0.4 is a negative progress even though it rounds to 0.
            guard try Coerce.number(value, at: path) >= 0 else {
                throw path.error("non_negative", "progress must not be negative, got \(value.serialized()).")
            }
            return .number(Double(try Coerce.integer(value, at: path)))
        case .progressMax:
            let max = try Coerce.integer(value, at: path)
            guard max > 0 else {
                throw path.error("positive", "progress_max must be at least 1, got \(value.serialized()).")
            }
            return .number(Double(max))
        case .chronometer:
            return .bool(try Coerce.bool(value, at: path))
        case .countdownEnd, .chronometerStart:
            return .number(Double(try Coerce.integer(value, at: path)))
        case .icon:
            return .string(try MDIIcon.validate(value, at: path))
        case .color, .backgroundColor, .textColor, .progressBarColor:
            return .string(try ColorRule.validate(value, at: path))
        case .progressBarDirection, .url:
            return .string(try Coerce.string(value, at: path))
        case .template:
            return try AiviTemplate.validate(value, path: path)
        }
    }
}
