/// How a relay body is addressed when it leaves: the shape Home Assistant core gives its own bodies
/// (home-assistant/core `mobile_app/live_activity`, `prepare_live_activity_remote_push`), which HA's relay turns into
/// an ActivityKit push (mobile-apps-fcm-push `functions/live-activity.js`, `createPayload`) — and, for a device
/// that falls back through HA itself, the notify service data HA's action takes.
public enum RelayAddress {
    /// The token HA's relay addresses a Live Activity push by, and the event it makes of it.
    public struct LiveActivity: Sendable, Hashable {
        public var token: String
        public var event: LiveEvent

        public init(token: String, event: LiveEvent) {
            self.token = token
            self.event = event
        }
    }

    /// `body` for the relay, as core would send it:
    /// - with a token (`live`): top-level `live_activity_token` and `data.event` (`start` with a push-to-start token,
    ///   `update` or `end` with the activity's own token); an end carries `data.dismissal_date` (`dismissal`, Unix
    ///   seconds; the relay's own default is "now");
    /// - without one: neither, and no `data.event` — the relay then sends an ordinary notification, as it does for core.
    /// A token and event HA itself put in the body win (it knows the companion app's tokens); the push-to-start token
    /// is never sent at the top level, where the relay ignores it.
    public static func addressed(_ body: JSONValue, live: LiveActivity?, dismissal: Double? = nil) -> JSONValue {
        guard case .object(var o) = body else { return body }
        o["push_to_start_token"] = nil
        let hadData = o["data"] != nil
        var data = o["data"]?.objectValue ?? [:]
        let hasOwn = o["live_activity_token"]?.stringValue.map { !$0.isEmpty } ?? false
        if hasOwn {
            if data["event"] == nil || data["event"] == .null, let live { data["event"] = .string(live.event.rawValue) }
        } else if let live {
            o["live_activity_token"] = .string(live.token)
            data["event"] = .string(live.event.rawValue)
        } else {
            o["live_activity_token"] = nil
            data["event"] = nil
        }
        let event = data["event"]?.stringValue
        if event == LiveEvent.end.rawValue, data["dismissal_date"] == nil || data["dismissal_date"] == .null,
           let dismissal
        {
            data["dismissal_date"] = .number(dismissal.rounded())
        }
        // HA's `data` stays as HA sent it (`{}` included); a body that had none gets one only for the event.
        if !data.isEmpty || (hadData && o["data"]?.objectValue != nil) { o["data"] = .object(data) }
        return .object(o)
    }

    /// The notify service data (`{"message","title"?,"data"?}`) a relay body stands for: what a `notify.mobile_app_*`
    /// action takes. HA adds the push token, the registration and — for Live Activities — its own token and event
    /// (`prepare_live_activity_remote_push`), so none of those are passed on.
    public static func notifyData(_ body: JSONValue) -> JSONValue {
        guard case .object(let o) = body else { return body }
        var out: [String: JSONValue] = ["message": o["message"] ?? .string("")]
        if let title = o["title"], !title.isNull { out["title"] = title }
        if var data = o["data"]?.objectValue {
            data["event"] = nil
            if !data.isEmpty { out["data"] = .object(data) }
        }
        return .object(out)
    }
}
