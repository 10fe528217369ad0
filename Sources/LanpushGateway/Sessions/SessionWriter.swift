import LanpushCore

/// Writes what a session has due while its socket can take it: control frames first, then the coalescer's events
/// (a device session's one coalescer; an observer's one per device, tagged with `device_id`). Loop thread only.
struct SessionWriter {
    let directory: DeviceDirectory
    let sessions: SessionRegistry
    let counters: TurnCounters
    let frames: FrameEncoder
    let patches: PatchMemo

    func writable(_ session: StreamSession, now: Double) {
        // A device session's device, looked up once for all the frames this turn writes.
        let device = directory.device(of: session)
        while true {
            guard !session.transport.isChoked else {
                // The socket is full: lws calls back once it drains only when asked to, so ask — else what is left
                // (a snapshot's `synced`, frames within the window) would wait for the next change or ack.
                return session.transport.requestWritable()
            }
            if !session.control.isEmpty {
                let bytes = session.control.removeFirst()
                guard session.transport.send(bytes) else { return }
                counters.bytesOut += bytes.count
                continue
            }
            if let (code, reason) = session.pendingClose {
                session.closing = true
                session.transport.close(code: code, reason: reason)
                return
            }
            if let publisher = session.publisher {
                guard let reply = publisher.stream.nextReply() else {
                    publisher.updateFlow(session.transport)  // answers drained: a paused reader may be read again
                    break
                }
                let bytes = reply.serializedBytes()
                guard session.transport.send(bytes) else { return }
                counters.bytesOut += bytes.count
                continue
            }
            guard session.subscribed, let frame = nextFrame(for: session, device: device, now: now) else { break }
            guard session.transport.send(frame) else { return }
            counters.framesOut += 1
            counters.bytesOut += frame.count
        }
    }

    /// What a session's coalescer has for it next: an event's frame, already encoded (the event is encoded where the
    /// coalescer hands it out, not copied out of this enum first), or the seq of a `synced`.
    private enum Due {
        case event([UInt8], firstInFlight: Bool)
        case synced(UInt64)
    }

    private func nextFrame(for session: StreamSession, device: DeviceRecord?, now: Double) -> [UInt8]? {
        switch session.role {
        case .pending, .publisher:
            return nil
        case .device(let id):
            guard let device else { return nil }
            let version = session.version
            let due = session.withCoalescer(id) { coalescer -> Due? in
                let (event, unsafe) = coalescer.next(ledger: device.ledger, now: now, patches: patches)
                device.markUnsafeResumePoints(unsafe)
                if let event {
                    return .event(frames.encode(event, version), firstInFlight: coalescer.unacknowledged == 1)
                }
                return coalescer.takeSynced(queued: device.ledger.notifications).map(Due.synced)
            }
            switch due {
            case .event(let frame, let firstInFlight)??:
                if firstInFlight { sessions.time(session) }  // the ack timeout counts from this frame
                return frame
            case .synced(let seq)??:
                return JSONValue.object(["type": "synced", "seq": .number(Double(seq))]).serializedBytes()
            case nil, .some(nil):
                return nil
            }
        case .observer:
            for id in session.coalescers.keys.sorted() {
                guard let device = directory[id],
                    let (event, synced) = session.withCoalescer(id, { coalescer -> (OutboundEvent?, UInt64?) in
                        let (event, unsafe) = coalescer.next(ledger: device.ledger, now: now, patches: patches)
                        device.markUnsafeResumePoints(unsafe)
                        if let event { coalescer.acknowledge(event.seq) }  // observers never ack for a device
                        return (event, event == nil ? coalescer.takeSynced(queued: device.ledger.notifications) : nil)
                    })
                else { continue }
                if let event, case .object(var o) = event.json {
                    o["device_id"] = .string(id)
                    return session.version.frame(o).serializedBytes()
                }
                if let synced {
                    return JSONValue.object(["type": "synced", "seq": .number(Double(synced)), "device_id": .string(id)])
                        .serializedBytes()
                }
            }
            return nil
        }
    }
}
