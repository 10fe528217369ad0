import LanpushCore

/// One notify payload, from whichever door it came in, decoded and interpreted: what every ingest hands to
/// `Ingest`. Building one is the whole of validation — an invalid payload never becomes a request.
struct IngestRequest {
    enum Source {
        /// HA's relay body on the relay-compatible ingest (`path`: the iOS or the Android relay path; `peer`: who
        /// posted it).
        case relayBody(RelayPushRequest, path: String, peer: String)
        /// `POST /v1/push`: device ids, or every device.
        case native(targets: [String])
        /// An event of a device's HA local push channel.
        case homeAssistant(device: String, webhookId: String?)
    }

    let source: Source
    let message: NotifyMessage
    private(set) var accepted: AcceptedPush
    /// HA's `hass_confirm_id`: the de-duplication key (HA re-posts an unconfirmed local-push event to the push_url).
    let confirmId: String?
    let acceptedAt: Double

    var command: PushCommand { accepted.command }

    /// The request with its live update's state named for the loop's patch memo (`LiveUpdate.stateID`): one id per
    /// accepted request.
    func stamped(stateID id: UInt64) -> IngestRequest {
        var request = self
        request.accepted.command.stamp(stateID: id)
        return request
    }

    /// HA's relay body, read as leniently as HA's relay and apps read it (`LenientPayload`): only a missing
    /// push_token is refused, reported as field `push_token`, rule `required` (the relay answers it 403).
    static func relayBody(_ body: JSONValue, path: String, peer: String = "", now: Double) throws(FieldError) -> IngestRequest {
        let request = try RelayPushRequest.decode(body)
        return IngestRequest(
            source: .relayBody(request, path: path, peer: peer), message: request.notification,
            accepted: LenientPayload.accept(request.raw, now: now), confirmId: request.hassConfirmId, acceptedAt: now)
    }

    /// `POST /v1/push`: the notify service data plus `targets` (device ids or "all"; missing = `allDevices`, asked
    /// for only then: listing every device on each push was 1.4 % of an ingest round with 100 devices).
    static func native(_ body: JSONValue, allDevices: () -> [String], now: Double) throws(FieldError) -> IngestRequest {
        guard case .object(let object) = body else {
            throw FieldError(field: "", rule: "type", message: "the body must be a JSON object")
        }
        return try native(object, allDevices: allDevices, now: now)
    }

    /// The same from the body's members (a publisher's `push` frame; its `type` and `id` are read by nobody here).
    /// Nothing is removed from the object: the notify data is read from it as it is (no copy of the body).
    static func native(_ object: [String: JSONValue], allDevices: () -> [String], now: Double) throws(FieldError)
        -> IngestRequest
    {
        let targets: [String]
        switch try PushTargets.decode(object["targets"]) {
        case .all: targets = allDevices()
        case .devices(let ids): targets = ids
        }
        let message = try NotifyMessage.decode(object)
        return IngestRequest(
            source: .native(targets: targets), message: message, accepted: try PayloadInterpreter.accept(message, now: now),
            confirmId: nil, acceptedAt: now)
    }

    /// One event of a device's HA local push channel: the notify service data HA hands its push channel
    /// (`{"message","title"?,"data"?,"hass_confirm_id"?}`), read as leniently as HA's apps read it.
    static func homeAssistant(_ event: [String: JSONValue], device: String, webhookId: String?, now: Double) -> IngestRequest {
        var ignored = [FieldWarning]()
        let message = LenientPayload.decode(event, path: .root, warnings: &ignored)
        return IngestRequest(
            source: .homeAssistant(device: device, webhookId: webhookId), message: message,
            accepted: LenientPayload.accept(event, now: now), confirmId: event["hass_confirm_id"]?.stringValue, acceptedAt: now)
    }

    /// The body for the relay path to a device (`inputs`: what it depends on of the device): HA's own request as it
    /// came, or the one HA would have posted for a native or channel payload — with the device's own (client-given)
    /// relay registration, never the HA registration's push_url, which is lanpush itself.
    func relayBody(_ inputs: RelayInputs) -> RelayBody {
        Self.relayBody(raw: rawRelayRequest, message: message, acceptedAt: acceptedAt, inputs: inputs)
    }

    /// The same, kept to be built when read: only what the body is made of is captured (not the interpreted payload),
    /// so an activity holding it keeps about what its built body would.
    func deferredRelayBody(_ inputs: RelayInputs) -> DeferredJSON {
        let (raw, message, acceptedAt) = (rawRelayRequest, message, acceptedAt)
        return DeferredJSON { Self.relayBody(raw: raw, message: message, acceptedAt: acceptedAt, inputs: inputs).json }
    }

    /// HA's request as it came on the relay-compatible ingest; `nil` for the other doors.
    private var rawRelayRequest: [String: JSONValue]? {
        if case .relayBody(let request, _, _) = source { request.raw } else { nil }
    }

    private static func relayBody(
        raw: [String: JSONValue]?, message: NotifyMessage, acceptedAt: Double, inputs: RelayInputs
    ) -> RelayBody {
        if let raw { return RelayBody.forwarding(raw, acceptedAt: acceptedAt) }
        return RelayBody.native(
            message, pushToken: inputs.pushToken, registrationInfo: inputs.registrationInfo, acceptedAt: acceptedAt)
    }

    /// Everything of a device a request's relay body depends on. One update to many devices that have no relay
    /// registration of their own (LAN clients) has one relay body for all of them: `Ingest` builds it once.
    struct RelayInputs: Equatable, Sendable {
        var pushToken: String?
        var registrationInfo: [String: JSONValue]?

        /// `request` borrowed: an initializer takes its arguments owned, and the copy that made (every string and
        /// dictionary of the request retained, then released) was ~2.5 % of a fan-out's time, once per device.
        init(_ request: borrowing IngestRequest, _ device: DeviceRecord) {
            pushToken = device.relay.registration?.pushToken
            registrationInfo = device.relay.registration?.registrationInfo
        }
    }
}
