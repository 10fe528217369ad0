import Foundation
import LanpushCore

/// One connection attempt's bookkeeping. Lives inside the client actor.
final class Session {
    let id: Int
    let connection: any WebSocketConnection
    let opened = ContinuousClock.now
    var authed = false
    var info = CloseInfo()
    /// Highest seq handled on this session, and how many handled frames wait for an ack.
    var ackable: UInt64 = 0
    var pendingAcks = 0
    /// The stream stopped matching the state (resync): later frames of this session are ignored.
    var discard = false
    var pingSentAt: ContinuousClock.Instant?
    var lastHeard = ContinuousClock.now

    init(id: Int, connection: any WebSocketConnection) {
        self.id = id
        self.connection = connection
    }
}

/// How an attempt ended.
enum AttemptEnd {
    case connectFailed(String)
    case closed(authed: Bool, CloseInfo)
    case stopped
}

extension LanpushClient {
    /// Connect, run the session, decide when to come back (docs/CLIENTS.md, "Reconnecting"), until stopped.
    func run() async {
        await loadIfNeeded()
        var attempt = 0
        while !stopping {
            attempt += 1
            await setStatus(.connecting)
            let end = await runAttempt(id: attempt)
            if stopping { break }
            let info: CloseInfo
            var authed = false
            var connectFailed = false
            switch end {
            case .stopped:
                continue
            case .connectFailed(let reason):
                info = CloseInfo(code: nil, reason: reason)
                connectFailed = true
            case .closed(let a, let i):
                authed = a
                info = i
            }
            let action = CloseAction.classify(info)
            if case .authRejected(let message) = action {
                await setStatus(.authRejected, code: info.code, reason: info.reason)
                await emit(.authRejected(message: message, code: info.code))
                break
            }
            guard configuration.reconnects else {
                await setStatus(.offline, code: info.code, reason: info.reason, connectFailed: connectFailed)
                break
            }
            let delay: Double
            switch action {
            case .wait(let seconds):
                delay = seconds * (1 + 0.1 * configuration.random())
            case .reconnectNow where authed:
                delay = 0
            case _ where wantSnapshot:
                delay = 0
            case .backoff(let minimum):
                delay = max(minimum, backoff.next(random: configuration.random()))
            default:
                delay = backoff.next(random: configuration.random())
            }
            await setStatus(.offline, code: info.code, reason: info.reason, retryIn: delay, connectFailed: connectFailed)
            if delay > 0 {
                let sleeper = Task<Void, Never> { _ = try? await Task.sleep(for: .seconds(delay)) }
                sleepTask = sleeper
                await sleeper.value
                sleepTask = nil
            }
        }
        session = nil
        if status != .authRejected { await setStatus(.offline) }
        channel.finish()
        runTask = nil
    }

    private func runAttempt(id: Int) async -> AttemptEnd {
        let connection: any WebSocketConnection
        do {
            connection = try await configuration.transport.connect(
                to: configuration.url, subprotocols: ProtocolVersion.subprotocols, tls: configuration.tls)
        } catch {
            return .connectFailed("\(error)")
        }
        let current = Session(id: id, connection: connection)
        session = current
        if stopping { connection.inbox.interrupt() }
        let watchdog = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(200))
                guard let self, await self.watch(sessionID: id) else { return }
            }
        }
        defer { watchdog.cancel() }
        while true {
            switch await connection.inbox.next() {
            case .text(let text):
                current.lastHeard = .now
                current.pingSentAt = nil
                await received(text, on: current)
                await maybeAck(current)
            case .closed(let code, let reason):
                current.info.code = code
                current.info.reason = reason
                session = nil
                return .closed(authed: current.authed, current.info)
            case .interrupted:
                // Stopping: what was handled is acknowledged, then the session is closed properly.
                if current.pendingAcks > 0 { await sendAck(current) }
                await connection.close(code: 1000, reason: "client stopped")
                let deadline = ContinuousClock.now + .seconds(2)
                while !connection.inbox.isClosed && ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(20))
                }
                session = nil
                return .stopped
            }
        }
    }

    /// The handshake deadline and the keepalive (docs/CLIENTS.md, rules 11 and 12); false once the session is over.
    private func watch(sessionID: Int) async -> Bool {
        guard let s = session, s.id == sessionID, !s.connection.inbox.isClosed else { return false }
        let now = ContinuousClock.now
        if !s.authed {
            if now - s.opened > .seconds(configuration.handshakeTimeout) {
                await drop(s, reason: "handshake timeout")
                return false
            }
            return true
        }
        guard configuration.keepaliveInterval > 0 else { return true }
        let interval = max(configuration.keepaliveInterval, 2 * Double(keepalive ?? 0))
        let heard = max(s.lastHeard, s.connection.inbox.lastReceived ?? s.lastHeard)
        if let ping = s.pingSentAt, heard < ping {
            if now - ping > .seconds(configuration.keepaliveTimeout) {
                await drop(s, reason: "keepalive timeout")
                return false
            }
        } else if now - heard > .seconds(interval) {
            s.pingSentAt = now
            try? await s.connection.send(ClientFrame.ping.serialized())
        }
        return true
    }

    /// A link that stopped answering: report it closed now (some never report their close) and let it go.
    private func drop(_ s: Session, reason: String) async {
        s.connection.inbox.finish(code: nil, reason: reason)
        await s.connection.close(code: 1000, reason: reason)
    }

    func send(_ frame: JSONValue, on s: Session) async {
        try? await s.connection.send(frame.serialized())
    }

    /// Acks when nothing else waits to be handled, or every half window, so credit never runs out.
    func maybeAck(_ s: Session) async {
        guard !configuration.isObserver, s.pendingAcks > 0 else { return }
        let half = max(1, configuration.window / 2)
        if s.connection.inbox.pending > 0 && s.pendingAcks < half { return }
        await sendAck(s)
    }

    /// Persist before ack (docs/CLIENTS.md, rule 9): an acknowledged notification leaves the gateway's queue.
    func sendAck(_ s: Session) async {
        guard await persist() else { return }
        await send(ClientFrame.ack(s.ackable), on: s)
        s.pendingAcks = 0
    }
}
