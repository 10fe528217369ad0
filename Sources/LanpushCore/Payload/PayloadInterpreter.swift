/// Decides what a notify payload means: an activity's end, a companion-app command, a live update, or a plain
/// notification — in the order the companion apps look at it.
public enum PayloadInterpreter {
    /// HA's command message; with a tag it ends the activity and clears the notifications of that tag.
    public static let clearCommand = "clear_notification"
    /// `data.lanpush`: lanpush's own options (`{"path": "lan" | "relay" | "both"}`). Taken out of the payload
    /// before anything else reads it, so no client and no relay request ever sees it.
    public static let optionsKey = "lanpush"

    /// What every ingest calls: the command, the message's routing override and the warnings for its sender.
    /// `anyTag`: a live update's tag may be any non-empty text (HA's paths: `LenientPayload`).
    public static func accept(_ message: NotifyMessage, now: Double, path: FieldPath = .root, anyTag: Bool = false)
        throws(FieldError) -> AcceptedPush
    {
        var message = message
        var route: DeliveryPath?
        // Only a payload that has options pays for copying its data and building the field path (the hot path has none).
        if message.data[optionsKey] != nil {
            route = try deliveryPath(message.data.removeValue(forKey: optionsKey), at: path.key("data").key(optionsKey))
        }
        let command = try interpret(message, now: now, path: path, anyTag: anyTag)
        var warnings = [FieldWarning]()
        if case .liveUpdate(let update) = command, (update.title ?? "").isEmpty {
            warnings.append(FieldWarning(
                field: path.key("title").description, rule: "android_title",
                message: "a live update without a title shows on Android as a standard notification, not as a Live Update"))
        }
        return AcceptedPush(command: command, path: route, warnings: warnings)
    }

    /// `now` (Unix seconds) makes `when_relative` absolute at acceptance, so pacing or retries never shift a timer.
    /// `path` is where `message` sits in the request, for error field paths.
    public static func interpret(_ message: NotifyMessage, now: Double, path: FieldPath = .root, anyTag: Bool = false)
        throws(FieldError) -> PushCommand
    {
        let data = ObjectReader(message.data, at: path.key("data"))
        let isLive = try data.optional("live_update", Coerce.bool) ?? false

        // The clear command wins over everything: the apps handle it before looking at anything else. Its tag is
        // opaque (it may clear a plain notification tagged "camera.front_door").
        if message.message == clearCommand, let tag = try data.optional("tag", Coerce.text), !tag.isEmpty {
            return .end(try endRequest(tag: tag, data: data))
        }
        // Without a tag it is the companion app's own command (the iOS app's `clear_notification` handler; on
        // Android it would be posted as text): never shown as one.
        if CompanionCommand.isCommand(message.message) || message.message == clearCommand {
            return .command(CompanionCommand(message: message))
        }
        if isLive {
            // The tag rule of HA's Live Activity docs holds for live updates only: it names an activity.
            let tag = try data.required("tag", anyTag ? nonEmptyText : ActivityTag.validate)
            return .liveUpdate(try LiveUpdateMapping.liveUpdate(tag: tag, message: message, data: data, now: now))
        }
        return .notification(NotifyMessage(title: message.title, message: message.message, data: message.data))
    }

    private static func nonEmptyText(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> String {
        let text = try Coerce.text(value, at: path)
        guard !text.isEmpty else { throw path.error("required", "this field is required.") }
        return text
    }

    private static func endRequest(tag: String, data: ObjectReader) throws(FieldError) -> EndRequest {
        let dismissal = try data.optional("dismissal_date", LifecycleRules.unixTime)
        return EndRequest(
            tag: tag,
            dismissal: dismissal.map(DismissalPolicy.at) ?? .immediate,
            staleDate: try LifecycleRules.staleDate(in: data),
            relevanceScore: try LifecycleRules.relevanceScore(in: data)
        )
    }

    private static func deliveryPath(_ options: JSONValue?, at path: FieldPath) throws(FieldError) -> DeliveryPath? {
        guard let options, !options.isNull else { return nil }
        let reader = try ObjectReader(options, at: path)
        try reader.rejectUnknownKeys(["path"])
        return try reader.optional("path") { (value, at) throws(FieldError) in
            let name = try Coerce.string(value, at: at)
            guard let route = DeliveryPath(rawValue: name) else {
                throw at.error("enum", "expected one of lan, relay, both; got \(value.serialized()).")
            }
            return route
        }
    }
}
