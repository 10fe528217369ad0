/// Maps a `live_update: true` payload to a `LiveUpdate`. The state is built from scratch on every update:
/// the apps treat each update as the complete new state, so a field it omits is gone.
enum LiveUpdateMapping {
    /// `data` fields that land in the state under their own name and rule.
    private static let sameNameKeys: [ContentStateKey] = [
        .criticalText, .progress, .progressMax, .chronometer, .backgroundColor, .textColor, .progressBarColor,
        .progressBarDirection, .url, .template,
    ]

    static func liveUpdate(tag: String, message: NotifyMessage, data: ObjectReader, now: Double) throws(FieldError)
        -> LiveUpdate
    {
        let state = try state(message: message.message, title: message.title, data: data, now: now)
        try validateAndroidOnlyFields(data)
        return LiveUpdate(
            tag: tag,
            title: message.title,
            state: state,
            silent: try data.optional("silent", Coerce.bool) ?? false,
            alert: try alert(data),
            staleDate: try LifecycleRules.staleDate(in: data),
            relevanceScore: try LifecycleRules.relevanceScore(in: data),
            event: try data.optional("event", event)
        )
    }

    static func state(message: String?, title: String? = nil, data: ObjectReader, now: Double) throws(FieldError)
        -> ContentState
    {
        var state: ContentState = [ContentStateKey.message.rawValue: .string(message ?? "")]
        if let title, !title.isEmpty { state[ContentStateKey.title.rawValue] = .string(title) }
        for key in sameNameKeys {
            if let value = try data.optional(key.rawValue, key.validate) {
                state[key.rawValue] = value
            }
        }
        if let icon = try data.optional("notification_icon", MDIIcon.validate) {
            state[ContentStateKey.icon.rawValue] = .string(icon)
        }
        // Both are checked even when only one is used: a bad value is a mistake either way.
        let ownColor = try data.optional("color", color)
        let iconColor = try data.optional("notification_icon_color", color)
        if let color = iconColor ?? ownColor {
            state[ContentStateKey.color.rawValue] = .string(color)
        }
        if let (end, start) = try countdown(data, now: now) {
            state[ContentStateKey.countdownEnd.rawValue] = end
            if let start { state[ContentStateKey.chronometerStart.rawValue] = start }
        } else if state[ContentStateKey.chronometer.rawValue] == .bool(true) {
            throw data.path.key("chronometer").error(
                "requires_when", "a chronometer needs `when` (a Unix time, or seconds from now with when_relative).")
        }
        try applyOverrides(to: &state, data: data)
        return state
    }

    private static func color(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> String {
        try ColorRule.validate(value, at: path)
    }

    /// `when` is a Unix time, or seconds from now with `when_relative`; either way the state holds Unix seconds. A
    /// negative relative `when` is a bounded count-up: from now for that many seconds (`chronometer_start` now,
    /// `countdown_end` |when| from now), as the iOS app reads it (home-assistant/iOS `HandlerLiveActivity.swift`).
    private static func countdown(_ data: ObjectReader, now: Double) throws(FieldError) -> (end: JSONValue, start: JSONValue?)? {
        let relative = try data.optional("when_relative", Coerce.bool) ?? false
        guard let when = try data.optional("when", Coerce.number) else { return nil }
        let path = data.path.key("when")
        guard relative, when < 0 else {
            return (try ContentStateKey.countdownEnd.validate(.number(relative ? now + when : when), at: path), nil)
        }
        return (
            try ContentStateKey.countdownEnd.validate(.number(now - when), at: path),
            try ContentStateKey.chronometerStart.validate(.number(now), at: path)
        )
    }

    /// `data.content_state.<key>` overrides a mapped key under that key's own rule; `null` removes it.
    /// Unknown keys are ignored, like unknown `data` keys on a live update.
    private static func applyOverrides(to state: inout ContentState, data: ObjectReader) throws(FieldError) {
        guard let overrides = try data.optional("content_state", Coerce.object) else { return }
        let path = data.path.key("content_state")
        for (name, value) in overrides.sorted(by: { $0.key < $1.key }) {
            guard let key = ContentStateKey(rawValue: name) else { continue }
            if !value.isNull {
                state[name] = try key.validate(value, at: path.key(name))
            } else if key == .message {
                state[name] = .string("")  // the one key a state always holds
            } else {
                state[name] = nil
            }
        }
        // The chronometer rule holds for the final state too, whichever side broke it.
        if state[ContentStateKey.chronometer.rawValue] == .bool(true),
            state[ContentStateKey.countdownEnd.rawValue] == nil
        {
            let culprit = overrides[ContentStateKey.chronometer.rawValue] != nil ? "chronometer" : "countdown_end"
            throw path.key(culprit).error("requires_when", "a chronometer needs a countdown_end.")
        }
    }

    private static func alert(_ data: ObjectReader) throws(FieldError) -> ActivityAlert? {
        let sound = try data.optional("alert_sound", Coerce.string)
        return try data.optional("alert") { (value, path) throws(FieldError) in
            let alert = try ObjectReader(value, at: path)
            return ActivityAlert(
                title: try alert.required("title", Coerce.text),
                body: try alert.required("body", Coerce.text),
                sound: sound)
        }
    }

    private static func event(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> LiveEvent {
        let name = try Coerce.string(value, at: path)
        guard let event = LiveEvent(rawValue: name) else {
            throw path.error("enum", "expected one of start, update, end; got \(value.serialized()).")
        }
        return event
    }

    /// Android-only notification options: not part of an activity's state, but a wrong type is still a mistake.
    private static func validateAndroidOnlyFields(_ data: ObjectReader) throws(FieldError) {
        _ = try data.optional("alert_once", Coerce.bool)
        _ = try data.optional("sticky", Coerce.bool)
        _ = try data.optional("visibility", Coerce.string)
    }
}
