import CLWSLogFilter
import CLibWebSockets
#if canImport(Glibc)
import Glibc
#endif

/// A standalone event loop for outgoing WebSockets (for tools such as the `lanpush` CLI): its own lws
/// context with no listener (`CONTEXT_PORT_NO_LISTEN`), OpenSSL initialised for `wss://`, timers.
/// A daemon that already runs an ``LWSServer`` opens its client connections on the server's loop instead
/// (``LWSServer/connectWebSocket(url:subprotocol:headers:allowInsecureTLS:delegate:)``).
///
/// Threading — the same rules as ``LWSServer``; only `lws_cancel_service` is thread-safe:
/// - ``run()`` services the loop on the calling thread (the *loop thread*) until stopped.
/// - Every ``WSClientDelegate`` callback, ``onWake`` and every timer body run on the loop thread.
/// - Every method and property of the loop, ``WSClientConnection`` and ``LWSTimer`` must be called on the
///   loop thread — except ``wake()`` and ``requestStop()``, which any thread may call at any time. Before
///   `run()` starts, the creating thread may use the loop (`connectWebSocket`, `schedule`, `onWake`) as
///   long as nothing else touches it concurrently.
/// - To hand work to the loop from another thread: enqueue it under your own lock, call ``wake()``, and
///   drain the queue in ``onWake``.
/// - Debug builds check the loop thread (``LoopConfined/assertOnLoop(file:line:)``).
public final class WSClientLoop: LoopConfined, @unchecked Sendable {
    public let options: WSClientOptions

    /// Runs on the loop thread after ``wake()`` (wakes may merge, and an occasional call may come without
    /// a wake: drain your queue, don't count calls). Set before `run()` or on the loop thread.
    public var onWake: (() -> Void)?

    // MARK: loop-confined state

    /// The context, its event loop, timers, wake and C memory; the waker is the only part other threads touch.
    private let loop = LoopContext()
    private var engine: WSClientEngine!
    /// The event loop actually in use (``WSClientOptions/eventLoop``, or the next one down without its plugin).
    public var eventLoop: LWSEventLoopKind { loop.kind }
    public var loopThread: LoopThread { loop.thread }
    private var stopping = false
    private var finished = false
    private var hasRun = false

    /// Creates the context and its client vhost. Throws ``WSClientError/setupFailed(_:)`` when lws cannot.
    public init(options: WSClientOptions = WSClientOptions()) throws(WSClientError) {
        self.options = options
        let me = Unmanaged.passUnretained(self).toOpaque()

        lanpush_lws_set_log_level(options.libraryLogMask, nil)

        let engine = WSClientEngine(options: options, loopThread: loop.thread) { [weak self] seconds, body in
            self?.schedule(after: seconds, body)
        }
        self.engine = engine
        var info = lws_context_creation_info()
        info.options = lanpush_opt_explicit_vhosts() | lanpush_opt_do_ssl_global_init()
        info.user = me
        info.count_threads = 1
        info.fd_limit_per_thread = UInt32(max(16, options.fdLimit))
        info.port = -1  // CONTEXT_PORT_NO_LISTEN
        info.timeout_secs = UInt32(max(1, options.connectTimeout))
        info.protocols = engine.protocolList
        guard let ctx = loop.create(&info, want: options.eventLoop, fdBudget: max(16, options.fdLimit)) else {
            engine.contextDestroyed()
            throw .setupFailed("lws_create_context failed")
        }
        engine.attach(ctx)
        do {
            try engine.ensureVhost()
        } catch {
            loop.destroy(willDestroy: engine.contextWillBeDestroyed, didDestroy: engine.contextDestroyed)
            throw error
        }
        engine.onWaitCancelled = { [unowned self] in self.loopWoken() }
        engine.onIdle = { [unowned self] in
            if self.stopping { self.finished = true }
        }
        loop.acceptWakes()
    }

    deinit { tearDown() }

    // MARK: - Connections

    /// Starts connecting to `url` (`ws://` or `wss://`; `http(s)://` are accepted as aliases), offering
    /// `subprotocol` when given and sending `headers` with the upgrade request (e.g. `Authorization`).
    /// `wss://` verifies the server's certificate and host name against the system CA store (plus
    /// ``WSClientOptions/caFile``) unless `allowInsecureTLS`. Loop thread only (or before `run()`).
    ///
    /// Throws for a malformed URL or header, or once the loop is stopping. Every other failure — DNS,
    /// refused, TLS, a non-101 answer, timeout — arrives as ``WSClientDelegate/wsClientConnectFailed(_:error:)``
    /// from the loop, never from inside this call. Host names are resolved with a blocking `getaddrinfo`
    /// on the loop thread (lws 4.1 as Debian builds it has no asynchronous DNS): prefer addresses.
    ///
    /// `localAddress` binds the socket to that local IP address (or interface name) before connecting, e.g. one
    /// of 127.0.0.x so that a load tool's many connections come from several addresses, as many hosts would.
    @discardableResult
    public func connectWebSocket(
        url: String, subprotocol: String? = nil, headers: [(String, String)] = [], allowInsecureTLS: Bool = false,
        localAddress: String? = nil, delegate: WSClientDelegate
    ) throws(WSClientError) -> WSClientConnection {
        assertOnLoop()
        guard loop.context != nil, !stopping, !loop.tearingDown else { throw .notRunning }
        return try engine.connect(
            url: url, subprotocol: subprotocol, headers: headers, allowInsecureTLS: allowInsecureTLS,
            localAddress: localAddress, delegate: delegate)
    }

    /// Connections not yet closed (connecting or open). Loop thread only.
    public var connectionCount: Int {
        assertOnLoop()
        return engine?.connections.count ?? 0
    }

    // MARK: - Loop

    /// Services the loop on the calling thread until ``requestStop()`` completes, then closes whatever is
    /// left (delegates still get their last callback, on this thread), destroys the context and returns.
    /// Call once.
    public func run() {
        guard loop.context != nil, !hasRun else { return }
        hasRun = true
        loop.thread.enter()
        if loop.waker.stopRequested { beginStop() }
        while !finished {
            if !loop.runOnce() { break }
        }
        tearDown()
        loop.thread.exit()
    }

    /// Thread-safe: wakes the loop; ``onWake`` runs on the loop thread soon after. No-op once stopped.
    public func wake() { loop.waker.wake() }

    /// Thread-safe: asks the loop to stop. On the loop thread every open connection then gets a 1001
    /// "going away" close frame, pending ones are abandoned, and `run()` returns once they are all gone or
    /// after ``WSClientOptions/stopDrainSeconds``.
    public func requestStop() { loop.waker.requestStop() }

    /// `true` once a stop has begun on the loop. Loop thread only.
    public var isStopping: Bool {
        assertOnLoop()
        return stopping
    }

    private func loopWoken() {
        if !hasRun { return }  // lws also cancels once while creating the context
        if loop.waker.stopRequested && !stopping { beginStop() }
        onWake?()
    }

    private func beginStop() {
        guard !stopping else { return }
        stopping = true
        engine.closeAll(code: 1001, reason: "going away")
        if engine.connections.isEmpty {
            finished = true
        } else {
            schedule(after: options.stopDrainSeconds) { [weak self] in self?.finished = true }
        }
    }

    /// Open connections get their last callbacks inside `lws_context_destroy`; what is left is reported after.
    private func tearDown() {
        guard loop.context != nil else { return }
        loop.destroy(willDestroy: engine.contextWillBeDestroyed, didDestroy: engine.contextDestroyed)
        onWake = nil
    }

    // MARK: - Timers

    /// Runs `body` on the loop thread after `seconds` (lws timer, ~1 ms resolution). Loop thread only (or
    /// before `run()`). Returns a handle to cancel it. Timers still pending when the loop stops never run.
    @discardableResult
    public func schedule(after seconds: Double, _ body: @escaping () -> Void) -> LWSTimer {
        assertOnLoop()
        return loop.schedule(after: seconds, body)
    }
}

