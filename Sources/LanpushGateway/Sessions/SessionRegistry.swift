import LanpushCore
import Logging

/// Every open lanpush.v1 session, and the fan-out of a device's changes to them. Loop thread only.
final class SessionRegistry {
    private(set) var sessions: [UInt64: StreamSession] = [:]
    /// The subscribed observer sessions (preview, `lanpush watch`): every change goes to them too. Kept apart so a
    /// change does not walk every session (that cost ~4 % of the CPU with 1,000 device sessions).
    private(set) var observerIDs: Set<UInt64> = []
    /// The sessions a timeout may close: pending ones (auth) and device sessions that were sent a frame with none in
    /// flight (ack). The housekeeping tick walks these, not every session — walking 1,000 idle sessions four times a
    /// second held the loop ~0.4 ms each time — and lets go of those with nothing left to time.
    private(set) var timed: Set<UInt64> = []
    /// Sessions that have not authenticated yet, per peer address: bounded per address
    /// (`limits.unauthenticated_per_address`), and not counted toward `limits.max_sessions`, so sockets that never
    /// authenticate cannot keep a device out.
    private(set) var pendingByPeer: [String: Int] = [:]
    private(set) var pendingCount = 0
    let metrics: GatewayMetrics
    let counters: TurnCounters
    let events: DeviceEvents
    let logger: Logger

    init(metrics: GatewayMetrics, counters: TurnCounters, events: DeviceEvents, logger: Logger) {
        self.metrics = metrics
        self.counters = counters
        self.events = events
        self.logger = logger
    }

    subscript(id: UInt64) -> StreamSession? { sessions[id] }

    var count: Int { sessions.count }

    /// Sessions past their `auth`: what `limits.max_sessions` bounds.
    var authenticatedCount: Int { sessions.count - pendingCount }

    /// A new session, not yet authenticated.
    func add(_ session: StreamSession) {
        sessions[session.id] = session
        timed.insert(session.id)
        pendingByPeer[session.transport.peer, default: 0] += 1
        pendingCount += 1
        metrics.sessions.record(sessions.count)
    }

    /// The session authenticated (its role is no longer `pending`).
    func authenticated(_ session: StreamSession) {
        guard session.countedPending else { return }
        session.countedPending = false
        releasePending(session.transport.peer)
    }

    private func releasePending(_ peer: String) {
        pendingCount -= 1
        if let n = pendingByPeer[peer], n > 1 { pendingByPeer[peer] = n - 1 } else { pendingByPeer.removeValue(forKey: peer) }
    }

    /// A session now has something a timeout counts on (its first frame in flight).
    func time(_ session: StreamSession) {
        timed.insert(session.id)
    }

    /// A session has nothing a timeout counts on any more.
    func untime(_ id: UInt64) {
        timed.remove(id)
    }

    /// Removes a closed session; returns it (nil when it was not here).
    func remove(_ id: UInt64) -> StreamSession? {
        guard let session = sessions.removeValue(forKey: id) else { return nil }
        if session.countedPending { releasePending(session.transport.peer) }
        observerIDs.remove(id)
        timed.remove(id)
        metrics.sessions.record(sessions.count)
        metrics.sessionsClosed.increment()
        return session
    }

    func addObserver(_ session: StreamSession) {
        observerIDs.insert(session.id)
    }

    /// The observer sessions that watch `device` (all of them, or that one device).
    func observers(of device: String) -> [StreamSession] {
        observerIDs.compactMap { sessions[$0] }.filter { session in
            guard case .observer(let scope, _) = session.role else { return false }
            return scope == nil || scope == device
        }
    }

    /// Hands accepted changes of one device to its sessions and to observers; each asks to write.
    func fanOut(_ changes: [Change], device: DeviceRecord) {
        guard !changes.isEmpty else { return }
        counters.eventsIn += changes.count
        let id = device.id
        for sid in device.sessions {
            guard let session = sessions[sid], let merged = session.withCoalescer(id, { $0.note(changes) }) else {
                continue
            }
            counters.coalesced += merged
            session.transport.requestWritable()
        }
        for oid in observerIDs {
            guard let session = sessions[oid], session.withCoalescer(id, { $0.note(changes) }) != nil else { continue }
            session.transport.requestWritable()
        }
        // Every accepted change of a device passes here: its activities or queued notifications may have changed.
        events.changed(device)
    }

    /// Whether a session of `device`, or an observer following it, still owes its client the end of `tag`
    /// (`Coalescer.owesEnd`).
    func oweEnd(of tag: String, on device: DeviceRecord) -> Bool {
        device.sessions.contains { sessions[$0]?.withCoalescer(device.id) { $0.owesEnd(of: tag) } == true }
            || observerIDs.contains { sessions[$0]?.withCoalescer(device.id) { $0.owesEnd(of: tag) } == true }
    }

    /// Tells observers a device's sessions, path or registration changed: `{"type":"device","device_id",...}`, each
    /// built once for the observers that may see it (admin, or viewer: relay credentials redacted).
    func announce(admin: () -> JSONValue, viewer: () -> JSONValue, of device: String) {
        let observers = observers(of: device)
        guard !observers.isEmpty else { return }
        var frames: [Bool: JSONValue] = [:]
        for observer in observers {
            guard case .observer(_, let isAdmin) = observer.role else { continue }
            if frames[isAdmin] == nil {
                guard case .object(var o) = isAdmin ? admin() : viewer() else { continue }
                o["type"] = "device"
                o["device_id"] = .string(device)
                frames[isAdmin] = .object(o)
            }
            observer.queueControl(frames[isAdmin]!)
        }
    }

    /// Tells observers a device is gone: `{"type":"device","device_id","removed":true}`.
    func announceRemoved(_ device: String) {
        for observer in observers(of: device) {
            observer.queueControl(["type": "device", "device_id": .string(device), "removed": true])
        }
    }

    /// Closes a session once the control frames queued ahead of the close (e.g. `auth_invalid`) are out.
    func close(_ session: StreamSession, code: CloseCode, reason: String) {
        guard !session.closing, session.pendingClose == nil else { return }
        logger.info("closing session", metadata: session.metadata(["code": "\(code.rawValue)", "reason": "\(reason)"]))
        if session.control.isEmpty {
            session.closing = true
            session.transport.close(code: code.rawValue, reason: reason)
        } else {
            session.pendingClose = (code.rawValue, reason)
            session.transport.requestWritable()
        }
    }
}
