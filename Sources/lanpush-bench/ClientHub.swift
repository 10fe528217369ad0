import Foundation
import Histogram
import LanpushCore
import LanpushLWS

#if canImport(Glibc)
import Glibc
#endif

/// All client sessions of a run on one standalone `WSClientLoop` (its own thread). Other threads talk to it
/// through `perform` / `sync`.
final class ClientHub: WSClientDelegate, @unchecked Sendable {
    let loop: WSClientLoop
    var thread: Thread?
    let inboxLock = Lock()
    var inbox: [() -> Void] = []
    let stopped = Completion()

    // Loop-confined.
    var sessions: [ClientSession] = []
    var stats = ClientStats()
    var window: (UInt64, UInt64) = (0, UInt64.max)
    /// Ack every event frame (lanpush). `false`: one cumulative ack per read (`batchAckFrames`), as the client libraries
    /// do.
    var ackEvery = false
    /// Without `ackEvery`: a pending ack covers at most this many frames, then the next one goes out as well — the
    /// client libraries ack at least every half window, so that credit never runs out within one read.
    var batchAckFrames = 16
    /// Parse frames and keep the state per tag (slow reader, bytes scenario).
    var trackState = false
    /// Slow reader: process at most one frame per session every `slowInterval` seconds.
    var slowInterval: Double?
    var frameLog: [FrameRecord] = []
    var recordFrames = false
    /// Called (loop thread) on every delivery with its stamp: fan-out bookkeeping.
    var stampCounts: [UInt64: Int] = [:]
    var countStamps = false
    /// The fast scenarios: each update's `progress` is its index + 1 and its tag the index modulo `tags`; one session
    /// sees every `step`-th index of a tag. A frame with progress p then stands for every update of its tag since the
    /// last one the session saw, merged into it: `(p − last) / step` of them (`ClientStats.coveredInWindow`).
    var progressCount: (tags: Int, step: Int)?
    var url = ""
    var subprotocol = ""
    var toConnect: [ClientSession] = []
    var connecting = 0
    var maxConnecting = 64
    var readyCount = 0
    var onAllReady: (() -> Void)?
    var pingTimer: LWSTimer?
    var churnCursor = 0
    /// Sessions closed and opened again by `churn` (their new connection is ready).
    var reconnected = 0

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

    func drainInbox() {
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

    func pump() {
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

    func sessionSettled() {
        if toConnect.isEmpty && connecting == 0 { onAllReady?(); onAllReady = nil }
    }

    func becameReady(_ s: ClientSession) {
        guard !s.ready else { return }
        s.ready = true
        if s.rejoining { reconnected += 1 }
        readyCount += 1
        connecting -= 1
        pump()
        sessionSettled()
    }

    /// MQTT keepalive: PINGREQ every 30 s (keepalive 60).
    func schedulePings() {
        pingTimer = loop.schedule(after: 30) { [weak self] in
            guard let self else { return }
            for s in self.sessions where s.isMQTT && s.ready { self.queue(s, MQTT.pingreq) }
            self.schedulePings()
        }
    }
}
