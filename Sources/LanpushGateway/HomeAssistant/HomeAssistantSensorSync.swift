import LanpushCore
import Logging

/// Keeps each exposed device's entities in HA equal to what lanpush sees (`HomeAssistantSensor`), through the
/// device's own mobile_app webhook. Loop thread only.
///
/// - Registered (`register_sensor`, one call per sensor) whenever the device's registration is (re)confirmed on a new
///   connection: HA's entities then exist and show the current values after a restart of either side, under the
///   same unique ids (no duplicates).
/// - Then updated when something changes (`DeviceEvents.changed`), with only the sensors that differ from what HA
///   holds, at most once per `home_assistant.sensor_interval` (`SensorThrottle`): never polled.
/// - A sensor HA answers `not_registered` (deleted by the user, or an update that overtook its registration) is
///   registered again. One webhook call per device in flight at a time.
/// - A device that has a registration but is no longer exposed gets every entity `unavailable`, once per connection.
final class HomeAssistantSensorSync {
    private let connection: HomeAssistantConnection
    private let rest: HomeAssistantREST
    private let core: GatewayCore
    private let interval: Double
    private let logger: Logger
    weak var context: HomeAssistantLinkContext?
    private var states: [String: DeviceState] = [:]
    private var nextEpoch = 0

    private struct DeviceState {
        /// Identifies this state in answers: one that comes back after the state was replaced is dropped.
        let epoch: Int
        let webhookId: String
        let generation: Int
        var published: [HomeAssistantSensor: SensorValue] = [:]
        var throttle: SensorThrottle
        var registered = false
        var busy = false
        /// The relay quota reset time a re-check is scheduled for.
        var resetCheck: Double?
    }

    init(connection: HomeAssistantConnection, rest: HomeAssistantREST, core: GatewayCore, interval: Double, logger: Logger) {
        self.connection = connection
        self.rest = rest
        self.core = core
        self.interval = interval
        self.logger = logger
    }

    /// The device's registration holds on this connection: register its sensors (once per connection and webhook).
    func start(_ d: HomeAssistantDevice) {
        guard connection.state == .ready, let row = d.row else { return }
        if let s = states[d.id], s.webhookId == row.webhookId, s.generation == connection.generation { return }
        nextEpoch += 1
        states[d.id] = DeviceState(
            epoch: nextEpoch, webhookId: row.webhookId, generation: connection.generation, throttle: SensorThrottle(interval: interval))
        register(d, HomeAssistantSensor.allCases)
    }

    /// The connection is gone: everything is registered again on the next one (HA may have restarted meanwhile).
    func lost() {
        states.removeAll()
    }

    /// Something of the device may have changed: an update goes when the throttle allows.
    func changed(_ d: HomeAssistantDevice) {
        guard var s = states[d.id], s.registered, let at = s.throttle.changed(at: core.clock()) else { return }
        states[d.id] = s
        let epoch = s.epoch
        connection.later(max(0, at - core.clock())) { [weak self, weak d] in
            guard let self, let d, self.states[d.id]?.epoch == epoch else { return }
            self.flush(d)
        }
    }

    /// A device with a registration that is no longer exposed: its entities turn `unavailable` (HA keeps them, and
    /// the device, until the user deletes it there).
    func markUnavailable(_ d: HomeAssistantDevice) {
        guard let row = d.row else { return }
        let unavailable = DeviceSensorValues.unavailable.values
        let data = JSONValue.array(HomeAssistantSensor.allCases.map { $0.update(device: d.id, unavailable[$0]!) })
        rest.webhook(row.webhookId, "update_sensor_states", data) { [weak self, weak d] response in
            guard let self, let d else { return }
            let marked = HomeAssistantSensor.allCases.contains { response.body?[$0.uniqueId(device: d.id)]?["success"] == true }
            d.sensors = marked ? .unavailable : .none
            self.logger.info("device no longer exposed to HA: its sensors are unavailable", metadata: [
                "device": "\(d.id)", "answer": "\(response.summary)",
            ])
            self.context?.statusChanged(d)
        }
    }

    private func current(_ d: HomeAssistantDevice) -> DeviceSensorValues {
        guard let record = core.directory[d.id] else { return .unavailable }
        return DeviceSensorValues(status: core.report.json(record))
    }

    // MARK: Registering

    /// `register_sensor` for each of `sensors`, one after the other, with their current values.
    private func register(_ d: HomeAssistantDevice, _ sensors: [HomeAssistantSensor]) {
        guard var s = states[d.id] else { return }
        guard !s.busy else {
            let epoch = s.epoch
            connection.later(1) { [weak self, weak d] in
                guard let self, let d, self.states[d.id]?.epoch == epoch else { return }
                self.register(d, sensors)
            }
            return
        }
        s.busy = true
        states[d.id] = s
        d.sensors = .registering
        context?.statusChanged(d)
        registerNext(d, sensors[...], values: current(d), epoch: s.epoch)
    }

    private func registerNext(_ d: HomeAssistantDevice, _ left: ArraySlice<HomeAssistantSensor>, values: DeviceSensorValues, epoch: Int) {
        guard let webhookId = states[d.id]?.webhookId else { return }
        guard let sensor = left.first else {
            guard var s = states[d.id] else { return }
            s.busy = false
            s.registered = true
            scheduleResetCheck(d, &s, values)
            states[d.id] = s
            d.sensors = .registered
            d.sensorError = nil
            context?.statusChanged(d)
            logger.info("sensors registered with Home Assistant", metadata: ["device": "\(d.id)"])
            return changed(d)  // whatever changed while registering
        }
        let value = values.values[sensor]!
        rest.webhook(webhookId, "register_sensor", sensor.registration(device: d.id, value)) { [weak self, weak d] response in
            guard let self, let d, self.states[d.id]?.epoch == epoch else { return }
            // HA answers 201 {"success": true}; 200 {} is an unknown webhook_id (the registration is gone: the
            // channel's "not found" finds that out) or a payload it refused (its log says why).
            guard response.status == 201, response.body?["success"] == true else {
                self.states[d.id]?.busy = false
                self.failed(d, "register_sensor \(sensor.rawValue) failed: \(response.summary)")
                self.connection.later(30) { [weak self, weak d] in
                    guard let self, let d, self.states[d.id]?.epoch == epoch else { return }
                    self.register(d, Array(left))
                }
                return
            }
            self.core.metrics.haSensorCalls.increment()
            self.states[d.id]?.published[sensor] = value
            self.registerNext(d, left.dropFirst(), values: values, epoch: epoch)
        }
    }

    // MARK: Updating

    /// The throttle's time came: one `update_sensor_states` with what differs from what HA holds.
    private func flush(_ d: HomeAssistantDevice) {
        // Updates go to the webhook the sensors were registered with; a new registration registers them anew (`start`).
        guard var s = states[d.id], d.row?.webhookId == s.webhookId else { return }
        let now = core.clock()
        if s.busy {
            // The answer in flight calls `changed` again.
            s.throttle.fired(at: now, sent: false)
            states[d.id] = s
            return
        }
        let values = current(d)
        let changed = values.changed(since: s.published)
        s.throttle.fired(at: now, sent: !changed.isEmpty)
        scheduleResetCheck(d, &s, values)
        guard !changed.isEmpty else {
            states[d.id] = s
            return
        }
        s.busy = true
        states[d.id] = s
        let epoch = s.epoch
        let data = JSONValue.array(changed.map { $0.update(device: d.id, values.values[$0]!) })
        rest.webhook(s.webhookId, "update_sensor_states", data) { [weak self, weak d] response in
            guard let self, let d, self.states[d.id]?.epoch == epoch else { return }
            self.updated(d, changed, values: values, response: response)
        }
    }

    private func updated(
        _ d: HomeAssistantDevice, _ sent: [HomeAssistantSensor], values: DeviceSensorValues, response: HomeAssistantREST.Response
    ) {
        states[d.id]?.busy = false
        core.metrics.haSensorCalls.increment()
        var missing: [HomeAssistantSensor] = []
        for sensor in sent {
            let answer = response.body?[sensor.uniqueId(device: d.id)]
            if answer?["success"] == true {
                states[d.id]?.published[sensor] = values.values[sensor]
            } else if answer?["error"]?["code"]?.stringValue == "not_registered" {
                missing.append(sensor)
            }
        }
        let accepted = sent.count - missing.count
        if response.status == 200, accepted > 0, missing.isEmpty {
            d.sensorUpdates += 1
            d.sensorError = nil
            if d.sensors == .error {
                // An earlier update failed (HA restarting, a timeout): this one carried what it had.
                d.sensors = .registered
                context?.statusChanged(d)
            }
        } else if !missing.isEmpty {
            // Deleted in HA, or this update overtook its registration: register those again, a little later.
            logger.info("HA does not know some sensors; registering them again", metadata: [
                "device": "\(d.id)", "sensors": "\(missing.map(\.rawValue).joined(separator: ","))",
            ])
            let epoch = states[d.id]?.epoch
            connection.later(2) { [weak self, weak d] in
                guard let self, let d, self.states[d.id]?.epoch == epoch else { return }
                self.register(d, missing)
            }
            return
        } else {
            failed(d, "update_sensor_states failed: \(response.summary)")
        }
        changed(d)  // anything that changed meanwhile (or what failed) goes with the next update
    }

    private func failed(_ d: HomeAssistantDevice, _ why: String) {
        d.sensors = .error
        d.sensorError = why
        logger.warning("HA-native mode: \(why)", metadata: ["device": "\(d.id)"])
        context?.statusChanged(d)
    }

    /// The relay quota is forgotten when its reset time passes, with no event: look again then.
    private func scheduleResetCheck(_ d: HomeAssistantDevice, _ s: inout DeviceState, _ values: DeviceSensorValues) {
        guard let reset = values.nextReset, reset != s.resetCheck else { return }
        s.resetCheck = reset
        let epoch = s.epoch
        connection.later(max(0, reset - core.clock()) + 1) { [weak self, weak d] in
            guard let self, let d, self.states[d.id]?.epoch == epoch else { return }
            self.changed(d)
        }
    }
}
