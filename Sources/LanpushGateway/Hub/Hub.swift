import Foundation
import LanpushCore
import LanpushStore
import Logging

/// The gateway's state: every device's ledger, every session, the push_token routes.
///
/// Owned by the lws service thread: every method runs on it, so nothing here takes a lock. Other threads
/// reach it only through `LoopInbox` (enqueue + `lws_cancel_service`).
final class Hub {
    let config: GatewayConfig
    let clock: () -> Double
    let logger: Logger
    let metrics: GatewayMetrics
    var devices: [String: DeviceRecord] = [:]
    var deviceByToken: [String: String] = [:]
    var deviceByPushToken: [String: String] = [:]
    var sessions: [UInt64: StreamSession] = [:]
    /// The subscribed observer sessions (preview, `lanpush watch`): every change goes to them too, and
    /// walking all sessions per change cost ~4 % of the CPU with 1,000 device sessions.
    var observerIDs: Set<UInt64> = []
    var counters: RateLimitCounters
    /// `hass_confirm_id`s accepted in the last 60 s: HA re-posts after a local-push confirm timeout.
    var recentConfirmIds: [String: Double] = [:]
    /// The relay path's pacer (Hub+Relay) and how its requests leave (nil: relay off, e.g. unit tests).
    var relayPacer: RelayPacer
    var relayTransport: RelayTransport?
    /// push_token|tag pairs of unregistered tokens whose start went to the relay (so the next is an update).
    var unknownTokenActivities = Set<String>()
    var unknownTokenSeq: UInt64 = 0
    var persistedOutboxGeneration: UInt64 = 0
    /// The epoch given to devices whose sequence could not be trusted at start (new, or an unclean stop).
    let epoch: String
    /// Store ops recorded since the last commit (see Hub+Journal).
    var pendingOps: [StoreOp] = []
    /// Sends ops to the group-commit writer; `nil` when the store is off. The completion runs on the loop.
    let persist: (([StoreOp], ((Bool) -> Void)?) -> Void)?

    /// `stored`: what the store held at start; `unclean`: the previous run did not stop cleanly, so every
    /// device starts a new epoch (clients resuming get a snapshot, no seq is reused with other content).
    init(
        config: GatewayConfig, clock: @escaping () -> Double, logger: Logger, metrics: GatewayMetrics,
        stored: StoredState? = nil, persist: (([StoreOp], ((Bool) -> Void)?) -> Void)? = nil
    ) {
        self.config = config
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        self.persist = persist
        self.counters = RateLimitCounters(maximum: config.relay.quota)
        var limits = RelayLimits(
            minUpdateInterval: config.relay.minUpdateInterval, startsPerHour: config.relay.startsPerHour,
            quotaReserve: config.relay.quotaReserve)
        limits.quotaFloor = min(limits.quotaFloor, config.relay.quotaReserve / 5)
        self.relayPacer = RelayPacer(limits: limits)
        self.epoch = UUID().uuidString.lowercased()
        let unclean = stored?.wasUnclean ?? false
        for d in config.devices {
            let row = stored?.devices[d.id]
            let ledger = DeviceLedger(
                deviceId: d.id, epoch: row.map { unclean ? epoch : $0.epoch } ?? epoch, seq: row?.seq ?? 0,
                activities: stored?.activities[d.id] ?? [], notifications: stored?.notifications[d.id] ?? [],
                notificationQueueBytes: config.limits.notificationQueueBytes)
            let device = DeviceRecord(id: d.id, name: d.name, ledger: ledger)
            device.notifications = d.notifications
            if let row {
                if let token = row.pushToken {
                    device.registration = .init(pushToken: token, pushURL: row.pushURL, registrationInfo: row.registrationInfo)
                    deviceByPushToken[token] = d.id
                }
                device.liveActivityTokens = row.liveActivityTokens
                device.pushToStartToken = row.pushToStartToken
                device.lastSeen = row.lastSeen
            }
            devices[d.id] = device
            deviceByToken[d.token] = d.id
            journalDevice(device)
        }
        restoreOutbox(stored?.outbox ?? [])
    }

    // MARK: Fan-out

    /// Hands accepted changes of one device to its sessions and to observers.
    func fanOut(_ changes: [Change], device id: String) {
        guard !changes.isEmpty, let device = devices[id] else { return }
        journal(changes, device: device)
        metrics.eventsIn.increment(by: Int64(changes.count))
        for sid in device.sessions {
            guard let session = sessions[sid], session.coalescers[id] != nil else { continue }
            for change in changes where session.coalescers[id]!.note(change) { metrics.coalesced.increment() }
            session.transport.requestWritable()
        }
        for oid in observerIDs {
            guard let session = sessions[oid], session.coalescers[id] != nil else { continue }
            for change in changes { session.coalescers[id]!.note(change) }
            session.transport.requestWritable()
        }
    }

    /// Whether a gone device's traffic would reach the relay (a registered push token that is still valid).
    func relayReachable(_ device: DeviceRecord) -> Bool {
        relayURL(for: device) != nil && !relayPacer.invalidTokenDevices.contains(device.id)
    }

    // MARK: Writing

    /// Sends what a session has due while its socket can take it: control frames first, then events.
    func writable(_ session: StreamSession) {
        let now = clock()
        while !session.transport.isChoked {
            if !session.control.isEmpty {
                let bytes = session.control.removeFirst()
                guard session.transport.send(bytes) else { return }
                metrics.bytesOut.increment(by: Int64(bytes.count))
                continue
            }
            if let (code, reason) = session.pendingClose {
                session.closing = true
                session.transport.close(code: code, reason: reason)
                return
            }
            guard session.subscribed, let frame = nextFrame(for: session, now: now) else { break }
            guard session.transport.send(frame) else { return }
            metrics.framesOut.increment()
            metrics.bytesOut.increment(by: Int64(frame.count))
        }
    }

    private func nextFrame(for session: StreamSession, now: Double) -> [UInt8]? {
        switch session.role {
        case .pending:
            return nil
        case .device(let id):
            guard session.coalescers[id] != nil, let device = devices[id] else { return nil }
            if let event = session.coalescers[id]!.next(ledger: &device.ledger, now: now) {
                return event.json.serializedBytes()
            }
            if let seq = session.coalescers[id]!.takeSynced(ledger: device.ledger) {
                return JSONValue.object(["type": "synced", "seq": .number(Double(seq))]).serializedBytes()
            }
            return nil
        case .observer:
            for id in session.coalescers.keys.sorted() {
                guard session.coalescers[id] != nil, let device = devices[id] else { continue }
                let event = session.coalescers[id]!.next(ledger: &device.ledger, now: now)
                if let event { session.coalescers[id]!.acknowledge(event.seq) }  // observers never ack for a device
                let synced = event == nil ? session.coalescers[id]!.takeSynced(ledger: device.ledger) : nil
                if let event, case .object(var o) = event.json {
                    o["device_id"] = .string(id)
                    return JSONValue.object(o).serializedBytes()
                }
                if let synced {
                    return JSONValue.object(["type": "synced", "seq": .number(Double(synced)), "device_id": .string(id)])
                        .serializedBytes()
                }
            }
            return nil
        }
    }

    // MARK: Sessions

    func close(_ session: StreamSession, code: UInt16, reason: String) {
        guard !session.closing, session.pendingClose == nil else { return }
        logger.info("closing session", metadata: sessionMetadata(session, ["code": "\(code)", "reason": "\(reason)"]))
        if session.control.isEmpty {
            session.closing = true
            session.transport.close(code: code, reason: reason)
        } else {
            session.pendingClose = (code, reason)
            session.transport.requestWritable()
        }
    }

    func sessionMetadata(_ session: StreamSession, _ extra: Logger.Metadata = [:]) -> Logger.Metadata {
        var m: Logger.Metadata = ["session": "\(session.id)", "peer": "\(session.transport.peer)"]
        switch session.role {
        case .pending: m["role"] = "pending"
        case .device(let id): m["device"] = "\(id)"
        case .observer(let d): m["observer"] = "\(d ?? "*")"
        }
        return m.merging(extra) { _, new in new }
    }

    // MARK: Time

    /// Runs on a timer on the loop thread: ack timeouts, auth timeouts, lifecycle transitions, dedupe expiry.
    func tick() {
        let now = clock()
        for session in sessions.values where !session.closing {
            switch session.role {
            case .pending:
                if now - session.openedAt > 10 { close(session, code: 4001, reason: "auth timeout") }
            case .device(let id):
                if let sent = session.coalescers[id]?.oldestUnacknowledgedSentAt, now - sent > config.session.ackTimeout {
                    close(session, code: 4002, reason: "ack timeout")
                }
            case .observer:
                break
            }
        }
        for device in devices.values {
            guard let deadline = device.ledger.nextDeadline, deadline <= now else { continue }
            fanOut(device.ledger.advance(to: now), device: device.id)
            // Housekeeping: dismissed activities leave the ledger and the store (sessions that still show one
            // were just sent the dismissal; a missing activity reads as dismissed to every coalescer).
            let removed = device.ledger.pruneDismissed()
            journalRemovedActivities(device, tags: removed)
            for tag in removed { device.relayBodies.removeValue(forKey: tag) }
        }
        pumpRelay()
        if !recentConfirmIds.isEmpty { recentConfirmIds = recentConfirmIds.filter { now - $0.value < 60 } }
    }
}
