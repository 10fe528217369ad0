import LanpushCore

/// What time does, on the loop's 250 ms tick: auth and ack timeouts, stale dates, dismissals and Apple's 8 h
/// ceiling falling due, the relay pacer's waits, the confirm-id window. Loop thread only.
struct Housekeeping {
    static let interval: Double = 0.25

    let config: GatewayConfig.Session
    let directory: DeviceDirectory
    let sessions: SessionRegistry
    let journal: Journal
    let relay: RelayHandOver
    let ingest: Ingest
    let metrics: GatewayMetrics
    let clock: () -> Double

    func tick() {
        let now = clock()
        journal.flushPrunesAtTurnEnd()
        for id in sessions.timed {
            guard let session = sessions[id], !session.closing else {
                sessions.untime(id)
                continue
            }
            switch session.role {
            case .pending:
                if now - session.openedAt > SessionProtocol.authTimeout {
                    sessions.close(session, code: .authInvalid, reason: "auth timeout")
                }
            case .device(let device):
                guard let sent = session.withCoalescer(device, { $0.oldestUnacknowledgedSentAt }) ?? nil else {
                    sessions.untime(id)  // all acknowledged: the next frame sent with none in flight times it again
                    continue
                }
                if now - sent > config.ackTimeout {
                    sessions.close(session, code: .ackTimeout, reason: "ack timeout")
                }
            case .observer, .publisher:
                sessions.untime(id)
            }
        }
        for device in directory.sorted {
            device.ledger.releaseQuietHistoryRoom()
            guard let deadline = device.ledger.nextDeadline, deadline <= now else { continue }
            let changes = device.ledger.advance(to: now)
            directory.settleHistory(of: device)
            journal.record(changes, of: device)
            sessions.fanOut(changes, device: device)
            relay.ended(changes, of: device, relayIfGone: false)
            // Dismissed activities leave the ledger and the store (a missing activity reads as dismissed to every
            // coalescer) — but not while the device's LAN sessions have yet to acknowledge an end: if they go away
            // first, the drain still owes it to the relay. Nor while a session has yet to be sent one: this tick
            // can run between a clear_notification and the sessions' writes (libuv runs due timers before it
            // polls), and the activity must still be there for its end (with the final state) to go out.
            guard !device.ledger.activities.values.contains(where: { relay.owesEnd(of: $0, on: device) }) else { continue }
            let removed = device.ledger.pruneDismissed { sessions.oweEnd(of: $0, on: device) }
            journal.recordRemovedActivities(of: device, tags: removed)
            for tag in removed { device.relayedSeq.removeValue(forKey: tag) }
        }
        metrics.resumeHistoryBytes.record(directory.historyBytes)
        relay.pump()
        ingest.expire(now: now)
    }
}
