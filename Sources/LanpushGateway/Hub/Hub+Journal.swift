import LanpushCore
import LanpushStore

/// What the hub writes to the durable store. Loop thread only.
///
/// Every mutation records `StoreOp`s in `pendingOps`; `commit(then:)` hands them to the group-commit
/// writer. HTTP answers that accept something run as the commit's completion (accepted = committed); LAN
/// delivery does not wait for it.
extension Hub {
    /// Records the durable effect of changes the ledger of `device` just made.
    func journal(_ changes: [Change], device: DeviceRecord) {
        guard persist != nil, !changes.isEmpty else { return }
        for change in changes {
            switch change.kind {
            case .start, .update, .end, .lifecycle:
                guard let tag = change.tag else { continue }
                if let activity = device.ledger.activities[tag] {
                    pendingOps.append(.upsertActivity(deviceId: device.id, activity))
                } else {
                    pendingOps.append(.deleteActivity(deviceId: device.id, tag: tag))
                }
            case .notification, .clear:
                guard let queued = device.ledger.notifications.last(where: { $0.seq == change.seq }) else { continue }
                pendingOps.append(.insertNotification(deviceId: device.id, queued))
                if let first = device.ledger.notifications.first, first.seq > 1 {
                    // The queue may have dropped its oldest entry to make room.
                    pendingOps.append(.deleteNotifications(deviceId: device.id, through: first.seq - 1))
                }
            }
        }
        journalDevice(device)
    }

    func journalDevice(_ device: DeviceRecord) {
        guard persist != nil else { return }
        pendingOps.append(.device(device.row))
    }

    func journalPrunedNotifications(_ device: DeviceRecord, through seq: UInt64) {
        guard persist != nil, seq > 0 else { return }
        pendingOps.append(.deleteNotifications(deviceId: device.id, through: seq))
    }

    func journalRemovedActivities(_ device: DeviceRecord, tags: [String]) {
        guard persist != nil else { return }
        for tag in tags { pendingOps.append(.deleteActivity(deviceId: device.id, tag: tag)) }
    }

    /// Hands the recorded ops to the writer. `then` runs on the loop thread once they are committed
    /// (`true`) or failed to commit (`false`); at once when nothing is pending or the store is off.
    func commit(then: ((Bool) -> Void)? = nil) {
        guard let persist, !pendingOps.isEmpty else {
            then?(true)
            return
        }
        let ops = pendingOps
        pendingOps.removeAll(keepingCapacity: true)
        persist(ops, then)
    }
}

extension DeviceRecord {
    var row: DeviceRow {
        DeviceRow(
            id: id, epoch: ledger.epoch, seq: ledger.seq, pushToken: registration?.pushToken,
            pushURL: registration?.pushURL, registrationInfo: registration?.registrationInfo ?? [:],
            liveActivityTokens: liveActivityTokens, pushToStartToken: pushToStartToken, lastSeen: lastSeen)
    }
}
