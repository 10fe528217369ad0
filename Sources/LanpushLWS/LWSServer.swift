import CLWSLogFilter
import CLibWebSockets

/// The HTTP + WebSocket server: one lws context, one vhost, one port, one protocol (`"lanpush.v1"`,
/// index 0) that serves every HTTP request and every WebSocket on ``LWSServerOptions/webSocketPath``.
///
/// Threading — lws is single-threaded; only `lws_cancel_service` is thread-safe:
/// - ``run()`` services the event loop on the calling thread (the *loop thread*) until stopped.
/// - Every delegate callback runs on the loop thread.
/// - Every method and property of the server, ``WSConnection``, ``HTTPResponse`` and ``LWSTimer`` must be
///   called on the loop thread — except ``wake()`` and ``requestStop()``, which any thread may call at
///   any time, and ``port``, which is immutable after `init`. Before `run()` starts, the creating thread
///   may use the server (e.g. `schedule`) as long as nothing else touches it concurrently. Debug builds check
///   this (``LoopConfined/assertOnLoop(file:line:)``, which the delegate may use too, and ``LoopBound``).
/// - To hand work to the loop from another thread: enqueue it under your own lock, call ``wake()``, and
///   drain the queue in ``LWSServerDelegate/loopWoken()``.
///
/// The server retains its delegate until `run()` returns (or the server is deinitialized without running),
/// so a delegate that owns the server does not leak once the server has stopped.
///
/// HTTP behaviour worth knowing (lws 4.1.6; docs/PROTOCOL.md, "HTTP limits of libwebsockets 4.1.6"):
/// - Every request lws can parse reaches the delegate or gets a JSON answer from the adapter (411, 413,
///   400, 405, 404 for WebSocket upgrades off ``LWSServerOptions/webSocketPath``, 426 for a WebSocket version
///   other than 13, 400/408 for headers unfinished at ``LWSServerOptions/headerTimeout``). lws itself still
///   answers a few malformed requests (unknown method such as `TRACE`, an unknown `Upgrade:` token, a garbage
///   request line) with its HTML `403`, and silently closes requests whose headers exceed
///   ``LWSServerOptions/maxHeaderBytes``; no hook exists for those.
/// - Keep-alive is supported. Pipelined requests with bodies are not handled correctly by lws 4.1 (it
///   busy-loops and mis-frames the next request), so when lws holds a pipelined request behind a body,
///   the current answer goes out with `Connection: close` and the connection closes after it (a
///   pipelining client retries the rest). Pipelined requests without bodies are served in order.
/// - While a request awaits its answer, lws does not read from that connection, so a client that
///   disconnects is usually noticed only when the answer is written (``HTTPResponse/respond(status:headers:body:contentType:)``
///   is then harmless).
/// - `Upgrade: h2c` is let through (lws switches to HTTP/2; requests arrive as streams through the same
///   callbacks). A request body sent with the h2c upgrade request itself is not handled by lws 4.1.
public final class LWSServer: LoopConfined, @unchecked Sendable {
    /// The TCP port actually listened on (the kernel's pick when the options asked for port 0).
    public private(set) var port: Int = 0
    public let options: LWSServerOptions
    /// The per-thread service buffer lws 4.1 allocates when `pt_serv_buf_size` is left 0 (`lws_create_context`).
    static let lwsServiceBufferDefault = 4096
    /// The event loop actually in use (``LWSServerOptions/eventLoop``, or the next one down without its plugin).
    public var eventLoop: LWSEventLoopKind { loop.kind }
    public var loopThread: LoopThread { loop.thread }

    // MARK: loop-confined state

    private(set) var delegate: LWSServerDelegate?
    /// The context, its event loop, timers, wake and C memory; the waker is the only part other threads touch.
    let loop = LoopContext()
    private var nextID: UInt64 = 0
    private var stopping = false
    private var finished = false
    private var hasRun = false
    let out = WriteBuffer()
    /// The frames a WebSocket session writes in one turn, written together.
    let frames: FrameBatch
    var admission: ConnectionAdmission
    private(set) var capture: RequestCapture!
    private(set) var http: HTTPTransactions!
    private(set) var sessions: WebSocketSessions!
    private(set) var responses: HTTPResponseWriter!

    // MARK: outgoing WebSockets on this loop (LWSServer+Client.swift)

    /// Created by the first client connection: a client vhost in this context.
    var clientEngine: WSClientEngine?
    var clientOptions = WSClientOptions()

    /// Creates the context and the listening vhost. Throws ``LWSServerError/listenFailed(host:port:)`` when
    /// the address cannot be bound. Call ``run()`` afterwards to serve.
    public init(options: LWSServerOptions, delegate: LWSServerDelegate) throws {
        try options.validate()
        self.options = options
        self.delegate = delegate
        admission = ConnectionAdmission(limit: options.pendingPerAddress, openLimit: options.connectionsPerAddress)
        capture = RequestCapture(extraHeaderNames: options.extraHeaderNames)
        responses = HTTPResponseWriter(out: out, txPacketSize: options.txPacketSize)
        frames = FrameBatch(limit: options.txPacketSize)
        http = HTTPTransactions(server: self, capture: capture, writer: responses)
        sessions = WebSocketSessions(server: self, capture: capture, writer: responses)

        let memory = loop.memory
        let protocols = memory.protocols(
            names: options.webSocketProtocols, callback: lanpushLWSServerCallback,
            perSessionDataSize: MemoryLayout<UInt64>.size, rxBufferSize: options.rxBufferSize, id: 1,
            txPacketSize: options.txPacketSize, rxBufferSizes: options.receiveBuffers)
        let me = Unmanaged.passUnretained(self).toOpaque()

        lanpush_lws_set_log_level(options.libraryLogMask, nil)

        var info = lws_context_creation_info()
        // DO_SSL_GLOBAL_INIT: OpenSSL for the `wss://` client connections (LWSServer+Client.swift) and, with
        // `options.tls`, for the listening vhost; neither asked for, OpenSSL is never initialised.
        info.options = lanpush_opt_explicit_vhosts() | lanpush_opt_validate_utf8() | lanpush_opt_disable_os_ca_certs()
        if options.initialisesOpenSSL { info.options |= lanpush_opt_do_ssl_global_init() }
        info.user = me
        info.count_threads = 1
        if options.fdLimitPerThread > 0 { info.fd_limit_per_thread = UInt32(options.fdLimitPerThread) }
        info.port = -1  // CONTEXT_PORT_NO_LISTEN: the vhost below listens
        info.protocols = protocols
        // Context-level (not vhost) settings in lws 4.1:
        info.server_string = memory.string("lanpush")
        info.max_http_header_pool = UInt16(clamping: options.httpHeaderPool)
        info.max_http_header_data = UInt16(clamping: options.maxHeaderBytes)
        // Every read lands in this one buffer per thread first: a subprotocol's larger receive buffer needs it as large.
        if let largest = options.receiveBuffers.values.max(), largest > Self.lwsServiceBufferDefault {
            info.pt_serv_buf_size = UInt32(largest)
        }

        guard let ctx = loop.create(&info, want: options.eventLoop, fdBudget: options.fdLimitPerThread) else {
            throw LWSServerError.contextCreationFailed
        }

        // "0.0.0.0" and "::" mean every address: no iface (lws binds the wildcard).
        let host = options.host
        let isWildcard = host.isEmpty || host == "0.0.0.0" || host == "::" || host == "*"
        var vinfo = lws_context_creation_info()
        vinfo.port = Int32(options.port)
        vinfo.iface = isWildcard ? nil : memory.string(host)
        vinfo.protocols = protocols
        vinfo.extensions = nil  // no permessage-deflate
        vinfo.mounts = nil  // every request reaches the protocol callback
        vinfo.vhost_name = memory.string("lanpush")
        vinfo.user = me
        // No lws validity timers: WebSocketSessions pings and hangs up itself (KeepaliveWheel.swift). Without a policy
        // of its own the vhost would take the context's default (a ping every 300 s), a timer per connection again.
        vinfo.retry_and_idle_policy = memory.retryPolicy(pingSeconds: 0, hangupSeconds: 0)
        vinfo.keepalive_timeout = Int32(options.keepAliveTimeout)
        vinfo.timeout_secs = 20
        // lws arms this whenever a connection takes a header table (at accept, and when a keep-alive connection
        // starts its next request) and closes the connection silently when it passes. For a first request the
        // adapter's once-a-second sweep (ServerCallbacks.swift) answers before it; lws's is the backstop and the
        // only one for later requests on a keep-alive connection.
        vinfo.timeout_secs_ah_idle = UInt32(options.headerTimeout + 2)
        var vopts = lanpush_opt_validate_utf8()
        if !host.contains(":") && host != "*" && !host.isEmpty {
            // IPv4 literal, "0.0.0.0" or an interface name: plain IPv4 socket.
            if isWildcard || host.split(separator: ".").count == 4 { vopts |= lanpush_opt_disable_ipv6() }
        }
        if let tls = options.tls {
            vinfo.ssl_cert_filepath = memory.string(tls.certificatePath)
            vinfo.ssl_private_key_filepath = memory.string(tls.privateKeyPath)
            // TLS 1.2 offers only AEAD suites with forward secrecy (OpenSSL's list would also take CBC-SHA1 ones such
            // as ECDHE-ECDSA-AES256-SHA); TLS 1.3's suites are all AEAD and stay OpenSSL's.
            vinfo.ssl_cipher_list = memory.string(LWSTLSOptions.tls12Ciphers)
            // Plain stays possible on the TLS port: for loopback at least (HA's relay ingest on the same host).
            vopts |= lanpush_opt_allow_non_ssl_on_ssl_port() | lanpush_opt_allow_http_on_https_listener()
        }
        vinfo.options = vopts

        let vh = lws_create_vhost(ctx, &vinfo)
        let bound = vh.map { Int(lws_get_vhost_listen_port($0)) } ?? 0
        guard vh != nil, bound > 0 else {
            loop.destroy()
            throw LWSServerError.listenFailed(host: host, port: options.port)
        }
        port = bound
        loop.acceptWakes()
    }

    deinit {
        loop.destroy(
            willDestroy: { clientEngine?.contextWillBeDestroyed() },
            didDestroy: { clientEngine?.contextDestroyed() })
    }

    // MARK: - Loop

    /// Services the loop on the calling thread until ``requestStop()`` completes, then closes every
    /// remaining connection (``LWSServerDelegate/wsClosed(_:)`` is still delivered, on this thread),
    /// destroys the context and returns. Call once.
    public func run() {
        guard loop.context != nil, !hasRun else { return }
        hasRun = true
        loop.thread.enter()
        if loop.waker.stopRequested { beginStop() }
        while !finished {
            http.flushAnswers()
            sessions.flushWritable()
            if !loop.runOnce() { break }
            // What the turn queued for sessions goes out before its commit: LAN delivery never waits for the disk,
            // only HTTP answers do (written at the top of the next pass, once `loopTurnEnded` has committed).
            sessions.flushWritable()
            delegate?.loopTurnEnded()
        }
        tearDown()
        loop.thread.exit()
    }

    private func tearDown() {
        loop.destroy(
            willDestroy: {
                sessions.abandonAll()
                clientEngine?.contextWillBeDestroyed()
            },
            didDestroy: {
                // After the context and its loop: lws points into the client engine's memory until then.
                clientEngine?.contextDestroyed()
                clientEngine = nil
            })
        http.removeAll()
        sessions.removeAll()
        delegate = nil
    }

    /// Thread-safe: wakes the loop; the delegate's ``LWSServerDelegate/loopWoken()`` runs on the loop thread
    /// soon after. Wakes may merge. No-op once the server has stopped.
    public func wake() { loop.waker.wake() }

    /// Thread-safe: asks the loop to stop. On the loop thread the server then refuses new connections,
    /// sends every WebSocket a 1001 "shutdown" close frame, waits up to
    /// ``LWSServerOptions/stopDrainSeconds`` for the peers to answer, and makes ``run()`` return.
    public func requestStop() { loop.waker.requestStop() }

    /// `LWS_CALLBACK_EVENT_WAIT_CANCELLED`: a wake or a stop request from any thread.
    func loopWoken() {
        // lws also sends one while creating the context, before run(): not for the delegate.
        if isTearingDown || !hasRun { return }
        if loop.waker.stopRequested && !stopping { beginStop() }
        delegate?.loopWoken()
    }

    private func beginStop() {
        guard !stopping else { return }
        stopping = true
        sessions.closeAll(code: 1001, reason: "shutdown")
        clientEngine?.closeAll(code: 1001, reason: "going away")
        if sessions.isEmpty && clientsGone {
            finished = true
        } else {
            schedule(after: options.stopDrainSeconds) { [weak self] in self?.finished = true }
        }
    }

    /// A connection (server or client side) went away: the stop may be complete.
    func connectionGone() {
        if stopping && sessions.isEmpty && clientsGone { finished = true }
    }

    /// No outgoing WebSocket left (they count for the stop drain too).
    var clientsGone: Bool { clientEngine?.connections.isEmpty ?? true }

    /// The context for new client connections: `nil` once a stop has begun.
    var contextForClients: OpaquePointer? { isStopping ? nil : loop.context }

    /// `true` once a stop has begun (after ``requestStop()`` reached the loop). Loop thread only.
    public var isStopping: Bool { stopping || isTearingDown }

    /// From the start of the teardown (or when the context could not be made).
    var isTearingDown: Bool { loop.tearingDown || loop.context == nil }

    // MARK: - Timers

    /// Runs `body` on the loop thread after `seconds` (lws timer, ~1 ms resolution). Loop thread only (or
    /// before `run()`). Returns a handle to cancel it. Timers still pending when the server stops never run.
    @discardableResult
    public func schedule(after seconds: Double, _ body: @escaping () -> Void) -> LWSTimer {
        assertOnLoop()
        return loop.schedule(after: seconds, body)
    }

    // MARK: - For the parts of the server

    func newID() -> UInt64 {
        nextID &+= 1
        return nextID
    }

    /// The body of an answer the adapter gives on its own, rendered by the delegate when it wants to.
    func rejectionBody(status: Int, message: String, field: String, rule: String) -> [UInt8] {
        let rejection = HTTPRejection(status: status, message: message, field: field, rule: rule)
        return delegate?.rejectHTTP(rejection) ?? rejection.defaultJSON
    }

    func deferWritable(_ conn: WSConnection) -> Bool { sessions.deferWritable(conn) }

    func httpTransactionAlive(_ id: UInt64) -> Bool { http.isAwaitingAnswer(id) }

    func queueHTTPResponse(transactionID id: UInt64, _ response: PendingHTTPResponse) {
        guard !isTearingDown else { return }
        http.queueResponse(transactionID: id, response)
    }
}
