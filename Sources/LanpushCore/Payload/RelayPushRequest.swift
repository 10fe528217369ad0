/// The body HA's `mobile_app` posts to a device's `push_url`, decoded and checked.
public struct RelayPushRequest: Sendable, Hashable {
    /// Identifies the device; routing key for LAN delivery and relay fallback.
    public var pushToken: String
    /// `app_id`, `app_version`, `os_version`, `webhook_id` (strings when present), as sent.
    public var registrationInfo: [String: JSONValue]
    /// Newer HA (2026.7+) on Apple live updates; passed through.
    public var liveActivityToken: String?
    /// Set when HA re-posts after a local-push confirm timeout: the de-duplication key.
    public var hassConfirmId: String?
    public var notification: NotifyMessage
    /// The body unchanged, for forwarding to the relay exactly as HA sent it.
    public var raw: [String: JSONValue]

    public init(
        pushToken: String, registrationInfo: [String: JSONValue] = [:], liveActivityToken: String? = nil,
        hassConfirmId: String? = nil, notification: NotifyMessage, raw: [String: JSONValue]
    ) {
        self.pushToken = pushToken
        self.registrationInfo = registrationInfo
        self.liveActivityToken = liveActivityToken
        self.hassConfirmId = hassConfirmId
        self.notification = notification
        self.raw = raw
    }

    public static let registrationStringKeys = ["app_id", "app_version", "os_version", "webhook_id"]

    /// Only the token is checked: the relay answers a tokenless request 403 whatever else is wrong with it (the HTTP
    /// layer recognises that case as field `push_token`, rule `required`), and refuses nothing else
    /// (mobile-apps-fcm-push `functions/handlers.js`, `handleRequest`). Everything else is read as leniently as the
    /// relay reads it: a member of the wrong type is absent; the notify fields are `LenientPayload`'s to judge.
    public static func decode(_ body: JSONValue) throws(FieldError) -> RelayPushRequest {
        guard case .object(let object) = body else {
            throw FieldError(
                field: "", rule: "type", message: "The request body must be a JSON object, got \(body.typeName).")
        }
        guard let token = object["push_token"]?.stringValue, !token.isEmpty else {
            throw FieldPath.root.key("push_token").error("required", "this field is required and must not be empty.")
        }
        var ignored = [FieldWarning]()
        return RelayPushRequest(
            pushToken: token,
            registrationInfo: object["registration_info"]?.objectValue ?? [:],
            liveActivityToken: object["live_activity_token"]?.stringValue,
            hassConfirmId: object["hass_confirm_id"]?.stringValue,
            notification: LenientPayload.decode(object, path: .root, warnings: &ignored),
            raw: object
        )
    }
}
