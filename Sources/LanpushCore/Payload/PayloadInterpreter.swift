/// Decides what a notify payload means (DESIGN.md §3): an activity's end, a live update, or a plain notification.
public enum PayloadInterpreter {
    /// HA's command message; with a tag it ends the activity and clears the notification of that tag.
    public static let clearCommand = "clear_notification"

    /// `now` (Unix seconds) makes `when_relative` absolute at acceptance, so pacing or retries never shift a timer.
    /// `path` is where `message` sits in the request, for error field paths.
    public static func interpret(_ message: NotifyMessage, now: Double, path: FieldPath = .root) throws(FieldError)
        -> PushCommand
    {
        let data = ObjectReader(message.data, at: path.key("data"))
        let tag = try data.optional("tag", ActivityTag.validate)
        let isLive = try data.optional("live_update", Coerce.bool) ?? false

        // The clear command wins over `live_update`: HA's apps handle it before looking at anything else.
        if message.message == clearCommand, let tag {
            return .end(try endRequest(tag: tag, data: data))
        }
        if isLive {
            guard let tag else {
                throw data.path.key("tag").error("required", "a live update needs a tag to name its activity.")
            }
            return .liveUpdate(try LiveUpdateMapping.liveUpdate(tag: tag, message: message, data: data, now: now))
        }
        return .notification(PlainNotification(title: message.title, message: message.message, data: message.data))
    }

    private static func endRequest(tag: String, data: ObjectReader) throws(FieldError) -> EndRequest {
        let dismissal = try data.optional("dismissal_date", LifecycleRules.unixTime)
        return EndRequest(
            tag: tag,
            dismissal: dismissal.map(DismissalPolicy.at) ?? .default,
            staleDate: try LifecycleRules.staleDate(in: data),
            relevanceScore: try LifecycleRules.relevanceScore(in: data)
        )
    }
}
