import LanpushCore
import Logging

/// A publisher session's state on the gateway: its stream (item numbers, answers, flow control), whether its input
/// is paused, and the commit its current turn's items wait for. Loop thread only.
final class PublisherState {
    var stream: PublisherStream
    private(set) var inputPaused = false
    /// The turns whose items wait for their commit, oldest first (the last one is the current turn's while it runs).
    /// Accepts are cumulative, so a turn is accepted only after every turn before it: a turn that recorded nothing is
    /// told "committed" at its end, possibly before an earlier turn's commit completed.
    private var marks: [CommitMark] = []
    private var head = 0

    /// The mark of the current turn, `turn`: the last one when it is that turn's, else a new one.
    func mark(for turn: UInt64) -> (mark: CommitMark, new: Bool) {
        if head < marks.count, let last = marks.last, last.turn == turn { return (last, false) }
        let mark = CommitMark(turn: turn)
        marks.append(mark)
        return (mark, true)
    }

    /// `mark`'s commit completed: the stream is committed through the last of the completed marks that no
    /// uncompleted one precedes.
    func completed(_ mark: CommitMark) {
        mark.done = true
        var through: UInt64?
        while head < marks.count, marks[head].done {
            through = marks[head].through
            head += 1
        }
        if head == marks.count {
            marks.removeAll(keepingCapacity: marks.count <= 64)
            head = 0
        }
        if let through { stream.committed(through: through) }
    }

    init(window: Int) {
        stream = PublisherStream(window: window)
    }

    /// Pauses or resumes reading the publisher's socket as its stream allows (items awaiting their commit and answers
    /// awaiting a reader, each at most a window).
    func updateFlow(_ transport: SessionTransport) {
        let pause = !stream.wantsInput
        guard pause != inputPaused else { return }
        inputPaused = pause
        transport.pauseInput(pause)
    }
}

/// What one loop turn's items wait for: the journal's commit of that turn.
final class CommitMark {
    let turn: UInt64
    var through: UInt64 = 0
    var done = false

    init(turn: UInt64) {
        self.turn = turn
    }
}

/// Publisher sessions (docs/PROTOCOL.md, "Publishers"): each `push` frame goes through the one ingest as a
/// `POST /v1/push` body would, at once; rejections and warnings are answered per item, and `accepted` covers every
/// item of a turn once the turn's commit completed — so, as with HTTP's 2xx, an accept means committed. Loop thread
/// only.
final class PublisherIngest {
    private let ingest: Ingest
    private let journal: Journal
    private let sessions: SessionRegistry
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let clock: () -> Double
    private let allDevices: () -> [String]
    let window: Int

    init(
        ingest: Ingest, journal: Journal, sessions: SessionRegistry, metrics: GatewayMetrics, logger: Logger,
        clock: @escaping () -> Double, allDevices: @escaping () -> [String], window: Int = PublisherStream.defaultWindow
    ) {
        self.ingest = ingest
        self.journal = journal
        self.sessions = sessions
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.allDevices = allDevices
        self.window = window
    }

    /// The session authenticated as a publisher.
    func start(_ session: StreamSession) {
        session.role = .publisher
        session.publisher = PublisherState(window: window)
        session.queueControl([
            "type": "auth_ok", "role": "publisher", "version": .string(session.version.rawValue),
            "window": .number(Double(window)),
        ])
        // Which subprotocol: on a session's own it is read ~500 bytes a turn, a fraction of the stream's rate.
        logger.info("publisher session opened", metadata: session.metadata(["subprotocol": "\(session.transport.subprotocol)"]))
    }

    /// One text message of a publisher session.
    func received(_ session: StreamSession, _ bytes: [UInt8]) {
        guard let state = session.publisher else { return }
        if case .item(let number, let id, let body) = state.stream.receive(bytes) {
            apply(number, id: id, body: body, state)
        }
        awaitCommit(session, state)
        state.updateFlow(session.transport)
        session.transport.requestWritable()
    }

    private func apply(_ item: UInt64, id: JSONValue?, body: [String: JSONValue], _ state: PublisherState) {
        let request: IngestRequest
        do {
            request = try IngestRequest.native(body, allDevices: allDevices, now: clock())
        } catch {
            metrics.reject("validation")
            return state.stream.reject(item, id: id, error)
        }
        guard case .routed(let outcome) = ingest.submit(request) else { return }
        switch Ingest.verdict(outcome, command: request.command) {
        case .refused(let error):
            metrics.reject(error.rule == "exists" ? "no_target" : "no_relay")
            state.stream.reject(item, id: id, error)
        case .accepted(let unknown):
            if !unknown.isEmpty {
                state.stream.warn(item, id: id, FieldWarning(
                    field: "targets", rule: "exists", message: "no such device: '\(unknown.joined(separator: "', '"))'"))
            }
            for warning in request.accepted.warnings { state.stream.warn(item, id: id, warning) }
        }
    }

    /// The items of this turn are accepted once its commit completes (at once with the store off).
    private func awaitCommit(_ session: StreamSession, _ state: PublisherState) {
        let (mark, new) = state.mark(for: journal.turn)
        mark.through = state.stream.items
        guard new else { return }
        journal.whenCommitted { [weak self, weak session] committed in
            guard let self, let session, let state = session.publisher, !session.closing else { return }
            guard committed else { return self.storeFailed(session, state) }
            state.completed(mark)
            state.updateFlow(session.transport)
            session.transport.requestWritable()
        }
    }

    /// Nothing after the last accept is known to be stored: the publisher is told so and closed (1011), and sends the
    /// rest again on a new session.
    private func storeFailed(_ session: StreamSession, _ state: PublisherState) {
        let through = state.stream.committed
        logger.error("store failed: publisher session closed", metadata: session.metadata(["accepted_through": "\(through)"]))
        session.queueControl([
            "type": "error", "through": .number(Double(through)),
            "message": .string("the update could not be stored; items after \(through) were not accepted: send them again"),
        ])
        sessions.close(session, code: .internalError, reason: "store failed")
    }
}
