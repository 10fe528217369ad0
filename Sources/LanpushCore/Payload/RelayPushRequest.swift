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

    /// The token is checked first: the relay answers a tokenless request 403 whatever else is wrong with it,
    /// and the HTTP layer recognises that case as field `push_token`, rule `required`.
    public static func decode(_ body: JSONValue) throws(FieldError) -> RelayPushRequest {
        guard case .object(let object) = body else {
            throw FieldError(
                field: "", rule: "type", message: "The request body must be a JSON object, got \(body.typeName).")
        }
        let reader = ObjectReader(object, at: .root)
        let token = try reader.required("push_token", Coerce.string)
        guard !token.isEmpty else {
            throw FieldPath.root.key("push_token").error("required", "this field is required and must not be empty.")
        }

        let registration = try reader.optional("registration_info", Coerce.object) ?? [:]
        let registrationReader = ObjectReader(registration, at: reader.path.key("registration_info"))
        for key in registrationStringKeys {
            _ = try registrationReader.optional(key, Coerce.string)
        }

        return RelayPushRequest(
            pushToken: token,
            registrationInfo: registration,
            liveActivityToken: try reader.optional("live_activity_token", Coerce.string),
            hassConfirmId: try reader.optional("hass_confirm_id", Coerce.string),
            notification: try NotifyMessage.decode(object),
            raw: object
        )
    }
}
