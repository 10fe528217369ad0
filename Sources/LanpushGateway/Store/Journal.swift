import LanpushCore
import LanpushStore

/// What the loop's changes mean for the durable store. Loop thread only.
///
/// Every part of the gateway records its durable effects here as `StoreOp`s while a loop turn runs; whoever must
/// wait for them (an HTTP answer: accepted = committed; an HA confirm) asks with `whenCommitted`. The turn's end —
/// `endTurn()`, called in one place, the loop delegate — hands everything to the commit path (`CommitPath`) at once,
/// so no entry point can forget to persist what it changed.
final class Journal {
    /// Commits ops (`CommitPath`); the completion runs on the loop. `nil`: the store is off.
    typealias Persist = ([StoreOp], ((Bool) -> Void)?) -> Void

    private let persist: Persist?
    private var pending: [StoreOp] = []
    private var waiting: [(Bool) -> Void] = []
    /// Acknowledged notifications still to leave the store: per device, the newest seq to delete through, in the
    /// order first recorded. Nothing waits for a prune, so it rides with the next commit (or the housekeeping tick's)
    /// instead of costing its own transaction per acknowledgement. After a kill -9 inside that window they are still
    /// stored, and every client starts afresh after an unclean stop (a new epoch): they are sent once more, as a
    /// notification in flight at the kill is.
    private var prunes: [(device: String, through: UInt64)] = []
    private var pruneIndex: [String: Int] = [:]
    private var flushPrunes = false
    /// Per device, the ledger's count of notifications dropped for the queue's bound when last written here.
    private var dropsRecorded: [String: UInt64] = [:]
    /// Counts the loop's turns (each `endTurn`): what was recorded in one turn is committed together.
    private(set) var turn: UInt64 = 0

    /// Ops a quiet turn may leave room for (a few changes' worth; more is a burst's).
    static let idleCapacity = 16

    init(persist: Persist?) {
        self.persist = persist
    }

    var isEnabled: Bool { persist != nil }

    /// Ops recorded and not yet handed to the writer (tests read it).
    var pendingOps: [StoreOp] { pending }

    // MARK: Recording

    /// The durable effect of changes a device's ledger just made. Not the device row, although its seq moved: a
    /// row and a WAL frame more in every commit for a number the next start can take from what is stored (a clean
    /// stop writes every row, `GatewayCore.cleanStopOps`; after an unclean one each device starts a new epoch and goes
    /// on from the highest seq its rows hold, `StoredState.resumeSeqs`).
    func record(_ changes: [Change], of device: DeviceRecord) {
        guard isEnabled, !changes.isEmpty else { return }
        for change in changes {
            switch change.kind {
            case .start, .update, .end, .lifecycle:
                guard let tag = change.tag else { continue }
                if let activity = device.ledger.activities[tag] {
                    pending.append(.upsertActivity(deviceId: device.id, activity))
                } else {
                    pending.append(.deleteActivity(deviceId: device.id, tag: tag))
                }
            case .notification, .clear:
                guard let queued = device.ledger.notifications.last(where: { $0.seq == change.seq }) else { continue }
                pending.append(.insertNotification(deviceId: device.id, queued))
                let drops = device.ledger.droppedNotificationTotal
                if drops != dropsRecorded[device.id, default: 0], let first = device.ledger.notifications.first {
                    // The queue dropped its oldest entries to stay within its bound.
                    dropsRecorded[device.id] = drops
                    pending.append(.deleteNotifications(deviceId: device.id, through: first.seq - 1))
                }
            }
        }
    }

    func record(device: DeviceRecord) {
        guard isEnabled else { return }
        pending.append(.device(device.row))
    }

    func recordPrunedNotifications(of device: DeviceRecord, through seq: UInt64) {
        guard isEnabled, seq > 0 else { return }
        if let i = pruneIndex[device.id] {
            prunes[i].through = max(prunes[i].through, seq)
        } else {
            pruneIndex[device.id] = prunes.count
            prunes.append((device.id, seq))
        }
    }

    /// Prunes still held go with this turn's commit even when nothing else does (the housekeeping tick, a stop).
    func flushPrunesAtTurnEnd() {
        flushPrunes = true
    }

    func recordRemovedActivities(of device: DeviceRecord, tags: [String]) {
        guard isEnabled else { return }
        for tag in tags { pending.append(.deleteActivity(deviceId: device.id, tag: tag)) }
    }

    func recordOutbox(_ rows: [OutboxRow]) {
        guard isEnabled else { return }
        pending.append(.replaceOutbox(rows))
    }

    func recordManaged(_ device: DeviceRecord, createdAt: Double) {
        guard isEnabled, device.source == .api else { return }
        pending.append(.managedDevice(ManagedDeviceRow(
            id: device.id, name: device.name, tokenHash: device.tokenHash, notifications: device.notifications.rawValue,
            createdAt: createdAt, fallback: device.fallback)))
    }

    func recordRemoved(device id: String) {
        guard isEnabled else { return }
        // Its notifications go with it; a prune held for it could otherwise reach a new device of the same id.
        dropsRecorded.removeValue(forKey: id)
        if let i = pruneIndex.removeValue(forKey: id) {
            prunes.remove(at: i)
            for (j, p) in prunes.enumerated().dropFirst(i) { pruneIndex[p.device] = j }
        }
        pending.append(.removeDevice(id: id))
    }

    func recordRegistration(_ row: HARegistrationRow) {
        guard isEnabled else { return }
        pending.append(.haRegistration(row))
    }

    func recordRegistrationRemoved(device id: String) {
        guard isEnabled else { return }
        pending.append(.deleteHARegistration(deviceId: id))
    }

    // MARK: Committing

    /// `then` runs on the loop once what this turn recorded is committed (`true`) or failed to commit (`false`); at
    /// the turn's end when nothing was recorded or the store is off.
    func whenCommitted(_ then: @escaping (Bool) -> Void) {
        waiting.append(then)
    }

    /// The end of a loop turn: everything recorded goes to the writer in one submission.
    func endTurn() {
        turn &+= 1
        // Handed on, not emptied in place: `removeAll(keepingCapacity:)` on a buffer another array shares allocates
        // a new one as large as the largest turn ever (every turn, even an empty one), which the next turns keep.
        let then = waiting
        if !then.isEmpty { waiting = [] }
        if !prunes.isEmpty, flushPrunes || !pending.isEmpty {
            // Ahead of this turn's ops: they were recorded in earlier turns.
            pending.insert(contentsOf: prunes.map { .deleteNotifications(deviceId: $0.device, through: $0.through) }, at: 0)
            prunes.removeAll(keepingCapacity: true)
            pruneIndex.removeAll(keepingCapacity: true)
        }
        flushPrunes = false
        guard let persist, !pending.isEmpty else {
            // The room a busy turn reserved for the next one goes with the first turn that records nothing: a burst's
            // last turn would otherwise keep it until the next change, however long that is (~330 KB after `fast-100`).
            if pending.capacity > Self.idleCapacity { pending = [] }
            for t in then { t(true) }
            return
        }
        let ops = pending
        pending = []
        pending.reserveCapacity(ops.count)  // a turn like this one; a burst's size is not kept past the next turn
        if then.isEmpty {
            persist(ops, nil)
        } else {
            persist(ops) { committed in
                for t in then { t(committed) }
            }
        }
    }
}

extension DeviceRecord {
    var row: DeviceRow {
        DeviceRow(
            id: id, epoch: ledger.epoch, seq: ledger.seq, pushToken: relay.registration?.pushToken,
            pushURL: relay.registration?.pushURL, registrationInfo: relay.registration?.registrationInfo ?? [:],
            liveActivityTokens: relay.liveActivityTokens, pushToStartToken: relay.pushToStartToken, lastSeen: lastSeen,
            supportsLiveActivities: supportsLiveActivities, relayState: relay.stored)
    }
}
