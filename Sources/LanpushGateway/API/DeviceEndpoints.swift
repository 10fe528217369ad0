import LanpushCore
import Logging

/// Devices at run time and pairing, over HTTP: `POST /v1/devices`, `PATCH` / `DELETE /v1/devices/{id}`,
/// `POST /v1/devices/{id}/token`, `POST /v1/pairings` (admin) and `POST /v1/pair` (a client redeeming a code).
/// Loop thread only.
struct DeviceEndpoints {
    let commands: DeviceCommands
    let pairings: Pairings
    let throttle: AuthThrottle
    let metrics: GatewayMetrics
    let logger: Logger
    let clock: () -> Double
    /// Where clients reach the gateway: `host:port` entries for the pairing URL (the `Host` the admin used first,
    /// when it is not loopback), and the TLS certificate's SHA-256 when TLS is on.
    let addresses: (_ requestHost: String?) -> [String]
    let fingerprint: () -> String?

    func add(_ body: JSONValue) -> APIResponse {
        let fields: (id: String, name: String?, notifications: NotificationRouting?)
        switch Self.fields(body, requireId: true) {
        case .success(let f): fields = (f.id ?? "", f.name, f.notifications)
        case .failure(let error): return .error(400, error)
        }
        switch commands.add(id: fields.id, name: fields.name, notifications: fields.notifications ?? .auto) {
        case .success(let (device, token)):
            return .json(201, [
                "id": .string(device.id), "name": .string(device.name), "token": .string(token),
                "notifications": .string(device.notifications.rawValue),
            ])
        case .failure(let failure):
            return answer(failure)
        }
    }

    func update(_ id: String, _ body: JSONValue) -> APIResponse {
        switch Self.fields(body, requireId: false) {
        case .failure(let error):
            return .error(400, error)
        case .success(let f):
            switch commands.update(id: id, name: f.name, notifications: f.notifications) {
            case .success(let device): return .json(200, commands.report.json(device))
            case .failure(let failure): return answer(failure)
            }
        }
    }

    func rotate(_ id: String) -> APIResponse {
        switch commands.rotate(id: id) {
        case .success(let (device, token)):
            pairings.cancel(device: id)
            return .json(200, ["id": .string(device.id), "token": .string(token)])
        case .failure(let failure):
            return answer(failure)
        }
    }

    func remove(_ id: String) -> APIResponse {
        switch commands.remove(id: id) {
        case .success:
            pairings.cancel(device: id)
            return .json(200, ["removed": .string(id)])
        case .failure(let failure):
            return answer(failure)
        }
    }

    /// The device's relay registration is cleared (the admin frees a push_token another device needs).
    func clearRegistration(_ id: String) -> APIResponse {
        switch commands.clearRegistration(id: id) {
        case .success(let device): return .json(200, commands.report.json(device))
        case .failure(let failure): return answer(failure)
        }
    }

    /// A pairing for `device` (made when it does not exist yet): the codes and the pairing URL, valid 10 minutes.
    func pair(_ body: JSONValue, host: String?) -> APIResponse {
        guard let object = body.objectValue, let id = object["device"]?.stringValue else {
            return .error(400, field: "device", rule: "required", "device: the id of the device to pair (it is made if new)")
        }
        if commands.directory[id] == nil {
            if case .failure(let failure) = commands.add(id: id, name: object["name"]?.stringValue) { return answer(failure) }
        } else if case .config(let index) = commands.directory[id]!.source {
            return answer(.readOnly(id: id, configKey: "devices[\(index)]"))
        }
        let pairing = pairings.create(device: id, now: clock())
        let all = addresses(host)
        guard let first = all.first else {
            return .error(500, field: "listen", rule: "address", "no address to put in the pairing URL")
        }
        var query = "code=\(pairing.code)"
        if let fp = fingerprint() { query += "&fp=\(fp)" }
        for alternative in all.dropFirst() { query += "&alt=\(alternative)" }
        return .json(201, [
            "device": .string(id), "code": .string(pairing.code), "short_code": .string(Self.grouped(pairing.shortCode)),
            "url": .string("lanpush://\(first)/pair?\(query)"), "expires_at": .number(pairing.expiresAt.rounded()),
        ])
    }

    /// A client redeems a code: the device's new token (its previous one stops working), once.
    func redeem(_ body: JSONValue, from address: String) -> APIResponse {
        let now = clock()
        if let wait = throttle.retryAfter(address, now: now) {
            return Router.throttled(wait, metrics: metrics)
        }
        guard let code = body["code"]?.stringValue, !code.isEmpty else {
            return .error(400, field: "code", rule: "required", "code: the pairing code (from the pairing URL or typed)")
        }
        let pairing: Pairings.Pairing
        switch pairings.redeem(code, now: now) {
        case .success(let found):
            pairing = found
        case .failure(let wrong):
            throttle.failed(address, now: now)
            metrics.reject("auth")
            if !wrong.voided.isEmpty {
                logger.warning("pairing void: too many wrong codes were tried while it was open", metadata: [
                    "devices": "\(wrong.voided.joined(separator: ","))", "peer": "\(address)",
                ])
            }
            return .error(403, field: "code", rule: "invalid", "code: unknown, already used, expired or void")
        }
        switch commands.rotate(id: pairing.device, closing: "paired again") {
        case .success(let (device, token)):
            var o: [String: JSONValue] = ["device_id": .string(device.id), "token": .string(token)]
            if let fp = fingerprint() { o["fingerprint"] = .string(fp) }
            return .json(200, .object(o))
        case .failure(let failure):
            return answer(failure)
        }
    }

    /// `ABCD-EFGH`: easier to read out and type.
    static func grouped(_ code: String) -> String {
        code.count == 8 ? "\(code.prefix(4))-\(code.suffix(4))" : code
    }

    private func answer(_ failure: DeviceCommands.Failure) -> APIResponse {
        switch failure {
        case .invalid(let error):
            return .error(400, error)
        case .exists(let id, let key?):
            metrics.reject("conflict")
            return .error(409, field: key, rule: "exists", "device '\(id)' is defined in the config file (\(key))")
        case .exists(let id, nil):
            metrics.reject("conflict")
            return .error(409, field: "id", rule: "exists", "id: device '\(id)' exists")
        case .readOnly(let id, let key):
            metrics.reject("conflict")
            return .error(409, field: key, rule: "read_only", "device '\(id)' is defined in the config file (\(key)): change it there")
        case .notFound(let id):
            return .error(404, field: "device", rule: "exists", "device: no device '\(id)'")
        }
    }

    private struct Fields {
        var id: String?
        var name: String?
        var notifications: NotificationRouting?
    }

    private static func fields(_ body: JSONValue, requireId: Bool) -> Result<Fields, FieldError> {
        guard let o = body.objectValue else { return .failure(FieldError(field: "", rule: "type", message: "the body must be a JSON object")) }
        for key in o.keys.sorted() where !["id", "name", "notifications"].contains(key) || (key == "id" && !requireId) {
            return .failure(FieldError(field: key, rule: "unknown_key", message: "\(key): not a field of a device here (id, name, notifications)"))
        }
        var f = Fields()
        if requireId {
            guard let id = o["id"]?.stringValue else { return .failure(FieldError(field: "id", rule: "required", message: "id: required (1-64 letters, digits, '.', '-', '_')")) }
            f.id = id
        }
        if let name = o["name"], !name.isNull {
            guard let s = name.stringValue, s.count <= 200 else { return .failure(FieldError(field: "name", rule: "type", message: "name: a string of at most 200 characters")) }
            f.name = s
        }
        if let n = o["notifications"], !n.isNull {
            guard let s = n.stringValue, let routing = NotificationRouting(rawValue: s) else {
                return .failure(FieldError(field: "notifications", rule: "enum", message: "notifications: auto, lan, relay or both"))
            }
            f.notifications = routing
        }
        return .success(f)
    }
}
