import Foundation
import Histogram
import LanpushCore
import LanpushLWS

#if canImport(Glibc)
import Glibc
#endif

/// What a client session speaks.
enum SessionKind {
    /// A lanpush.v1 device session: auth with the device token, subscribe, ack every event frame.
    case lanpush(token: String)
    /// MQTT 3.1.1 over WebSocket (subprotocol `mqtt`): CONNECT, SUBSCRIBE to `filters` at `qos`, receive PUBLISH
    /// (a QoS 1 one answered with PUBACK at once, as lanpush's sessions ack every frame).
    case mqtt(clientId: String, filters: [String], qos: UInt8 = 0)
}

/// One client connection's state. Loop thread only.
final class ClientSession {
    let index: Int
    let kind: SessionKind
    var connection: WSClientConnection?
    var ready = false
    var failed = false
    var outbox: [[UInt8]] = []
    var mqttDecoder = MQTT.Decoder()
    /// Slow reader: frames received but not processed yet (processed one per tick).
    var backlog: [[UInt8]] = []
    /// Reconstructed state per tag (lanpush) or topic (MQTT), when the hub tracks state.
    var states: [String: JSONValue] = [:]
    var deliveries = 0
    /// Closed on purpose (reconnect churn): its end is not a failure.
    var leaving = false
    /// The new connection of a churned session.
    var rejoining = false

    init(index: Int, kind: SessionKind) {
        self.index = index
        self.kind = kind
    }

    var isMQTT: Bool {
        if case .mqtt = kind { return true }
        return false
    }
}

/// One frame as the bytes scenario sees it.
struct FrameRecord {
    var wireBytes: Int
    /// Bytes of the same frame if it carried the whole new state instead of the delta.
    var fullStateWireBytes: Int
    /// The patch alone and the new state alone (JSON bytes): the payload-level ratio.
    var patchBytes = 0
    var stateBytes = 0
}

/// Counters the hub keeps on the loop thread; copied out with `hub.sync { hub.stats }`.
struct ClientStats {
    /// Event frames received (lanpush: start/update/end/...; MQTT: PUBLISH).
    var frames = 0
    /// Frames that carried a publisher timestamp (one update's delivery).
    var deliveries = 0
    var framesInWindow = 0
    var deliveriesInWindow = 0
    /// Bytes received / sent on the WebSocket streams (payload + frame headers), after the handshake.
    var bytesIn = 0
    var bytesOut = 0
    var bytesInWindow = 0
    var bytesOutWindow = 0
    /// Ingest → delivery, ns, for updates sent inside the window.
    var latency = Histogram<UInt64>(highestTrackableValue: 120_000_000_000, numberOfSignificantValueDigits: .three)
    var lastReceive: UInt64 = 0
    var firstReceive: UInt64 = 0
    var connectFailures = 0
    var closedUnexpectedly = 0
    var lastFailure = ""
}

/// All client sessions of a run on one standalone `WSClientLoop` (its own thread). Other threads talk to it
/// through `perform` / `sync`.
final class ClientHub: WSClientDelegate, @unchecked Sendable {
    let loop: WSClientLoop
    private var thread: Thread?
    private let inboxLock = Lock()
    private var inbox: [() -> Void] = []
    private let stopped = Completion()

    // Loop-confined.
    var sessions: [ClientSession] = []
    var stats = ClientStats()
    var window: (UInt64, UInt64) = (0, UInt64.max)
    /// Ack every event frame (lanpush). `false`: ack only the newest seq of each read batch.
    var ackEvery = true
    /// Parse frames and keep the state per tag (slow reader, bytes scenario).
    var trackState = false
    /// Slow reader: process at most one frame per session every `slowInterval` seconds.
    var slowInterval: Double?
    var frameLog: [FrameRecord] = []
    var recordFrames = false
    /// Called (loop thread) on every delivery with its stamp: fan-out bookkeeping.
    var stampCounts: [UInt64: Int] = [:]
    var countStamps = false
    private var url = ""
    private var subprotocol = ""
    private var toConnect: [ClientSession] = []
    private var connecting = 0
    private var maxConnecting = 64
    private var readyCount = 0
    private var onAllReady: (() -> Void)?
    private var pingTimer: LWSTimer?

    init(maxConnections: Int) throws {
        var o = WSClientOptions()
        o.pingInterval = 0
        o.rxBufferSize = 4096
        o.acceptBinary = true
        // At least 1,024: lws keeps its direct-indexed fd table (see LanpushLWS/FileLimit.swift).
        o.fdLimit = max(1024, maxConnections + 64)
        o.libraryLogMask = 1
        o.connectTimeout = 30
        o.stopDrainSeconds = 1
        do { loop = try WSClientLoop(options: o) } catch { throw BenchError("client loop: \(error)") }
        loop.onWake = { [unowned self] in self.drainInbox() }
        thread = startThread(name: "bench-clients") { [self] in
            loop.run()
            stopped.signal()
        }
    }

    func stop() {
        loop.requestStop()
        stopped.wait(timeout: 30)
    }

    /// Runs `body` on the loop thread soon.
    func perform(_ body: @escaping () -> Void) {
        inboxLock.withLock { inbox.append(body) }
        loop.wake()
    }

    /// Runs `body` on the loop thread and waits for its result.
    func sync<T>(_ body: @escaping () -> T) -> T {
        let done = Completion()
        var result: T?
        let box = UnsafeMutablePointer<T?>.allocate(capacity: 1)
        box.initialize(to: nil)
        defer { box.deinitialize(count: 1); box.deallocate() }
        nonisolated(unsafe) let b = box
        perform {
            b.pointee = body()
            done.signal()
        }
        done.wait(timeout: 120)
        result = box.pointee
        return result!
    }

    private func drainInbox() {
        let jobs = inboxLock.withLock { () -> [() -> Void] in
            let j = inbox
            inbox.removeAll()
            return j
        }
        for j in jobs { j() }
    }

    // MARK: Connecting

    /// Opens `kinds.count` sessions to `url`, at most `parallel` handshakes at once; returns once every one is
    /// ready (subscribed) or `timeout` passed. Returns the number ready.
    func connect(url: String, subprotocol: String, kinds: [SessionKind], parallel: Int = 64, timeout: Double = 120) -> Int {
        let done = Completion()
        perform { [self] in
            self.url = url
            self.subprotocol = subprotocol
            self.maxConnecting = parallel
            let base = sessions.count
            let new = kinds.enumerated().map { ClientSession(index: base + $0.offset, kind: $0.element) }
            sessions += new
            toConnect += new.reversed()
            readyCount = 0
            onAllReady = { done.signal() }
            pump()
            if pingTimer == nil { schedulePings() }
        }
        done.wait(timeout: timeout)
        return sync { self.readyCount }
    }

    private func pump() {
        while connecting < maxConnecting, let s = toConnect.popLast() {
            connecting += 1
            do {
                // Sessions come from 127.0.0.1-16, as from many hosts: lanpushd admits at most 256 connections per
                // address that are still sending their handshake, and up to 512 handshakes run at once here.
                let source = url.contains("://127.0.0.1:") ? "127.0.0.\(1 + s.index % 16)" : nil
                let c = try loop.connectWebSocket(
                    url: url, subprotocol: subprotocol, localAddress: source, delegate: self)
                c.userData = s
                s.connection = c
            } catch {
                connecting -= 1
                s.failed = true
                stats.connectFailures += 1
                stats.lastFailure = "\(error)"
                sessionSettled()
            }
        }
    }

    private func sessionSettled() {
        if toConnect.isEmpty && connecting == 0 { onAllReady?(); onAllReady = nil }
    }

    private func becameReady(_ s: ClientSession) {
        guard !s.ready else { return }
        s.ready = true
        if s.rejoining { reconnected += 1 }
        readyCount += 1
        connecting -= 1
        pump()
        sessionSettled()
    }

    /// MQTT keepalive: PINGREQ every 30 s (keepalive 60).
    private func schedulePings() {
        pingTimer = loop.schedule(after: 30) { [weak self] in
            guard let self else { return }
            for s in self.sessions where s.isMQTT && s.ready { self.queue(s, MQTT.pingreq) }
            self.schedulePings()
        }
    }

    // MARK: Reconnect churn

    private var churnCursor = 0
    /// Sessions closed and opened again by `churn` (their new connection is ready).
    var reconnected = 0

    /// Closes `count` ready sessions (round robin) and opens each again as a new connection of the same device
    /// (a client that lost its connection and subscribes afresh).
    func churn(_ count: Int) {
        perform { [self] in
            var left = count
            var looked = 0
            while left > 0 && looked < sessions.count {
                let i = churnCursor % sessions.count
                churnCursor += 1
                looked += 1
                let old = sessions[i]
                guard old.ready, let c = old.connection else { continue }
                old.leaving = true
                c.close()
                let fresh = ClientSession(index: old.index, kind: old.kind)
                fresh.rejoining = true
                sessions[i] = fresh
                toConnect.append(fresh)
                left -= 1
            }
            pump()
        }
    }

    // MARK: Slow reader

    /// Starts processing backlogs at one frame per session per `interval` s.
    func startSlowTicks(interval: Double) {
        perform { [self] in
            slowInterval = interval
            tickSlow(interval)
        }
    }

    private func tickSlow(_ interval: Double) {
        guard slowInterval != nil else { return }
        for s in sessions where !s.backlog.isEmpty {
            let frame = s.backlog.removeFirst()
            if s.isMQTT {
                frame.withUnsafeBytes { mqttPublish(s, $0, now: nowNanos(), fromBacklog: true) }
            } else {
                process(s, frame, now: nowNanos(), fromBacklog: true)
            }
        }
        loop.schedule(after: interval) { [weak self] in self?.tickSlow(interval) }
    }

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
    private func inWindow(_ t: UInt64) -> Bool { t >= window.0 && t < window.1 }

    @inline(__always)
    private func countFrame(_ now: UInt64) {
        stats.frames += 1
        if inWindow(now) { stats.framesInWindow += 1 }
    }

    private func queue(_ s: ClientSession, _ bytes: [UInt8]) {
        s.outbox.append(bytes)
        s.connection?.requestWritable()
    }

    @inline(__always)
    private func delivered(_ s: ClientSession, stamp: UInt64, now: UInt64) {
        stats.deliveries += 1
        s.deliveries += 1
        if inWindow(now) { stats.deliveriesInWindow += 1 }
        if stamp >= window.0 && stamp < window.1 && now >= stamp { _ = stats.latency.record(now - stamp) }
        if stats.firstReceive == 0 { stats.firstReceive = now }
        stats.lastReceive = now
        if countStamps { stampCounts[stamp, default: 0] += 1 }
    }

    /// A lanpush.v1 frame.
    private func process(_ s: ClientSession, _ bytes: [UInt8], now: UInt64, fromBacklog: Bool) {
        var ackSeq: UInt64?
        var isEvent = false
        var stamp: UInt64?
        bytes.withUnsafeBytes { b in
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
                if !(c0 == UInt8(ascii: "s") && c1 == UInt8(ascii: "n")) { stamp = b.embeddedStamp() }
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
            if ackEvery || s.outbox.isEmpty {
                var ack: [UInt8] = Array("{\"type\":\"ack\",\"seq\":".utf8)
                appendDecimal(seq, to: &ack)
                ack.append(UInt8(ascii: "}"))
                queue(s, ack)
            } else {
                // Replace the pending cumulative ack.
                var ack: [UInt8] = Array("{\"type\":\"ack\",\"seq\":".utf8)
                appendDecimal(seq, to: &ack)
                ack.append(UInt8(ascii: "}"))
                s.outbox[s.outbox.count - 1] = ack
            }
        }
    }

    /// Applies a lanpush frame to the reconstructed state (and logs its size for the bytes scenario).
    private func track(_ s: ClientSession, _ bytes: [UInt8]) {
        guard let frame = try? JSONValue.parse(bytes), let o = frame.objectValue, let type = o["type"]?.stringValue else { return }
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

    private func mqttPublish(_ s: ClientSession, _ body: UnsafeRawBufferPointer, flags: UInt8 = 0, now: UInt64, fromBacklog: Bool) {
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
    }
}
