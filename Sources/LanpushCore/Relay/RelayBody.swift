/// The body lanpush POSTs to HA's push relay for one device and slot:
/// the accepted request exactly as HA sent it (or as HA would have sent it, for a native `/v1/push`), with
/// two changes and two fill-ins:
///
/// - `data.when` is made absolute when `data.when_relative` was true — `round(acceptedAt + when)`, the same
///   `countdown_end` the LAN state got — and `when_relative` is removed, so pacing and retries never shift a timer;
/// - `data.template` is removed: Aivi templates are LAN-only (`templateRemoved` tells the caller, for a metric),
///   and so is `data.lanpush` (lanpush's own routing options);
/// Where it goes and how it is addressed (`live_activity_token`, `data.event`) is decided when it leaves
/// (`RelayAddress`).
///
/// Everything else — `silent` (the relay sends priority 5 from `data.silent`), `hass_confirm_id`, unknown keys,
/// nulls — goes through untouched.
public struct RelayBody: Sendable, Hashable {
    /// The JSON object to POST.
    public var json: JSONValue
    /// `data.template` was present and removed (count it in a metric).
    public var templateRemoved: Bool
    /// `data.when` was relative and is now absolute.
    public var whenResolved: Bool

    public init(json: JSONValue, templateRemoved: Bool = false, whenResolved: Bool = false) {
        self.json = json
        self.templateRemoved = templateRemoved
        self.whenResolved = whenResolved
    }

    /// For a request that came in on the relay-compatible ingest: `request` is `RelayPushRequest.raw`.
    /// `acceptedAt` is the `now` the request was interpreted with.
    public static func forwarding(_ request: [String: JSONValue], acceptedAt: Double) -> RelayBody {
        var body = request
        var result = RelayBody(json: .null)
        if var data = body["data"]?.objectValue {
            data.removeValue(forKey: PayloadInterpreter.optionsKey)  // lanpush's own routing options
            result.templateRemoved = data.removeValue(forKey: "template") != nil
            result.whenResolved = resolveWhen(in: &data, acceptedAt: acceptedAt)
            body["data"] = .object(data)
        }
        result.json = .object(body)
        return result
    }

    /// For a native `/v1/push` (notify service data): the body HA's `mobile_app` would have posted, with the
    /// device's registration (`push_token`, `registration_info`) when it registered one. `title` is left out
    /// when absent (HA omits the default title); `message` is always present, as in HA.
    public static func native(
        _ message: NotifyMessage, pushToken: String?, registrationInfo: [String: JSONValue]?, acceptedAt: Double
    ) -> RelayBody {
        var body: [String: JSONValue] = ["message": .string(message.message ?? "")]
        if let title = message.title { body["title"] = .string(title) }
        if !message.data.isEmpty { body["data"] = .object(message.data) }
        if let pushToken { body["push_token"] = .string(pushToken) }
        if let registrationInfo { body["registration_info"] = .object(registrationInfo) }
        return forwarding(body, acceptedAt: acceptedAt)
    }

    /// `when` + `when_relative: true` → absolute Unix seconds, rounded like the state's `countdown_end`.
    /// Values the payload rules refuse are left alone (they never reach here: nothing invalid is relayed).
    static func resolveWhen(in data: inout [String: JSONValue], acceptedAt: Double) -> Bool {
        guard let flag = data["when_relative"], (try? Coerce.bool(flag, at: .root)) == true,
            let raw = data["when"], let when = try? Coerce.number(raw, at: .root)
        else { return false }
        data["when"] = .number((acceptedAt + when).rounded())
        data.removeValue(forKey: "when_relative")
        return true
    }
}

/// Small edits the pacer makes to relay bodies when it merges them. Pure JSON; no other key is touched.
enum RelayBodyEdit {
    /// The `data` keys of a live update that carry its state (what the relay turns into `content-state`).
    static let stateKeys = [
        "critical_text", "progress", "progress_max", "chronometer", "when", "when_relative", "notification_icon",
        "notification_icon_color", "color", "background_color", "text_color", "progress_bar_color",
        "progress_bar_direction", "url",
    ]

    static func data(of body: JSONValue) -> [String: JSONValue]? { body["data"]?.objectValue }

    static func isSilent(_ body: JSONValue) -> Bool {
        guard let flag = body["data"]?["silent"] else { return false }
        return (try? Coerce.bool(flag, at: .root)) ?? false
    }

    static func withData(_ body: JSONValue, _ edit: (inout [String: JSONValue]) -> Void) -> JSONValue {
        guard case .object(var o) = body else { return body }
        var data = o["data"]?.objectValue ?? [:]
        edit(&data)
        o["data"] = .object(data)
        return .object(o)
    }

    /// Two updates merged into one request: silent only if both were, so a non-silent
    /// change is never demoted to priority 5 by a silent one that followed it.
    static func mergeUpdates(older: JSONValue, newer: JSONValue) -> JSONValue {
        guard isSilent(newer), !isSilent(older) else { return newer }
        return withData(newer) { $0.removeValue(forKey: "silent") }
    }

    /// An update that arrives while its activity's start is still waiting: one start with the newest state.
    /// The title is static — the start's title stays (when it had one); `data.event`, when present, says start.
    static func mergeIntoStart(start: JSONValue, update: JSONValue) -> JSONValue {
        guard case .object(var o) = update else { return update }
        if let title = start["title"], !title.isNull { o["title"] = title }
        if case .object(var data) = o["data"], data["event"] != nil, !(data["event"]?.isNull ?? true) {
            data["event"] = "start"
            o["data"] = .object(data)
        }
        return .object(o)
    }

    /// An end that supersedes a pending (never sent) update carries that update's final state: the update's
    /// state keys it lacks are copied into its `data`, and the update's message goes to
    /// `data.content_state.message` (the end's own `message` is the `clear_notification` command).
    static func endCarryingState(end: JSONValue, superseded update: JSONValue) -> JSONValue {
        guard let updateData = data(of: update) else { return end }
        return withData(end) { data in
            for key in stateKeys where data[key] == nil {
                if let value = updateData[key] { data[key] = value }
            }
            var overrides = data["content_state"]?.objectValue ?? [:]
            if let updateOverrides = updateData["content_state"]?.objectValue {
                for (key, value) in updateOverrides where overrides[key] == nil { overrides[key] = value }
            }
            if overrides["message"] == nil, let message = update["message"], !message.isNull {
                overrides["message"] = message
            }
            if !overrides.isEmpty { data["content_state"] = .object(overrides) }
        }
    }
}
