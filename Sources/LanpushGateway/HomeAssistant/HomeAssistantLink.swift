import Foundation
import LanpushCore
import LanpushLWS
import LanpushStore
import LanpushHTTPClient
import Logging

/// HA-native mode: every exposed lanpush device is a `mobile_app` device of Home
/// Assistant — so HA has a `notify.mobile_app_<device>` service per device — and lanpush receives those
/// notifications over HA's local push channel: one WebSocket from the gateway's own lws loop to
/// `/api/websocket`, one `mobile_app/push_notification_channel` subscription per device.
///
/// Lifecycle of the link, on the loop thread:
/// 1. connect → `auth_required` → `auth` (token) → `auth_ok`;
/// 2. `get_config` until HA's `state` is `RUNNING` (HA's websocket answers early in its start-up, before
///    mobile_app has loaded its config entries: subscribing then would answer "Webhook ID not found");
/// 3. per device: with a stored webhook_id, `update_registration` if its name or push_url changed, then
///    subscribe; without one, look for config entries of this device (a lost state leaves one behind: the
///    device registry's device with identifier `("mobile_app", "lanpush-<id>")` names them — HA's config entry
///    API does not show unique ids), remove them, then `POST /api/mobile_app/registrations` and store the
///    webhook_id;
/// 4. each event → `Ingest.submit` (the same door as every ingest) → once the turn is committed,
///    `mobile_app/push_notification_confirm` (HA falls back to the push_url after 10 s without it and tears the
///    channel down silently: a confirm HA answers with an error means that happened → re-subscribe);
/// 5. on close: every channel is down; reconnect with backoff (0.5 s doubling to 3 s, ±20 %) and start over.
///    The cap is low on purpose: HA opens its port only when it is nearly RUNNING (~0.1 s before, measured on
///    2025.4.4), so the cap is what a restart of HA costs in re-subscription delay; a refused connect is cheap.
///
/// Registration happens only through step 3's check, so an answer lost on the way (timeout) never leaves a
/// second registration: the retry finds and removes the first. A subscription answered "not found" while HA
/// runs means the registration is gone (deleted in HA, or another HA): the same check, then a new one.
/// It never subscribes with any webhook_id but its own registrations' (a second subscription tears a phone's
/// channel down).
final class HomeAssistantLink: WSClientDelegate {
    let settings: HomeAssistantSettings
    let core: GatewayCore
    let inbox: LoopInbox
    let logger: Logger
    private weak var server: LWSServer?
    private let http: JSONHTTPClient?
    /// Exposed devices, config order.
    private(set) var devices: [HomeAssistantDevice] = []

    enum State: String {
        case idle, connecting, authenticating, starting, ready, retrying, stopped
    }

    private(set) var state: State = .idle
    private var connection: WSClientConnection?
    /// Bumped on every new connection: work started on an older one (a confirm after a commit) is dropped.
    private var generation = 0
    private var outgoing: [[UInt8]] = []
    private var nextId = 1
    private var pending: [Int: Request] = [:]
    private var subscriptions: [Int: String] = [:]
    private var backoff = 0.0
    /// Failed attempts since the last successful auth: the first is a warning, then one about every minute.
    private var failures = 0
    static let maxBackoff = 3.0
    private var retryTimer: LWSTimer?
    private(set) var haVersion: String?
    /// Why the link is not up (connect failure, auth_invalid, no token); `nil` once authenticated.
    private(set) var lastError: String?

    private enum Request {
        case getConfig
        /// `config/device_registry/list`: which config entries hold each device's registration.
        case registry(Purpose)
        /// `config_entries/get` (mobile_app): their states; `owned` maps an HA device_id to its entry ids.
        case entries(Purpose, owned: [String: [String]])
        case subscribe(String)
        case confirm(String)
        case unsubscribe
    }

    private enum Purpose {
        /// Devices with no webhook_id: remove leftovers, then register.
        case register([String])
        /// A subscription answered not_found while HA runs.
        case verify(String)
    }

    /// Creates the link when HA-native mode is on (else `nil`) and starts it on the loop's first turn. Called
    /// once, from `Gateway.init`, before the loop runs. It stops with the server (lws closes the websocket
    /// with 1001; no reconnect once the server is stopping).
    static func start(
        config: GatewayConfig, core: GatewayCore, server: LWSServer, inbox: LoopInbox, logger: Logger,
        stored: [String: HARegistrationRow], environment: [String: String]
    ) -> HomeAssistantLink? {
        // Push tokens of stored registrations route to their device even when the mode is off now or the device
        // is no longer exposed: HA still has that device and may post to its push_url.
        for (id, row) in stored { core.directory.route(pushToken: row.pushToken, to: id) }
        guard let settings = HomeAssistantSettings.resolve(config, port: server.port, environment: environment) else {
            return nil
        }
        let link = HomeAssistantLink(
            settings: settings, core: core, server: server, inbox: inbox, logger: logger, stored: stored)
        server.configureWebSocketClients(WSClientOptions(pingInterval: 20, pingTimeout: 10, connectTimeout: 10))
        server.schedule(after: 0) { [weak link] in link?.begin() }
        return link
    }

    private init(
        settings: HomeAssistantSettings, core: GatewayCore, server: LWSServer, inbox: LoopInbox, logger: Logger,
        stored: [String: HARegistrationRow]
    ) {
        self.settings = settings
        self.core = core
        self.server = server
        self.inbox = inbox
        var logger = logger
        logger[metadataKey: "component"] = "home_assistant"
        self.logger = logger
        self.http = settings.token.map { JSONHTTPClient(timeout: 10, bearer: $0) }
        for record in core.directory.sorted {
            let exposed = settings.deviceIds.contains(record.id)
            let device = HomeAssistantDevice(id: record.id, name: record.name, exposed: exposed, row: stored[record.id])
            record.homeAssistant = device
            device.link = self
            if exposed { devices.append(device) }
        }
        devices.sort { settings.deviceIds.firstIndex(of: $0.id)! < settings.deviceIds.firstIndex(of: $1.id)! }
    }

    private func device(_ id: String) -> HomeAssistantDevice? { devices.first { $0.id == id } }

    private func begin() {
        logger.info("HA-native mode on", metadata: [
            "url": "\(settings.baseURL)", "websocket": "\(settings.websocketURL)", "token": "\(settings.tokenSource)",
            "devices": "\(settings.deviceIds.joined(separator: ","))", "push_url": "\(settings.pushURL ?? "none")",
        ])
        if settings.pushURL == nil {
            logger.warning("HA-native mode: no push_url (HA is not on this host and `listen` is a wildcard): HA has only the local push channel; set home_assistant.push_url to an address HA can reach lanpush at")
        }
        guard settings.token != nil else {
            lastError = "no token: set home_assistant.token (a long-lived access token)"
                + (settings.isSupervisor ? " or run as an add-on with homeassistant_api (SUPERVISOR_TOKEN)" : "")
            logger.error("HA-native mode: \(lastError!)")
            state = .stopped
            for d in devices {
                d.lastError = lastError
                d.channel = .error
            }
            return
        }
        connect()
    }

    // MARK: Connection

    /// lws resolves host names with a blocking getaddrinfo on the loop thread: a slow resolver (a `.local` name
    /// without mDNS, a dead DNS server) would stall every LAN session on each attempt. So a `ws://` host name is
    /// resolved here, off the loop, and the connection goes to the address; `wss://` keeps the name (TLS verifies it).
    private func connect() {
        retryTimer = nil
        guard let server, !server.isStopping else { return stop() }
        core.metrics.haConnects.increment()
        state = .connecting
        guard let url = try? WebSocketURL(settings.websocketURL), !url.secure, !Self.isAddressLiteral(url.host) else {
            return open(settings.websocketURL)
        }
        let bound = inbox.bound(self)
        let inbox = self.inbox
        let host = url.host
        DispatchQueue.global().async {
            let addresses = Host(name: host).addresses
            // IPv4 first: HA listens on IPv4 by default.
            let address = addresses.first { !$0.contains(":") } ?? addresses.first
            inbox.post {
                let link = bound.value
                guard link.state == .connecting else { return }
                guard let address else {
                    link.attemptFailed("cannot resolve \(host)")
                    return link.scheduleReconnect()
                }
                let literal = address.contains(":") ? "[\(address)]" : address
                link.open("ws://\(literal):\(url.port)\(url.path)")
            }
        }
    }

    static func isAddressLiteral(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber })
    }

    private func open(_ target: String) {
        guard let server, !server.isStopping else { return stop() }
        do {
            connection = try server.connectWebSocket(url: target, delegate: self)
            generation += 1
        } catch .notRunning {
            stop()
        } catch {
            lastError = "\(error)"
            logger.error("cannot connect to Home Assistant", metadata: ["error": "\(error)"])
            scheduleReconnect()
        }
    }

    private func stop() {
        state = .stopped
        retryTimer?.cancel()
        retryTimer = nil
        http?.shutdown()
    }

    private func scheduleReconnect(after fixed: Double? = nil) {
        guard let server, !server.isStopping else { return stop() }
        backoff = backoff == 0 ? 0.5 : min(backoff * 2, Self.maxBackoff)
        let delay = fixed ?? backoff * Double.random(in: 0.8...1.2)
        state = .retrying
        retryTimer?.cancel()
        retryTimer = server.schedule(after: delay) { [weak self] in self?.connect() }
    }

    func wsClientOpened(_ connection: WSClientConnection) {
        guard connection === self.connection else { return connection.close() }
        state = .authenticating
        logger.debug("connected to Home Assistant's websocket API", metadata: ["url": "\(settings.websocketURL)"])
    }

    func wsClientConnectFailed(_ connection: WSClientConnection, error: WSClientError) {
        guard connection === self.connection else { return }
        self.connection = nil
        attemptFailed("connect failed: \(error)")
        connectionLost()
        scheduleReconnect()
    }

    func wsClientClosed(_ connection: WSClientConnection, code: UInt16?, reason: String) {
        guard connection === self.connection else { return }
        self.connection = nil
        guard let server, !server.isStopping else {
            connectionLost()
            return stop()
        }
        let wasUp = state == .ready || state == .starting
        logger.log(level: wasUp ? .warning : .info, "Home Assistant's websocket closed; reconnecting", metadata: [
            "code": "\(code.map(String.init) ?? "none")", "reason": "\(reason)",
        ])
        connectionLost()
        scheduleReconnect()
    }

    private func attemptFailed(_ why: String) {
        lastError = why
        failures += 1
        let loud = failures == 1 || failures % 20 == 0
        logger.log(level: loud ? .warning : .debug, "cannot reach Home Assistant; retrying", metadata: [
            "url": "\(settings.websocketURL)", "error": "\(why)", "attempts": "\(failures)",
        ])
    }

    private func connectionLost() {
        outgoing.removeAll()
        pending.removeAll()
        subscriptions.removeAll()
        core.metrics.haConnected.record(0)
        for d in devices {
            // HA tore these channels down with the connection (their unconfirmed events went to the push_url).
            d.subscriptionId = nil
            d.pendingConfirms = 0
            d.channel = .down
            statusChanged(d)
        }
        updateChannelGauge()
    }

    func wsClientWritable(_ connection: WSClientConnection) {
        guard connection === self.connection else { return }
        while !outgoing.isEmpty && !connection.isChoked {
            guard connection.send(outgoing[0]) else { return }
            outgoing.removeFirst()
        }
        if !outgoing.isEmpty { connection.requestWritable() }
    }

    @discardableResult
    private func send(_ type: String, _ fields: [String: JSONValue] = [:], as request: Request?) -> Int {
        var o = fields
        o["type"] = .string(type)
        var id = 0
        if let request {
            id = nextId
            nextId += 1
            o["id"] = .number(Double(id))
            pending[id] = request
        }
        outgoing.append(JSONValue.object(o).serializedBytes())
        connection?.requestWritable()
        return id
    }

    // MARK: Messages

    func wsClientText(_ connection: WSClientConnection, _ bytes: [UInt8]) {
        guard connection === self.connection else { return }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            logger.warning("Home Assistant sent invalid JSON", metadata: ["error": "\(error)"])
            return
        }
        // HA may coalesce several messages into one array frame (only if asked to; accept it anyway).
        for message in value.arrayValue ?? [value] {
            guard let object = message.objectValue else { continue }
            handle(object)
            if self.connection !== connection { break }
        }
    }

    private func handle(_ message: [String: JSONValue]) {
        switch message["type"]?.stringValue {
        case "auth_required":
            send("auth", ["access_token": .string(settings.token ?? "")], as: nil)
        case "auth_ok":
            haVersion = message["ha_version"]?.stringValue
            backoff = 0
            failures = 0
            lastError = nil
            state = .starting
            core.metrics.haConnected.record(1)
            logger.info("authenticated with Home Assistant", metadata: ["ha_version": "\(haVersion ?? "?")"])
            for d in devices where d.row != nil { setChannel(d, .waiting) }
            send("get_config", as: .getConfig)
        case "auth_invalid":
            let why = message["message"]?.stringValue ?? "invalid token"
            lastError = "auth_invalid: \(why)"
            logger.error("Home Assistant refused the token; retrying in 60 s", metadata: ["message": "\(why)"])
            for d in devices { d.lastError = lastError }
            let c = connection
            connection = nil
            c?.close(code: 1000, reason: "auth invalid")
            connectionLost()
            scheduleReconnect(after: 60)
        case "result":
            guard let id = message["id"]?.numberValue.map({ Int($0) }), let request = pending.removeValue(forKey: id) else { return }
            let success = message["success"]?.boolValue == true
            result(request, id: id, success: success, result: message["result"], error: message["error"])
        case "event":
            guard let id = message["id"]?.numberValue.map({ Int($0) }), let deviceId = subscriptions[id],
                let device = device(deviceId)
            else { return }
            guard let event = message["event"]?.objectValue else { return }
            handleEvent(event, device: device)
        default:
            return
        }
    }

    private func result(_ request: Request, id: Int, success: Bool, result: JSONValue?, error: JSONValue?) {
        let code = error?["code"]?.stringValue ?? ""
        let text = error?["message"]?.stringValue ?? ""
        switch request {
        case .getConfig:
            let haState = result?["state"]?.stringValue ?? "?"
            guard success, haState == "RUNNING" else {
                logger.debug("Home Assistant is not running yet", metadata: ["state": "\(haState)"])
                let g = generation
                server?.schedule(after: 1) { [weak self] in
                    guard let self, self.generation == g, self.state == .starting else { return }
                    self.send("get_config", as: .getConfig)
                }
                return
            }
            state = .ready
            reconcile()
        case .registry(let purpose):
            guard success, let list = result?.arrayValue else {
                return lookupFailed(purpose, "cannot list HA's device registry: \(code) \(text)")
            }
            var owned: [String: [String]] = [:]
            for entry in list {
                let entryIds = entry["config_entries"]?.arrayValue?.compactMap(\.stringValue) ?? []
                for identifier in entry["identifiers"]?.arrayValue ?? [] {
                    guard let pair = identifier.arrayValue, pair.count == 2, pair[0].stringValue == "mobile_app",
                        let haDeviceId = pair[1].stringValue
                    else { continue }
                    owned[haDeviceId, default: []].append(contentsOf: entryIds)
                }
            }
            send("config_entries/get", ["domain": "mobile_app"], as: .entries(purpose, owned: owned))
        case .entries(let purpose, let owned):
            guard success, let entries = result?.arrayValue else {
                return lookupFailed(purpose, "cannot list HA's mobile_app config entries: \(code) \(text)")
            }
            var states: [String: String] = [:]
            for entry in entries {
                if let id = entry["entry_id"]?.stringValue { states[id] = entry["state"]?.stringValue ?? "?" }
            }
            entriesListed(for: purpose) { d in
                (owned[d.haDeviceId] ?? []).compactMap { id in states[id].map { (id, $0) } }
            }
        case .subscribe(let deviceId):
            guard let d = device(deviceId) else { return }
            if success {
                subscriptions[id] = deviceId
                d.subscriptionId = id
                d.notFoundRetries = 0
                d.lastError = nil
                setChannel(d, .subscribed)
                logger.info("local push channel subscribed", metadata: [
                    "device": "\(d.id)", "notify_service": "\(d.notifyService)",
                ])
            } else if code == "not_found" {
                // Gone from HA (deleted there, or another HA), or HA has not loaded it yet: look before acting.
                logger.info("HA does not know this webhook_id; checking its config entries", metadata: ["device": "\(d.id)"])
                setChannel(d, .down)
                send("config/device_registry/list", as: .registry(.verify(d.id)))
            } else {
                fail(d, "subscription refused: \(code) \(text)", retryIn: code == "unauthorized" ? 60 : 10)
            }
        case .confirm(let deviceId):
            guard let d = device(deviceId) else { return }
            d.pendingConfirms = max(0, d.pendingConfirms - 1)
            if success {
                d.confirms += 1
                core.metrics.haConfirms.increment()
            } else {
                // HA no longer waits for it: the confirm came too late (it fell back to the push_url and tore
                // the channel down) or the channel is gone. Subscribe again.
                d.confirmErrors += 1
                core.metrics.haConfirmErrors.increment()
                logger.warning("Home Assistant rejected a confirm; re-subscribing", metadata: [
                    "device": "\(d.id)", "code": "\(code)", "message": "\(text)",
                ])
                resubscribe(d)
            }
        case .unsubscribe:
            return
        }
    }

    private func setChannel(_ d: HomeAssistantDevice, _ channel: HomeAssistantDevice.Channel) {
        guard d.channel != channel else { return }
        d.channel = channel
        updateChannelGauge()
        statusChanged(d)
    }

    private func updateChannelGauge() {
        core.metrics.haChannels.record(devices.reduce(0) { $0 + ($1.channel == .subscribed ? 1 : 0) })
    }

    private func fail(_ d: HomeAssistantDevice, _ why: String, retryIn seconds: Double) {
        logger.error("HA-native mode: \(why)", metadata: ["device": "\(d.id)"])
        d.lastError = why
        if d.row == nil { d.registration = .error }
        setChannel(d, .error)
        let g = generation
        server?.schedule(after: seconds) { [weak self, weak d] in
            guard let self, let d, self.generation == g, self.state == .ready else { return }
            self.reconcile(only: d)
        }
    }

    // MARK: Registration

    /// Brings every exposed device (or `only` one) to "registered and subscribed".
    private func reconcile(only: HomeAssistantDevice? = nil) {
        guard state == .ready else { return }
        var toRegister: [String] = []
        for d in devices where only == nil || only === d {
            if let row = d.row {
                if row.deviceName != d.name || row.pushURL != (settings.pushURL ?? "") { updateRegistration(d) }
                subscribe(d)
            } else if d.registration == .none || d.registration == .error {
                d.registration = .checking
                toRegister.append(d.id)
                statusChanged(d)
            }
        }
        if !toRegister.isEmpty {
            send("config/device_registry/list", as: .registry(.register(toRegister)))
        }
    }

    private func lookupFailed(_ purpose: Purpose, _ why: String) {
        let ids: [String]
        switch purpose {
        case .register(let list): ids = list
        case .verify(let one): ids = [one]
        }
        for id in ids {
            if let d = device(id) { fail(d, why, retryIn: 30) }
        }
    }

    /// `mine(d)`: the mobile_app config entries (id, state) that hold device `d` in HA.
    private func entriesListed(for purpose: Purpose, mine: (HomeAssistantDevice) -> [(id: String, state: String)]) {
        switch purpose {
        case .register(let ids):
            for id in ids {
                guard let d = device(id), d.row == nil else { continue }
                let leftovers = mine(d).map(\.id)
                if !leftovers.isEmpty {
                    logger.warning("HA has a registration of this device that lanpush no longer knows (its state was lost); replacing it", metadata: [
                        "device": "\(d.id)", "entries": "\(leftovers.joined(separator: ","))",
                    ])
                }
                removeEntries(leftovers, of: d) { [weak self] in self?.register(d) }
            }
        case .verify(let id):
            guard let d = device(id), let row = d.row else { return }
            let found = mine(d)
            if found.isEmpty {
                logger.warning("the HA registration of this device is gone (deleted in HA?); registering it again", metadata: [
                    "device": "\(d.id)", "old_webhook": "\(row.webhookId.prefix(8))…",
                ])
                forget(d)
                register(d)
            } else if found.contains(where: { $0.state != "loaded" }) && d.notFoundRetries < 30 {
                // HA is still setting the entry up (it answers not_found until then): try again shortly.
                d.notFoundRetries += 1
                let g = generation
                server?.schedule(after: 2) { [weak self, weak d] in
                    guard let self, let d, self.generation == g, self.state == .ready else { return }
                    self.subscribe(d)
                }
            } else {
                // Loaded, yet our webhook_id is unknown: HA has another registration of this device. Replace it.
                logger.warning("HA's registration of this device is not the one lanpush stored; replacing it", metadata: ["device": "\(d.id)"])
                forget(d)
                removeEntries(found.map(\.id), of: d) { [weak self] in self?.register(d) }
            }
        }
    }

    /// Drops the stored registration (it is no longer valid in HA) before registering anew.
    private func forget(_ d: HomeAssistantDevice) {
        d.row = nil
        d.registration = .none
        core.journal.recordRegistrationRemoved(device: d.id)
    }

    /// `DELETE /api/config/config_entries/entry/<id>` for each (admin token needed), then `then` on the loop.
    private func removeEntries(_ ids: [String], of d: HomeAssistantDevice, then: @escaping () -> Void) {
        guard let first = ids.first, let http else { return then() }
        let bound = inbox.bound((self, d, then))
        let inbox = self.inbox
        http.send("DELETE", "\(settings.restBase)/config/config_entries/entry/\(first)") { response in
            inbox.post {
                let (link, d, then) = bound.value
                if response.status == 200 || response.status == 404 {
                    link.logger.info("removed a stale HA registration", metadata: ["device": "\(d.id)", "entry": "\(first)"])
                } else {
                    // Not fatal: the new registration still works; HA keeps a dangling entry for the same device.
                    link.logger.error("cannot remove a stale HA registration (needs an admin token)", metadata: [
                        "device": "\(d.id)", "entry": "\(first)", "answer": "\(response.summary)",
                    ])
                }
                link.removeEntries(Array(ids.dropFirst()), of: d, then: then)
            }
        }
    }

    private func appData(_ pushToken: String) -> JSONValue {
        var o: [String: JSONValue] = ["push_websocket_channel": true]
        if let url = settings.pushURL {
            o["push_url"] = .string(url)
            o["push_token"] = .string(pushToken)
        }
        return .object(o)
    }

    private func registrationFields(_ d: HomeAssistantDevice, pushToken: String) -> [String: JSONValue] {
        [
            "app_version": .string(LanpushVersion.current), "device_name": .string(d.name), "manufacturer": "lanpush",
            "model": "lanpush LAN device", "os_version": .string(LanpushVersion.current), "app_data": appData(pushToken),
        ]
    }

    /// `POST /api/mobile_app/registrations`. Only ever called after the config entry check.
    private func register(_ d: HomeAssistantDevice) {
        guard state == .ready, let http, d.row == nil else { return }
        let pushToken = StateDirectory.randomToken()
        // HA may post to the push_url as soon as the registration exists.
        core.directory.route(pushToken: pushToken, to: d.id)
        d.registration = .registering
        statusChanged(d)
        var body = registrationFields(d, pushToken: pushToken)
        body["device_id"] = .string(d.haDeviceId)
        body["app_id"] = .string(HomeAssistantSettings.appId)
        body["app_name"] = "lanpush"
        body["os_name"] = "lanpush"
        body["supports_encryption"] = false
        let name = d.name
        let pushURL = settings.pushURL ?? ""
        let bound = inbox.bound((self, d))
        let inbox = self.inbox
        http.send("POST", "\(settings.restBase)/mobile_app/registrations", body: .object(body)) { response in
            inbox.post {
                let (link, d) = bound.value
                link.registered(d, response: response, name: name, pushToken: pushToken, pushURL: pushURL)
            }
        }
    }

    private func registered(_ d: HomeAssistantDevice, response: JSONHTTPClient.Response, name: String, pushToken: String, pushURL: String) {
        guard response.status == 200 || response.status == 201, let webhookId = response.body?["webhook_id"]?.stringValue,
            !webhookId.isEmpty
        else {
            // Retried through the entry check: if HA did register it (an answer lost), that entry is replaced.
            d.registration = .error
            return fail(d, "registration failed: \(response.summary)", retryIn: 30)
        }
        let now = core.clock()
        let row = HARegistrationRow(
            deviceId: d.id, haDeviceId: d.haDeviceId, webhookId: webhookId, deviceName: name, pushToken: pushToken,
            pushURL: pushURL, haURL: settings.baseURL, registeredAt: now, updatedAt: now)
        d.row = row
        d.registration = .registered
        d.lastError = nil
        core.metrics.haRegistrations.increment()
        core.journal.recordRegistration(row)
        logger.info("registered with Home Assistant", metadata: [
            "device": "\(d.id)", "device_name": "\(name)", "notify_service": "\(d.notifyService)",
        ])
        statusChanged(d)
        if state == .ready {
            if name != d.name { updateRegistration(d) }
            subscribe(d)
        }
    }

    /// The mobile_app webhook's `update_registration` (the device's name or push_url changed): HA renames the
    /// device and reloads notify, so the service becomes `notify.mobile_app_<new name>`. Same webhook_id.
    private func updateRegistration(_ d: HomeAssistantDevice) {
        guard let row = d.row, let http, d.registration != .updating else { return }
        d.registration = .updating
        statusChanged(d)
        let name = d.name
        let pushURL = settings.pushURL ?? ""
        let body: JSONValue = ["type": "update_registration", "data": .object(registrationFields(d, pushToken: row.pushToken))]
        let bound = inbox.bound((self, d))
        let inbox = self.inbox
        http.send("POST", "\(settings.restBase)/webhook/\(row.webhookId)", body: body) { response in
            inbox.post {
                let (link, d) = bound.value
                // HA answers an unknown webhook with 200 and no body: success is the registration echoed back.
                guard response.status == 200, response.body?["device_name"]?.stringValue == name, var row = d.row else {
                    d.registration = d.row == nil ? .none : .registered
                    d.lastError = "update_registration failed: \(response.summary)"
                    link.logger.error("HA-native mode: update_registration failed", metadata: [
                        "device": "\(d.id)", "answer": "\(response.summary)",
                    ])
                    link.statusChanged(d)
                    return
                }
                row.deviceName = name
                row.pushURL = pushURL
                row.updatedAt = link.core.clock()
                d.row = row
                d.registration = .registered
                link.core.journal.recordRegistration(row)
                link.logger.info("updated the HA registration", metadata: [
                    "device": "\(d.id)", "device_name": "\(name)", "notify_service": "\(d.notifyService)",
                ])
                link.statusChanged(d)
                if name != d.name || pushURL != (link.settings.pushURL ?? "") { link.updateRegistration(d) }
            }
        }
    }

    // MARK: Channel

    private func subscribe(_ d: HomeAssistantDevice) {
        guard state == .ready, let row = d.row, d.channel != .subscribing, d.channel != .subscribed else { return }
        setChannel(d, .subscribing)
        send("mobile_app/push_notification_channel", ["webhook_id": .string(row.webhookId), "support_confirm": true],
             as: .subscribe(d.id))
    }

    private func resubscribe(_ d: HomeAssistantDevice) {
        if let old = d.subscriptionId {
            subscriptions.removeValue(forKey: old)
            send("unsubscribe_events", ["subscription": .number(Double(old))], as: .unsubscribe)
            d.subscriptionId = nil
        }
        setChannel(d, .down)
        subscribe(d)
    }

    private func handleEvent(_ event: [String: JSONValue], device d: HomeAssistantDevice) {
        core.metrics.haEvents.increment()
        d.events += 1
        d.lastEventAt = core.clock()
        let confirmId = event["hass_confirm_id"]?.stringValue
        switch apply(event, device: d) {
        case .applied(let delivered):
            logger.debug("notification from Home Assistant", metadata: ["device": "\(d.id)", "path": "\(delivered ? "lan" : "relay")"])
        case .duplicate:
            core.metrics.haEventsDuplicate.increment()
        case .rejected(let error):
            // Confirmed all the same: left unconfirmed, HA would post it to the push_url (rejected there too)
            // and drop the channel. Nothing of it reached a client, the store or the relay.
            d.rejected += 1
            core.metrics.haEventsRejected.increment()
            logger.warning("invalid notification from Home Assistant", metadata: [
                "device": "\(d.id)", "field": "\(error.field)", "error": "\(error.description)",
            ])
        }
        guard let confirmId, let webhookId = d.row?.webhookId else { return }
        d.pendingConfirms += 1
        let g = generation
        // Confirm once it is committed: it is then stored and with the device's sessions (or, with none live,
        // on the relay path) — the same point at which the HTTP ingest answers.
        core.journal.whenCommitted { [weak self, weak d] committed in
            guard let self, let d, self.generation == g, self.connection != nil else { return }
            guard committed else {
                d.pendingConfirms = max(0, d.pendingConfirms - 1)
                self.logger.error("not confirming a notification the store could not commit: HA will post it to the push_url", metadata: ["device": "\(d.id)"])
                // HA tears the channel down when it falls back (10 s): subscribe again after that.
                self.server?.schedule(after: 11) { [weak self, weak d] in
                    guard let self, let d, self.generation == g, self.state == .ready else { return }
                    self.resubscribe(d)
                }
                return
            }
            self.send("mobile_app/push_notification_confirm", ["webhook_id": .string(webhookId), "confirm_id": .string(confirmId)],
                      as: .confirm(d.id))
        }
    }

    /// Tells observers that a device's HA registration or channel changed.
    private func statusChanged(_ d: HomeAssistantDevice) {
        if let device = core.directory[d.id] { core.report.announce(device) }
    }

    private enum EventOutcome {
        /// Accepted and applied; `delivered`: a live LAN session carries it (else the relay path does, or it waits).
        case applied(delivered: Bool)
        /// Its `hass_confirm_id` was accepted within the window (through the push_url fallback, or a re-send).
        case duplicate
        /// Invalid, or it needs relay credentials the device lacks: nothing reached a client, the store or the relay.
        case rejected(FieldError)
    }

    /// One event of the device's channel, through the same ingest as every other door.
    private func apply(_ event: [String: JSONValue], device d: HomeAssistantDevice) -> EventOutcome {
        let request: IngestRequest
        do {
            request = try IngestRequest.homeAssistant(event, device: d.id, webhookId: d.row?.webhookId, now: core.clock())
        } catch {
            core.metrics.reject("validation")
            return .rejected(error)
        }
        switch core.ingest.submit(request) {
        case .duplicate:
            return .duplicate
        case .proxied:
            return .applied(delivered: false)
        case .routed(let results):
            guard let routed = results.first?.routed else { return .applied(delivered: false) }
            if routed.refused {
                core.metrics.reject("no_relay")
                return .rejected(IngestEndpoints.noRelay(request.command, device: d.id, field: "message"))
            }
            return .applied(delivered: routed.lan == .delivered)
        }
    }
}
