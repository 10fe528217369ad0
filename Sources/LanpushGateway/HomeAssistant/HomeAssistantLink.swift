import LanpushCore
import LanpushLWS
import LanpushStore
import Logging

/// HA-native mode: every exposed lanpush device is a `mobile_app` device of Home Assistant — so HA has a
/// `notify.mobile_app_<device>` service per device — and lanpush receives those notifications over HA's local push
/// channel. Loop thread only.
///
/// The link wires its parts and says what follows what:
/// - `HomeAssistantConnection`: the websocket to `/api/websocket` (auth, "HA is running", reconnects);
/// - `HomeAssistantRegistrar`: each device's mobile_app registration (kept, updated, or checked and made);
/// - `HomeAssistantChannel`: each registration's local push channel (events through `Ingest`, confirms);
/// - `HomeAssistantSensorSync`: each device's entities (what `GET /v1/devices` says of it), through its webhook;
/// - `HomeAssistantLiveActivities`: HA's own Live Activity bookkeeping, for an HA that has it.
///
/// Connection ready → every exposed device is reconciled, devices no longer exposed get their entities
/// `unavailable`, devices removed from lanpush's config leave HA; a device added or removed at run time (the API,
/// pairing) is registered or leaves HA at once (at the next connection when HA is away); registered → its channel
/// subscribes and its sensors register; a subscription HA answers "not found" → the registrar looks before registering again; a
/// device's state changes (`DeviceEvents`) → its sensors update; a client's report → the bookkeeping; connection
/// lost → every channel is down until the next connection is ready.
final class HomeAssistantLink: HomeAssistantConnectionDelegate, HomeAssistantLinkContext {
    let settings: HomeAssistantSettings
    let core: GatewayCore
    let logger: Logger
    let connection: HomeAssistantConnection
    /// `nil` without a token: the link reports it and never connects.
    private let parts: Parts?
    /// Exposed devices, config order.
    private(set) var devices: [HomeAssistantDevice] = []
    /// Devices with a stored registration that are no longer exposed (their entities go `unavailable`).
    private var unexposed: [HomeAssistantDevice] = []
    /// Stored registrations of devices no longer in lanpush's config (they leave HA).
    private var removed: [HARegistrationRow]

    private struct Parts {
        let rest: HomeAssistantREST
        let registrar: HomeAssistantRegistrar
        let channel: HomeAssistantChannel
        let sensors: HomeAssistantSensorSync
        let liveActivities: HomeAssistantLiveActivities
    }

    /// The connection's state (shown per device in `GET /v1/devices`).
    var state: HomeAssistantConnection.State { connection.state }
    var haVersion: String? { connection.haVersion }
    var lastError: String? { connection.lastError }

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
        var logger = logger
        logger[metadataKey: "component"] = "home_assistant"
        let connection = HomeAssistantConnection(
            settings: settings, server: server, inbox: inbox, metrics: core.metrics, logger: logger)
        let link = HomeAssistantLink(settings: settings, core: core, connection: connection, inbox: inbox, logger: logger, stored: stored)
        server.configureWebSocketClients(WSClientOptions(pingInterval: 20, pingTimeout: 10, connectTimeout: 10))
        server.schedule(after: 0) { [weak link] in link?.begin() }
        return link
    }

    private init(
        settings: HomeAssistantSettings, core: GatewayCore, connection: HomeAssistantConnection, inbox: LoopInbox,
        logger: Logger, stored: [String: HARegistrationRow]
    ) {
        self.settings = settings
        self.core = core
        self.logger = logger
        self.connection = connection
        if let rest = HomeAssistantREST(settings: settings, inbox: inbox) {
            let registrar = HomeAssistantRegistrar(settings: settings, connection: connection, rest: rest, core: core, logger: logger)
            parts = Parts(
                rest: rest, registrar: registrar, channel: HomeAssistantChannel(connection: connection, core: core, logger: logger),
                sensors: HomeAssistantSensorSync(
                    connection: connection, rest: rest, core: core, interval: settings.sensorInterval, logger: logger),
                liveActivities: HomeAssistantLiveActivities(
                    connection: connection, rest: rest, registrar: registrar, core: core, logger: logger))
        } else {
            parts = nil
        }
        removed = stored.values.filter { core.directory[$0.deviceId] == nil }.sorted { $0.deviceId < $1.deviceId }
        for record in core.directory.sorted { attach(record, row: stored[record.id]) }
        // The config file's in its order, then the devices added through the API (the directory's id order).
        let order = { (id: String) in settings.deviceIds.firstIndex(of: id) ?? Int.max }
        devices = devices.enumerated()
            .sorted { (order($0.element.id), $0.offset) < (order($1.element.id), $1.offset) }
            .map(\.element)
        connection.delegate = self
        parts?.registrar.context = self
        parts?.channel.context = self
        parts?.sensors.context = self
        parts?.liveActivities.context = self
        core.events.onChange = { [weak self] record in self?.deviceChanged(record) }
        core.events.onReport = { [weak self] record, report in self?.reported(report, by: record) }
        core.events.onAdded = { [weak self] record in self?.added(record) }
        core.events.onRemoved = { [weak self] record in self?.removed(record) }
    }

    /// Makes `record` known to HA-native mode: exposed (registered, subscribed, with sensors) or, with a stored
    /// registration, kept in HA with its entities `unavailable`.
    @discardableResult
    private func attach(_ record: DeviceRecord, row: HARegistrationRow?) -> HomeAssistantDevice {
        let exposed = settings.exposes(record.id)
        let device = HomeAssistantDevice(id: record.id, name: record.name, exposed: exposed, row: row)
        record.homeAssistant = device
        device.link = self
        if exposed {
            devices.append(device)
        } else if device.row != nil {
            unexposed.append(device)
        }
        return device
    }

    private func begin() {
        logger.info("HA-native mode on", metadata: [
            "url": "\(settings.baseURL)", "websocket": "\(settings.websocketURL)", "token": "\(settings.tokenSource)",
            "devices": "\(settings.deviceIds.joined(separator: ","))", "push_url": "\(settings.pushURL ?? "none")",
        ])
        if settings.pushURL == nil {
            logger.warning("HA-native mode: no push_url (HA is not on this host and `listen` is a wildcard): HA has only the local push channel; set home_assistant.push_url to an address HA can reach lanpush at")
        }
        guard parts != nil else {
            let why = "no token: set home_assistant.token (a long-lived access token)"
                + (settings.isSupervisor ? " or run as an add-on with homeassistant_api (SUPERVISOR_TOKEN)" : "")
            logger.error("HA-native mode: \(why)")
            connection.refuse(why)
            for d in devices {
                d.lastError = why
                d.channel = .error
            }
            return
        }
        connection.start()
    }

    // MARK: HomeAssistantConnectionDelegate

    func connectionAuthenticated(_ connection: HomeAssistantConnection) {
        for d in devices where d.row != nil { parts?.channel.set(d, .waiting) }
    }

    func connectionReady(_ connection: HomeAssistantConnection) {
        guard let parts else { return }
        parts.registrar.reconcile(devices)
        for d in unexposed { parts.sensors.markUnavailable(d) }
        parts.registrar.retire(removed) { [weak self] row in self?.removed.removeAll { $0.deviceId == row.deviceId } }
    }

    func connectionLost(_ connection: HomeAssistantConnection) {
        if let error = connection.lastError, error.hasPrefix("auth_invalid") {
            for d in devices { d.lastError = error }
        }
        parts?.sensors.lost()
        for d in devices {
            parts?.channel.lost(d)
            statusChanged(d)
        }
    }

    func connectionStopped(_ connection: HomeAssistantConnection) {
        parts?.rest.shutdown()
    }

    // MARK: HomeAssistantLinkContext

    /// Tells observers that a device's HA registration or channel changed.
    func statusChanged(_ d: HomeAssistantDevice) {
        core.metrics.haChannels.record(devices.reduce(0) { $0 + ($1.channel == .subscribed ? 1 : 0) })
        if let device = core.directory[d.id] { core.report.announce(device) }
    }

    func failed(_ d: HomeAssistantDevice, _ why: String, retryIn seconds: Double) {
        logger.error("HA-native mode: \(why)", metadata: ["device": "\(d.id)"])
        d.lastError = why
        if d.row == nil { d.registration = .error }
        parts?.channel.set(d, .error)
        connection.later(seconds) { [weak self, weak d] in
            guard let self, let d else { return }
            self.parts?.registrar.reconcile([d])
        }
    }

    func registered(_ d: HomeAssistantDevice) {
        parts?.channel.subscribe(d)
        parts?.sensors.start(d)
    }

    func registrationMissing(_ d: HomeAssistantDevice) {
        parts?.registrar.verify(d)
    }

    // MARK: What the gateway's core reports

    private func deviceChanged(_ record: DeviceRecord) {
        guard let d = record.homeAssistant, d.exposed else { return }
        parts?.sensors.changed(d)
    }

    /// A device added at run time (the API, pairing) becomes HA's as one of the config file would at the next start:
    /// registered now when HA is connected, else when it is.
    private func added(_ record: DeviceRecord) {
        // A removal of the same id not yet done in HA: the registration's own check finds and replaces what is left.
        removed.removeAll { $0.deviceId == record.id }
        let d = attach(record, row: nil)
        guard d.exposed, parts != nil else { return }
        logger.info("device added: registering it with HA", metadata: ["device": "\(d.id)"])
        parts?.registrar.reconcile([d])
    }

    /// A device removed at run time leaves HA too (its mobile_app device, notify action and entities), now when HA is
    /// connected, else at the next connection.
    private func removed(_ record: DeviceRecord) {
        guard let d = record.homeAssistant else { return }
        record.homeAssistant = nil
        devices.removeAll { $0 === d }
        unexposed.removeAll { $0 === d }
        parts?.channel.lost(d)
        guard let row = d.row else { return }
        removed.append(row)
        guard connection.state == .ready else { return }
        parts?.registrar.retire([row]) { [weak self] row in self?.removed.removeAll { $0.deviceId == row.deviceId } }
    }

    private func reported(_ report: DeviceEvents.Report, by record: DeviceRecord) {
        guard let d = record.homeAssistant, d.exposed else { return }
        parts?.liveActivities.report(report, device: d)
    }
}
