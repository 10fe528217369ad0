/// How a payload is read where Home Assistant speaks (the relay-compatible ingest and HA's local push channel): never
/// refused for what HA's relay accepts and the companion apps render. Each field the strict rules would refuse is
/// read as the apps read it — most often ignored, as the phone ignores it — and said in a warning (`field`, `rule`).
/// `/v1/push` stays strict: it is lanpush's own API, where a script's author wants the 400.
///
/// The rules, each from the apps' own code:
/// - a live update without a tag is a plain notification (HA core routes no Live Activity without one, and the
///   Android app posts it as an ordinary notification: home-assistant/core `mobile_app/live_activity`,
///   `prepare_live_activity_remote_push`; home-assistant/android `MessagingManager.kt`);
/// - a tag outside the documented alphabet still names its activity (the relay and ActivityKit take any string);
/// - a progress that is no number, or negative, and a `progress_max` of 0 or less draw no bar (the iOS app decodes
///   progress leniently and draws a bar only with `progress_max > 0`: home-assistant/iOS
///   `HALiveActivityAttributes.swift`; Android parses with `toIntOrNull` and draws none for -1);
/// - `chronometer` without `when` shows no timer (both apps need `when`);
/// - `notification_icon` is matched case-insensitively, `_` as `-` and `hass:` as `mdi:` (home-assistant/iOS
///   `UIImage+Icons.swift`, `normalizingIconString`);
/// - a colour is hex with or without `#` (3, 6 or 8 digits) or a CSS name (home-assistant/iOS
///   `UIColor+CSS3+Hex.swift`); one no app reads (`rgb(...)`) is ignored;
/// - anything else a rule refuses (a stale date, an alert, a template, `data.lanpush`) is ignored.
public enum LenientPayload {
    /// `body`: the notify object (`title`, `message`, `data`, anything else ignored).
    public static func accept(_ body: [String: JSONValue], now: Double, path: FieldPath = .root) -> AcceptedPush {
        var warnings = [FieldWarning]()
        var message = decode(body, path: path, warnings: &warnings)
        // Each round repairs the field the strict rules refused; a payload has at most a few dozen fields.
        for _ in 0..<64 {
            do {
                var accepted = try PayloadInterpreter.accept(message, now: now, path: path, anyTag: true)
                if case .liveUpdate(let update) = accepted.command, !ActivityTag.isValid(update.tag) {
                    warnings.append(FieldWarning(
                        field: path.key("data").key("tag").description, rule: "pattern",
                        message: "a tag outside letters, digits, '-' and '_' still names its activity"))
                }
                accepted.warnings = warnings + accepted.warnings
                return accepted
            } catch {
                guard repair(error, in: &message.data, path: path, warnings: &warnings) else { break }
            }
        }
        // Not a live update any more than the phone can make it one: shown as the notification it is.
        warnings.append(FieldWarning(field: path.key("data").description, rule: "unreadable",
                                     message: "data could not be read as a live update; delivered as a plain notification"))
        message.data["live_update"] = nil
        return AcceptedPush(command: .notification(message), warnings: warnings)
    }

    /// `title` and `message` as text (a number or boolean in its JSON spelling; anything else ignored), `data` an
    /// object (anything else ignored).
    public static func decode(_ body: [String: JSONValue], path: FieldPath, warnings: inout [FieldWarning]) -> NotifyMessage {
        func text(_ key: String) -> String? {
            guard let value = body[key], !value.isNull else { return nil }
            if let s = try? Coerce.text(value, at: path.key(key)) { return s }
            warnings.append(FieldWarning(field: path.key(key).description, rule: "type", message: "not text: ignored"))
            return nil
        }
        var data: [String: JSONValue] = [:]
        switch body["data"] {
        case .object(let o)?: data = o
        case nil, .null?: break
        default:
            warnings.append(FieldWarning(field: path.key("data").description, rule: "type", message: "not an object: ignored"))
        }
        return NotifyMessage(title: text("title"), message: text("message"), data: data)
    }

    /// Makes the field `error` names readable as the apps read it; `false` when nothing could be changed.
    static func repair(
        _ error: FieldError, in data: inout [String: JSONValue], path: FieldPath, warnings: inout [FieldWarning]
    ) -> Bool {
        let prefix = path.key("data").description + "."
        guard error.field.hasPrefix(prefix) else { return false }
        let parts = error.field.dropFirst(prefix.count).split(separator: ".", maxSplits: 1)
        let key = String(parts[0].prefix { $0 != "[" })
        func warn(_ why: String) {
            warnings.append(FieldWarning(field: error.field, rule: error.rule, message: why))
        }
        switch key {
        case "tag" where error.rule == "required":
            data["live_update"] = nil
            warn("a live update without a tag is shown as a plain notification, as Home Assistant does")
            return true
        case "live_update":
            data["live_update"] = nil
            warn("not a boolean: shown as a plain notification")
            return true
        case "notification_icon":
            if let icon = data[key]?.stringValue, let normalized = normalizedIcon(icon), normalized != icon {
                data[key] = .string(normalized)
                warn("read as \(normalized), as the companion apps match icon names")
                return true
            }
        case "color", "notification_icon_color", "background_color", "text_color", "progress_bar_color":
            if let color = data[key]?.stringValue, let hex = hexWithHash(color), hex != color {
                data[key] = .string(hex)
                warn("read as \(hex), as the iOS app reads hex without '#'")
                return true
            }
        case "chronometer":
            // Refused for the missing `when` (or an override that removed it): no timer, as on the phone.
            if error.rule == "requires_when" {
                data["chronometer"] = nil
                if case .object(var overrides)? = data["content_state"], overrides["chronometer"] != nil {
                    overrides["chronometer"] = nil
                    data["content_state"] = .object(overrides)
                }
                warn("a chronometer without `when` shows no timer: the message is shown instead")
                return true
            }
        case "content_state":
            guard parts.count == 2, case .object(var overrides)? = data[key] else { break }
            let inner = String(parts[1].split(separator: ".").first ?? "").prefix { $0 != "[" }
            guard overrides.removeValue(forKey: String(inner)) != nil else { break }
            if error.rule == "requires_when" { overrides["chronometer"] = nil; data["chronometer"] = nil }
            data[key] = .object(overrides)
            warn("ignored, as the phone ignores it")
            return true
        case "when":
            data["when_relative"] = nil
        default:
            break
        }
        guard data.removeValue(forKey: key) != nil else { return false }
        switch key {
        case "progress", "progress_max": warn("no progress bar: the companion apps draw none for this value")
        case "alert": data["alert_sound"] = nil; warn("ignored: not an alert the phone can show")
        default: warn("ignored, as the phone ignores it")
        }
        return true
    }

    /// `mdi:name` in lower case with `-` for `_` (and `hass:` read as `mdi:`), when that is a valid slug.
    static func normalizedIcon(_ icon: String) -> String? {
        var name = Substring(icon.trimmingSpaces())
        for prefix in ["mdi:", "hass:"] where name.lowercased().hasPrefix(prefix) { name = name.dropFirst(prefix.count) }
        let slug = "mdi:" + name.lowercased().map { $0 == "_" ? "-" : $0 }
        return MDIIcon.isValid(slug) ? slug : nil
    }

    /// `#` and the digits of a hex colour the iOS app reads without one (`2196F3`).
    static func hexWithHash(_ color: String) -> String? {
        let trimmed = color.trimmingSpaces()
        let hex = trimmed.hasPrefix("#") ? trimmed : "#" + trimmed
        return ColorRule.isValid(hex) && hex.hasPrefix("#") ? hex : nil
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
