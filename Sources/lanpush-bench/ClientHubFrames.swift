import Foundation
import Histogram
import LanpushCore
import LanpushLWS

#if canImport(Glibc)
import Glibc
#endif

extension ClientHub {
    // MARK: WSClientDelegate

    func wsClientOpened(_ connection: WSClientConnection) {
        guard let s = connection.userData as? ClientSession else { return }
        switch s.kind {
        case .lanpush(let token):
            // Pipelined: auth then subscribe (the server handles them in order).
            queue(s, Array("{\"token\":\"\(token)\",\"type\":\"auth\"}".utf8))
            queue(s, Array("{\"type\":\"subscribe\"}".utf8))
        case .mqtt(let clientId, let filters, let qos):
            queue(s, MQTT.connect(clientId: clientId, keepAlive: 60))
            queue(s, MQTT.subscribe(packetId: 1, filters: filters, qos: qos))
        }
    }

    func wsClientWritable(_ connection: WSClientConnection) {
        guard let s = connection.userData as? ClientSession else { return }
        let binary = s.isMQTT
        // Acks are bounded by the session window: no need to check for choking between them.
        for frame in s.outbox {
            guard connection.send(frame, binary: binary) else { break }
            let b = frame.count + wsHeaderBytes(frame.count, masked: true)
            stats.bytesOut += b
            if inWindow(nowNanos()) { stats.bytesOutWindow += b }
        }
        s.outbox.removeAll(keepingCapacity: true)
        s.framesInPendingAck = 0
    }

    func wsClientText(_ connection: WSClientConnection, _ bytes: [UInt8]) {
        guard let s = connection.userData as? ClientSession else { return }
        let now = nowNanos()
        let b = bytes.count + wsHeaderBytes(bytes.count, masked: false)
        stats.bytesIn += b
        if inWindow(now) { stats.bytesInWindow += b }
        if s.ready, slowInterval != nil {
            countFrame(now)
            s.backlog.append(bytes)
            return
        }
        process(s, bytes, now: now, fromBacklog: false)
    }

    func wsClientBinary(_ connection: WSClientConnection, _ bytes: [UInt8]) {
        guard let s = connection.userData as? ClientSession else { return }
        let now = nowNanos()
        let b = bytes.count + wsHeaderBytes(bytes.count, masked: false)
        stats.bytesIn += b
        if inWindow(now) { stats.bytesInWindow += b }
        bytes.withUnsafeBytes { raw in
            s.mqttDecoder.feed(raw) { type, flags, body in
                switch type {
                case MQTT.publish:
                    if s.ready, slowInterval != nil {
                        countFrame(now)
                        s.backlog.append(Array(body))
                    } else {
                        mqttPublish(s, body, flags: flags, now: now, fromBacklog: false)
                    }
                case MQTT.suback:
                    becameReady(s)
                case MQTT.connack:
                    if body.count >= 2, body[1] != 0 {
                        stats.lastFailure = "CONNACK \(body[1])"
                        s.connection?.close()
                    }
                default:
                    break
                }
            }
        }
    }

    func wsClientClosed(_ connection: WSClientConnection, code: UInt16?, reason: String) {
        guard let s = connection.userData as? ClientSession else { return }
        if !s.ready {
            s.failed = true
            connecting -= 1
            stats.connectFailures += 1
            stats.lastFailure = "closed during set-up: \(code.map(String.init) ?? "-") \(reason)"
            pump()
            sessionSettled()
        } else if !loop.isStopping && !s.leaving {
            stats.closedUnexpectedly += 1
            stats.lastFailure = "closed: \(code.map(String.init) ?? "-") \(reason)"
        }
        s.connection = nil
    }

    func wsClientConnectFailed(_ connection: WSClientConnection, error: WSClientError) {
        guard let s = connection.userData as? ClientSession else { return }
        s.failed = true
        connecting -= 1
        stats.connectFailures += 1
        stats.lastFailure = "\(error)"
        s.connection = nil
        pump()
        sessionSettled()
    }

    // MARK: Frames

    @inline(__always)
    func inWindow(_ t: UInt64) -> Bool { t >= window.0 && t < window.1 }

    @inline(__always)
    func countFrame(_ now: UInt64) {
        stats.frames += 1
        if inWindow(now) { stats.framesInWindow += 1 }
    }

    func queue(_ s: ClientSession, _ bytes: [UInt8]) {
        s.outbox.append(bytes)
        s.framesInPendingAck = 0
        s.connection?.requestWritable()
    }

    @inline(__always)
    func delivered(_ s: ClientSession, stamp: UInt64, now: UInt64) {
        stats.deliveries += 1
        s.deliveries += 1
        if inWindow(now) { stats.deliveriesInWindow += 1 }
        if stamp >= window.0 && stamp < window.1 && now >= stamp { _ = stats.latency.record(now - stamp) }
        if stats.firstReceive == 0 { stats.firstReceive = now }
        stats.lastReceive = now
        if countStamps { stampCounts[stamp, default: 0] += 1 }
    }

    /// A lanpush frame: a v1 object, or a v2 array (`["update",seq,...]`: the type first, the seq after it).
    func process(_ s: ClientSession, _ bytes: [UInt8], now: UInt64, fromBacklog: Bool) {
        var ackSeq: UInt64?
        var isEvent = false
        var stamp: UInt64?
        bytes.withUnsafeBytes { b in
            if b.first == UInt8(ascii: "["), b.count > 4, let comma = b.offset(after: "\",") {
                isEvent = true
                ackSeq = b.decimal(at: comma)
                stamp = b.embeddedStamp()
                if progressCount != nil { countProgress(s, b, now: now) }
                return
            }
            guard let t = b.offset(after: "\"type\":\""), t + 1 < b.count else { return }
            let c0 = b[t]
            let c1 = b[t + 1]
            switch (c0, c1) {
            case (UInt8(ascii: "u"), _), (UInt8(ascii: "e"), UInt8(ascii: "n")), (UInt8(ascii: "s"), UInt8(ascii: "t")),
                (UInt8(ascii: "s"), UInt8(ascii: "n")), (UInt8(ascii: "l"), _), (UInt8(ascii: "n"), _), (UInt8(ascii: "c"), _):
                isEvent = true
                if let q = b.offset(after: "\"seq\":") { ackSeq = b.decimal(at: q) }
                // A snapshot (a session that subscribed afresh, e.g. after a reconnect) repeats old states: not a
                // delivery of the update that stamped them.
                if !(c0 == UInt8(ascii: "s") && c1 == UInt8(ascii: "n")) {
                    stamp = b.embeddedStamp()
                    if progressCount != nil { countProgress(s, b, now: now) }
                }
            case (UInt8(ascii: "s"), UInt8(ascii: "y")):
                becameReady(s)
            case (UInt8(ascii: "a"), _):
                // auth_required / auth_ok / auth_invalid
                if b.offset(after: "auth_invalid") != nil {
                    stats.lastFailure = "auth_invalid"
                    s.connection?.close()
                }
            case (UInt8(ascii: "e"), UInt8(ascii: "r")):
                stats.lastFailure = String(decoding: b, as: UTF8.self)
            default:
                break
            }
        }
        guard isEvent else { return }
        if !fromBacklog { countFrame(now) }
        if trackState || recordFrames { track(s, bytes) }
        if let stamp { delivered(s, stamp: stamp, now: now) }
        if let seq = ackSeq {
            var ack: [UInt8] = Array("{\"type\":\"ack\",\"seq\":".utf8)
            appendDecimal(seq, to: &ack)
            ack.append(UInt8(ascii: "}"))
            if ackEvery || s.framesInPendingAck == 0 || s.framesInPendingAck >= batchAckFrames {
                queue(s, ack)
                s.framesInPendingAck = 1
            } else {
                // The pending cumulative ack now covers this frame too.
                s.outbox[s.outbox.count - 1] = ack
                s.framesInPendingAck += 1
            }
        }
    }

    /// Applies a lanpush frame to the reconstructed state (and logs its size for the bytes scenario).
    func track(_ s: ClientSession, _ bytes: [UInt8]) {
        guard let frame = try? JSONValue.parse(bytes),
            let o = frame.objectValue ?? frame.arrayValue.flatMap(CompactFrame.object), let type = o["type"]?.stringValue
        else { return }
        let tag = o["tag"]?.stringValue ?? ""
        var patchBytes = 0
        switch type {
        case "start":
            s.states[tag] = o["state"] ?? .object([:])
        case "update", "end":
            let patch = o["patch"] ?? .object([:])
            patchBytes = patch.serializedBytes().count
            s.states[tag] = MergePatch.apply(patch, to: s.states[tag] ?? .object([:]))
        case "snapshot":
            for a in o["activities"]?.arrayValue ?? [] {
                if let t = a["tag"]?.stringValue { s.states[t] = a["state"] ?? .object([:]) }
            }
        default:
            break
        }
        if recordFrames {
            let wire = bytes.count + wsHeaderBytes(bytes.count, masked: false)
            var full = wire
            var stateBytes = 0
            if patchBytes > 0, let state = s.states[tag] {
                stateBytes = state.serializedBytes().count
                let payload = bytes.count - patchBytes + stateBytes
                full = payload + wsHeaderBytes(payload, masked: false)
            }
            frameLog.append(FrameRecord(wireBytes: wire, fullStateWireBytes: full, patchBytes: patchBytes, stateBytes: stateBytes))
        }
    }

    func mqttPublish(_ s: ClientSession, _ body: UnsafeRawBufferPointer, flags: UInt8 = 0, now: UInt64, fromBacklog: Bool) {
        if !fromBacklog { countFrame(now) }
        guard let (topic, packetId, payload) = MQTT.publishParts(body, flags: flags) else { return }
        if let packetId { queue(s, MQTT.puback(packetId)) }
        if trackState || recordFrames {
            let t = String(decoding: topic, as: UTF8.self)
            s.states[t] = (try? JSONValue.parse(payload)) ?? .null
            if recordFrames {
                let packet = body.count + MQTT.headerSize(body.count)
                let wire = packet + wsHeaderBytes(packet, masked: false)
                frameLog.append(FrameRecord(wireBytes: wire, fullStateWireBytes: wire))
            }
        }
        if let stamp = payload.embeddedStamp() { delivered(s, stamp: stamp, now: now) }
        if progressCount != nil { countProgress(s, payload, now: now) }
    }

    /// Counts the updates a frame's `progress` stands for (`progressCount`). A progress at or below the newest seen
    /// counts nothing (concurrent HTTP connections may be accepted out of order: a slight undercount, never an
    /// overcount); the first frame of a tag counts one.
    @inline(__always)
    func countProgress(_ s: ClientSession, _ b: UnsafeRawBufferPointer, now: UInt64) {
        guard let (tags, step) = progressCount, let at = b.offset(after: "\"progress\":"),
            let v = b.decimal(at: at), v > 0
        else { return }
        let p = Int(v)
        if s.progressSeen.count != tags { s.progressSeen = Array(repeating: 0, count: tags) }
        let tag = (p - 1) % tags
        let last = s.progressSeen[tag]
        guard p > last else { return }
        s.progressSeen[tag] = p
        if inWindow(now) { stats.coveredInWindow += last == 0 ? 1 : (p - last) / step }
    }
}
