import LanpushCore

/// Everything the relay path knows of one device, in one place: the credentials its clients registered, the tokens
/// its activities are addressed by, what the relay already carried for it (so a drain never repeats it), which of its
/// activities the relay path is showing on the phone (so each is ended there too), and whether the relay still
/// takes its token. Lives on the device's record; the durable parts go to the store with the device's row. Loop
/// thread only.
struct DeviceRelayState {
    struct Registration: Equatable {
        var pushToken: String
        var pushURL: String?
        var registrationInfo: [String: JSONValue]
    }

    var registration: Registration?
    /// Per activity tag, the activity's own push token as its client reported it (`{"token","expires_at"?}`).
    var liveActivityTokens: [String: JSONValue] = [:]
    /// The token that starts an activity remotely (ActivityKit's push-to-start), as a client reported it.
    var pushToStartToken: String?
    /// The relay body per queued notification seq (an activity keeps its own, `Activity.relayBody`).
    var notificationBodies = NotificationRelayBodies()
    /// Per activity tag, the newest seq the relay answered 2xx for: what the phone has through the relay path, so a
    /// drain never sends it again (a client that visits the LAN and acks nothing does not ack it either).
    var relayedSeq: [String: UInt64] = [:]
    /// Activities the relay path showed on the phone (it carried their start or an update) and has not ended: each
    /// is ended there when the device's LAN session takes it back, or when it ends.
    var shown: Set<String> = []
    /// Why the relay refused the device's token (403, 500 `InvalidToken`), until a client registers again.
    var tokenInvalid: String?
    /// When a LAN session that came back takes the shown activities back (they are ended on the phone then), unless
    /// it drops first (`relay.hand_back_after`).
    var handBackAt: Double?

    /// The activity token the relay path addresses `tag` by: the one its client reported, unless it has expired.
    func activityToken(_ tag: String, now: Double) -> String? {
        guard let entry = liveActivityTokens[tag], let token = entry["token"]?.stringValue else { return nil }
        if let expires = entry["expires_at"]?.numberValue, expires <= now { return nil }
        return token
    }

    /// What the store keeps besides the credentials (`DeviceRow.relayState`): the shown activities and the refusal.
    var stored: JSONValue? {
        guard !shown.isEmpty || tokenInvalid != nil else { return nil }
        var o: [String: JSONValue] = [:]
        if !shown.isEmpty { o["shown"] = .array(shown.sorted().map(JSONValue.string)) }
        if let tokenInvalid { o["token_invalid"] = .string(tokenInvalid) }
        return .object(o)
    }

    mutating func restore(_ stored: JSONValue?) {
        shown = Set(stored?["shown"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        tokenInvalid = stored?["token_invalid"]?.stringValue
    }
}
