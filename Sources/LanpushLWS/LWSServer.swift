import CLibWebSockets
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP + WebSocket server: one lws context, one vhost, one port, one protocol (`"lanpush.v1"`,
/// index 0) that serves every HTTP request and every WebSocket on ``LWSServerOptions/webSocketPath``.
///
/// Threading — lws is single-threaded; only `lws_cancel_service` is thread-safe:
/// - ``run()`` services the event loop on the calling thread (the *loop thread*) until stopped.
/// - Every delegate callback runs on the loop thread.
/// - Every method and property of the server, ``WSConnection``, ``HTTPResponse`` and ``LWSTimer`` must be
///   called on the loop thread — except ``wake()`` and ``requestStop()``, which any thread may call at
///   any time, and ``port``, which is immutable after `init`. Before `run()` starts, the creating thread
///   may use the server (e.g. `schedule`) as long as nothing else touches it concurrently.
/// - To hand work to the loop from another thread: enqueue it under your own lock, call ``wake()``, and
///   drain the queue in ``LWSServerDelegate/loopWoken()``.
///
/// The server retains its delegate until `run()` returns (or the server is deinitialized without running),
/// so a delegate that owns the server does not leak once the server has stopped.
///
/// HTTP behaviour worth knowing (lws 4.1.6):
/// - Every request lws can parse reaches the delegate or gets a JSON answer from the adapter (411, 413,
///   400, 405, 404 for WebSocket upgrades off ``LWSServerOptions/webSocketPath``). lws itself still answers
///   a few malformed requests (unknown method such as `TRACE`, an unknown `Upgrade:` token, a garbage
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
public final class LWSServer: @unchecked Sendable {
    /// The protocol name (also accepted in `Sec-WebSocket-Protocol`; a handshake without that header binds
    /// to the same protocol).
    public static let protocolName = "lanpush.v1"

    /// The TCP port actually listened on (the kernel's pick when the options asked for port 0).
    public private(set) var port: Int = 0
    public let options: LWSServerOptions
    /// The event loop actually in use (``LWSServerOptions/eventLoop``, or `.poll` when libuv was unavailable).
    public var eventLoop: LWSEventLoopKind { loop.kind }

    // MARK: loop-confined state

    private var delegate: LWSServerDelegate?
    private var context: OpaquePointer?
    private var nextID: UInt64 = 0
    private var httpTransactions: [UInt64: HTTPTransaction] = [:]
    private var webSockets: [UInt64: WSConnection] = [:]
    private var pendingUpgrades: [OpaquePointer: HTTPRequest] = [:]
    /// The peer address of each live connection, looked up once (keep-alive requests reuse it).
    private var peerAddresses: [OpaquePointer: String] = [:]
    private var admission: ConnectionAdmission
    let timers = LoopTimers()
    private let loop = EventLoop()
    private var stopping = false
    private var finished = false
    private var hasRun = false
    private var tearingDown = false
    private let out = WriteBuffer()
    /// Connections that asked to write during the current loop turn (``flushWritable()``).
    private var wantWritable: [WSConnection] = []
    private var flushing = false

    // MARK: outgoing WebSockets on this loop (LWSServer+Client.swift)

    /// Created by the first client connection: a client vhost in this context.
    var clientEngine: WSClientEngine?
    var clientOptions = WSClientOptions()

    // MARK: cross-thread state (the only part other threads touch)

    private let waker = LoopWaker()

    // MARK: memory lws points into for the context's lifetime

    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolNameC: UnsafeMutablePointer<CChar>
    private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>
    private let retryTable: UnsafeMutablePointer<UInt32>
    private let ifaceC: UnsafeMutablePointer<CChar>?
    private let serverStringC: UnsafeMutablePointer<CChar>
    private let vhostNameC: UnsafeMutablePointer<CChar>

    /// Creates the context and the listening vhost. Throws ``LWSServerError/listenFailed(host:port:)`` when
    /// the address cannot be bound. Call ``run()`` afterwards to serve.
    public init(options: LWSServerOptions, delegate: LWSServerDelegate) throws {
        guard (0...65535).contains(options.port) else {
            throw LWSServerError.invalidOptions("port \(options.port) out of range")
        }
        guard options.pingInterval >= 1, options.pingTimeout >= 1,
            options.pingInterval + options.pingTimeout <= 65535
        else {
            throw LWSServerError.invalidOptions("pingInterval and pingTimeout must be >= 1 s")
        }
        guard options.maxBodyBytes >= 0, options.rxBufferSize >= 128, options.txPacketSize >= 1024 else {
            throw LWSServerError.invalidOptions("buffer sizes too small")
        }
        guard options.httpHeaderPool >= 1, options.headerTimeout >= 1, options.pendingPerAddress >= 1,
            options.closeHandshakeTimeout >= 1
        else {
            throw LWSServerError.invalidOptions("httpHeaderPool, headerTimeout, pendingPerAddress and closeHandshakeTimeout must be >= 1")
        }
        self.options = options
        admission = ConnectionAdmission(limit: options.pendingPerAddress)
        self.delegate = delegate

        protocolNameC = strdupOrDie(LWSServer.protocolName)
        serverStringC = strdupOrDie("lanpush")
        vhostNameC = strdupOrDie("lanpush")

        // "0.0.0.0" and "::" mean every address: no iface (lws binds the wildcard).
        let host = options.host
        let isWildcard = host.isEmpty || host == "0.0.0.0" || host == "::" || host == "*"
        ifaceC = isWildcard ? nil : strdupOrDie(host)

        retryTable = .allocate(capacity: 1)
        retryTable.initialize(to: 1000)
        retryPolicy = .allocate(capacity: 1)
        var retry = lws_retry_bo_t()
        retry.retry_ms_table = UnsafePointer(retryTable)
        retry.retry_ms_table_count = 1
        retry.conceal_count = 1
        retry.secs_since_valid_ping = UInt16(options.pingInterval)
        retry.secs_since_valid_hangup = UInt16(options.pingInterval + options.pingTimeout)
        retry.jitter_percent = 0
        retryPolicy.initialize(to: retry)

        protocols = .allocate(capacity: 2)
        var proto = lws_protocols()
        proto.name = UnsafePointer(protocolNameC)
        proto.callback = lanpushLWSCallback
        proto.per_session_data_size = MemoryLayout<UInt64>.size
        proto.rx_buffer_size = options.rxBufferSize
        proto.id = 1
        proto.user = nil
        proto.tx_packet_size = options.txPacketSize
        protocols.initialize(to: proto)
        (protocols + 1).initialize(to: lws_protocols())  // terminator


        // All stored properties are set: `self` may be handed to lws now.
        let me = Unmanaged.passUnretained(self).toOpaque()

        lws_set_log_level(options.libraryLogMask, nil)

        var info = lws_context_creation_info()
        // DO_SSL_GLOBAL_INIT: OpenSSL for the `wss://` client connections (LWSServer+Client.swift); the
        // listening vhost itself stays plain (no TLS options on it).
        info.options = lanpush_opt_explicit_vhosts() | lanpush_opt_validate_utf8()
            | lanpush_opt_disable_os_ca_certs() | lanpush_opt_do_ssl_global_init()
        info.user = me
        info.count_threads = 1
        if options.fdLimitPerThread > 0 { info.fd_limit_per_thread = UInt32(options.fdLimitPerThread) }
        info.port = -1  // CONTEXT_PORT_NO_LISTEN: the vhost below listens
        info.protocols = UnsafePointer(protocols)
        // Context-level (not vhost) settings in lws 4.1:
        info.server_string = UnsafePointer(serverStringC)
        info.max_http_header_pool = UInt16(clamping: options.httpHeaderPool)
        info.max_http_header_data = UInt16(clamping: options.maxHeaderBytes)

        // With a budget, the soft RLIMIT_NOFILE equals it while lws sizes its tables (FileLimit.swift).
        guard let ctx = loop.createContext(&info, want: options.eventLoop, fdBudget: options.fdLimitPerThread) else {
            freeAllocations()
            throw LWSServerError.contextCreationFailed
        }
        context = ctx
        timers.context = ctx

        var vinfo = lws_context_creation_info()
        vinfo.port = Int32(options.port)
        vinfo.iface = UnsafePointer(ifaceC)
        vinfo.protocols = UnsafePointer(protocols)
        vinfo.extensions = nil  // no permessage-deflate
        vinfo.mounts = nil  // every request reaches the protocol callback
        vinfo.vhost_name = UnsafePointer(vhostNameC)
        vinfo.user = me
        vinfo.retry_and_idle_policy = UnsafePointer(retryPolicy)
        vinfo.keepalive_timeout = Int32(options.keepAliveTimeout)
        vinfo.timeout_secs = 20
        // lws arms this whenever a connection takes a header table (at accept, and when a keep-alive connection
        // starts its next request) and closes the connection silently when it passes. For a first request the
        // adapter's own timer (`headerTimeoutPassed`) runs a second earlier and answers; lws's is the backstop and
        // the only one for later requests on a keep-alive connection.
        vinfo.timeout_secs_ah_idle = UInt32(options.headerTimeout + 1)
        var vopts = lanpush_opt_validate_utf8()
        if !host.contains(":") && host != "*" && !host.isEmpty {
            // IPv4 literal, "0.0.0.0" or an interface name: plain IPv4 socket.
            if isWildcard || host.split(separator: ".").count == 4 { vopts |= lanpush_opt_disable_ipv6() }
        }
        vinfo.options = vopts

        let vh = lws_create_vhost(ctx, &vinfo)
        let bound = vh.map { Int(lws_get_vhost_listen_port($0)) } ?? 0
        guard vh != nil, bound > 0 else {
            tearingDown = true
            timers.cancelAll()
            lws_context_destroy(ctx)
            context = nil
            loop.destroy()
            freeAllocations()
            throw LWSServerError.listenFailed(host: host, port: options.port)
        }
        port = bound
        waker.attach(ctx)
    }

    deinit {
        if let ctx = context {
            tearingDown = true
            waker.attach(nil)
            timers.cancelAll()
            clientEngine?.contextWillBeDestroyed()
            lws_context_destroy(ctx)
            context = nil
            loop.destroy()
            clientEngine?.contextDestroyed()
            clientEngine = nil
            freeAllocations()
        }
    }

    private func freeAllocations() {
        // Only after lws_context_destroy (or when no context was made).
        free(protocolNameC)
        free(serverStringC)
        free(vhostNameC)
        if let ifaceC { free(ifaceC) }
        protocols.deinitialize(count: 2)
        protocols.deallocate()
        retryPolicy.deinitialize(count: 1)
        retryPolicy.deallocate()
        retryTable.deinitialize(count: 1)
        retryTable.deallocate()
    }

    // MARK: - Loop

    /// Services the loop on the calling thread until ``requestStop()`` completes, then closes every
    /// remaining connection (``LWSServerDelegate/wsClosed(_:)`` is still delivered, on this thread),
    /// destroys the context and returns. Call once.
    public func run() {
        guard let ctx = context, !hasRun else { return }
        hasRun = true
        if waker.stopRequested { beginStop() }
        while !finished {
            flushWritable()
            if !loop.runOnce(ctx) { break }
        }
        tearDown(ctx)
    }

    /// Queues `conn` for ``flushWritable()``; `false` when it must go through lws's writable callback instead
    /// (during the flush itself, so the loop still wakes for it, and from teardown on).
    func deferWritable(_ conn: WSConnection) -> Bool {
        guard !flushing, !tearingDown, context != nil else { return false }
        if !conn.writeQueued {
            conn.writeQueued = true
            wantWritable.append(conn)
        }
        return true
    }

    /// After each loop turn: every connection that asked to write gets its ``LWSServerDelegate/wsWritable(_:)``
    /// now, when lws holds nothing unsent for it, instead of through lws's writable callback.
    ///
    /// Why: the callback costs a POLLOUT flip on and off per write, and on the libuv loop each flip removes the
    /// socket from epoll and adds it back (docs/BENCHMARKS.md), plus a loop turn of latency. Changes that arrive
    /// in one turn still merge (one call per connection per turn). A frame the kernel does not take whole is
    /// buffered by lws, which flushes it on POLLOUT; a write error or a close goes through the callback, which
    /// is where lws can close the connection.
    private func flushWritable() {
        guard !wantWritable.isEmpty else { return }
        let batch = wantWritable
        wantWritable.removeAll(keepingCapacity: true)
        flushing = true
        defer { flushing = false }
        for conn in batch {
            conn.writeQueued = false
            guard let wsi = conn.wsi, !conn.closing, !conn.writeFailed else { continue }
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                continue
            }
            conn.inWritable = true
            conn.bytesSinceCheck = 0
            delegate?.wsWritable(conn)
            conn.inWritable = false
            if conn.writeFailed || conn.closing { lws_callback_on_writable(wsi) }
        }
    }

    private func tearDown(_ ctx: OpaquePointer) {
        waker.attach(nil)
        tearingDown = true
        for conn in webSockets.values { conn.closing = true }
        timers.cancelAll()
        clientEngine?.contextWillBeDestroyed()
        lws_context_destroy(ctx)  // remaining sessions get their CLOSED callbacks here
        context = nil
        loop.destroy()
        clientEngine?.contextDestroyed()  // after the context: lws points into its memory until then
        clientEngine = nil
        httpTransactions.removeAll()
        webSockets.removeAll()
        wantWritable.removeAll()
        pendingUpgrades.removeAll()
        freeAllocations()
        delegate = nil
    }

    /// Thread-safe: wakes the loop; the delegate's ``LWSServerDelegate/loopWoken()`` runs on the loop thread
    /// soon after. Wakes may merge. No-op once the server has stopped.
    public func wake() { waker.wake() }

    /// Thread-safe: asks the loop to stop. On the loop thread the server then refuses new connections,
    /// sends every WebSocket a 1001 "shutdown" close frame, waits up to
    /// ``LWSServerOptions/stopDrainSeconds`` for the peers to answer, and makes ``run()`` return.
    public func requestStop() { waker.requestStop() }

    private func beginStop() {
        guard !stopping else { return }
        stopping = true
        for conn in webSockets.values { conn.close(code: 1001, reason: "shutdown") }
        clientEngine?.closeAll(code: 1001, reason: "going away")
        if webSockets.isEmpty && clientsGone {
            finished = true
        } else {
            schedule(after: options.stopDrainSeconds) { [weak self] in self?.finished = true }
        }
    }

    /// No outgoing WebSocket left (they count for the stop drain too).
    var clientsGone: Bool { clientEngine?.connections.isEmpty ?? true }

    /// Called by the client engine when its last connection has gone.
    func clientsWentIdle() {
        if stopping && webSockets.isEmpty { finished = true }
    }

    /// The context for new client connections: `nil` once a stop has begun.
    var contextForClients: OpaquePointer? { stopping || tearingDown ? nil : context }

    /// Number of open WebSocket sessions. Loop thread only.
    public var webSocketCount: Int { webSockets.count }

    /// `true` once a stop has begun (after ``requestStop()`` reached the loop). Loop thread only.
    public var isStopping: Bool { stopping }

    // MARK: - Timers

    /// Runs `body` on the loop thread after `seconds` (lws timer, ~1 ms resolution). Loop thread only (or
    /// before `run()`). Returns a handle to cancel it. Timers still pending when the server stops never run.
    @discardableResult
    public func schedule(after seconds: Double, _ body: @escaping () -> Void) -> LWSTimer {
        tearingDown ? LWSTimer.inert : timers.schedule(after: seconds, body)
    }

    // MARK: - lws callback dispatch

    fileprivate func callback(
        _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
        _ inp: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            // lws also sends one while creating the context, before run(): not for the delegate.
            if tearingDown || !hasRun { return 0 }
            if waker.stopRequested && !stopping { beginStop() }
            delegate?.loopWoken()
            return 0

        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            if stopping || tearingDown { return 1 }
            return admission.admit(user) ? 0 : 1

        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            guard let wsi else { return 0 }
            // A connection waiting for a header table has no lws timeout at all (lws arms one only when it hands
            // out a table): the backstop covers the wait too.
            lws_set_timeout(wsi, PENDING_TIMEOUT_HOLDING_AH, Int32(clamping: options.headerTimeout + 1))
            if let serial = admission.bind(wsi) {
                schedule(after: Double(options.headerTimeout)) { [weak self] in
                    self?.headerTimeoutPassed(wsi, serial: serial)
                }
            }
            return 0

        // ---- HTTP ----
        case LWS_CALLBACK_HTTP:
            guard let wsi, let user else { return -1 }
            admission.headersDone(lws_get_network_wsi(wsi) ?? wsi)
            return httpRequestHeaders(wsi, user, inp, len)

        case LWS_CALLBACK_HTTP_BODY:
            guard let user, let tx = httpTransactions[sessionID(user)] else { return 0 }
            if tx.rejected || tx.dispatched { return 0 }
            if let inp, len > 0 {
                if tx.body.count + len > min(tx.expected, options.maxBodyBytes) {
                    reject(tx, status: 413, message: "request body larger than declared or allowed",
                           field: "body", rule: "max_body")
                    return 0
                }
                tx.body.append(contentsOf: UnsafeRawBufferPointer(start: inp, count: len))
            }
            return 0

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            guard let wsi, let user, let tx = httpTransactions[sessionID(user)] else { return 0 }
            if !tx.rejected && !tx.dispatched {
                dispatch(tx)
                return 0
            }
            // lws 4.1 re-delivers BODY_COMPLETION on every loop pass while a pipelined next request sits
            // in its input buffer, and then never reports the connection writable: answer from here.
            // Its input accounting is also off after that, so the connection closes after this answer
            // (RFC 9112 §9.3.2: a pipelining client retries the rest on a new connection).
            tx.pipelined = true
            if tx.response != nil { return writeHTTP(tx, wsi) }
            return 0

        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let wsi, let user, let tx = httpTransactions[sessionID(user)] else { return 0 }
            return writeHTTP(tx, wsi)

        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_HTTP_DROP_PROTOCOL:
            if let user {
                let id = sessionID(user)
                if id != 0 { httpTransactions.removeValue(forKey: id) }
            }
            return 0

        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            guard let wsi else { return -1 }
            admission.headersDone(wsi)
            return confirmUpgrade(wsi, inp)

        // ---- WebSocket ----
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            guard let wsi else { return 1 }
            if stopping || tearingDown { return 1 }
            return lwsHeader(wsi, WSI_TOKEN_GET_URI) == options.webSocketPath ? 0 : 1

        case LWS_CALLBACK_ESTABLISHED:
            guard let wsi, let user else { return -1 }
            return wsEstablished(wsi, user)

        case LWS_CALLBACK_RECEIVE:
            guard let wsi, let user, let conn = webSockets[sessionID(user)] else { return 0 }
            return wsReceive(conn, wsi, inp, len)

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let wsi, let user, let conn = webSockets[sessionID(user)] else { return 0 }
            if conn.closing { return closeNow(conn, wsi) }
            conn.inWritable = true
            conn.bytesSinceCheck = 0
            delegate?.wsWritable(conn)
            conn.inWritable = false
            if conn.writeFailed { return -1 }
            if conn.closing { return closeNow(conn, wsi) }
            return 0

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            guard let user, let conn = webSockets[sessionID(user)] else { return 0 }
            if let inp, len >= 2 {
                let b = inp.assumingMemoryBound(to: UInt8.self)
                conn.peerCloseCode = UInt16(b[0]) << 8 | UInt16(b[1])
            }
            // The answer to our own close frame: nothing more will come, close without echoing. Otherwise lws
            // echoes the peer's close frame, then closes.
            return conn.closeSent ? -1 : 0

        case LWS_CALLBACK_CLOSED:
            guard let user else { return 0 }
            let id = sessionID(user)
            guard id != 0, let conn = webSockets.removeValue(forKey: id) else { return 0 }
            conn.wsi = nil
            conn.closing = true
            delegate?.wsClosed(conn)
            if stopping && webSockets.isEmpty && clientsGone { finished = true }
            return 0

        // lws 4.1 turns a CONNECT request into a raw socket: answer 405 in JSON and close.
        case LWS_CALLBACK_RAW_ADOPT:
            if let wsi {
                admission.headersDone(wsi)
                lws_callback_on_writable(wsi)
            }
            return 0

        case LWS_CALLBACK_RAW_WRITEABLE:
            guard let wsi else { return -1 }
            let body = rejectionBody(
                status: 405, message: "method not allowed", field: "method", rule: "method_not_allowed")
            let head = "HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json\r\n"
                + "content-length: \(body.count)\r\nconnection: close\r\n\r\n"
            let bytes = Array(head.utf8) + body
            let p = out.payload(bytes.count)
            p.update(from: bytes, count: bytes.count)
            _ = lws_write(wsi, p, bytes.count, LWS_WRITE_HTTP)
            return -1

        case LWS_CALLBACK_WSI_DESTROY:
            if let wsi { admission.headersDone(wsi) }
            if let wsi, !pendingUpgrades.isEmpty { pendingUpgrades.removeValue(forKey: wsi) }
            if let wsi, !peerAddresses.isEmpty { peerAddresses.removeValue(forKey: wsi) }
            return 0

        default:
            return 0
        }
    }

    /// A connection that has not completed its first request's headers in ``LWSServerOptions/headerTimeout``: 400
    /// when a request line arrived (its headers are malformed in a way lws 4.1 cannot report, or unfinished), 408
    /// when nothing did; then the connection closes. lws would close it a second later without a word.
    private func headerTimeoutPassed(_ wsi: OpaquePointer, serial: UInt64) {
        guard !tearingDown, admission.isPending(wsi, serial: serial) else { return }
        admission.headersDone(wsi)
        let requestLineSeen = methodTokens.contains { lws_hdr_total_length(wsi, $0.0) > 0 }
        let rejection =
            requestLineSeen
            ? HTTPRejection(
                status: 400, message: "request headers malformed or incomplete after \(options.headerTimeout) s",
                field: "headers", rule: "header_timeout")
            : HTTPRejection(
                status: 408, message: "no request within \(options.headerTimeout) s", field: "headers",
                rule: "header_timeout")
        let body = delegate?.rejectHTTP(rejection) ?? rejection.defaultJSON
        let reason = rejection.status == 400 ? "Bad Request" : "Request Timeout"
        let head = "HTTP/1.1 \(rejection.status) \(reason)\r\ncontent-type: application/json\r\n"
            + "content-length: \(body.count)\r\nconnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + body
        let p = out.payload(bytes.count)
        p.update(from: bytes, count: bytes.count)
        _ = lws_write(wsi, p, bytes.count, LWS_WRITE_HTTP)
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
    }

    private func newID() -> UInt64 {
        nextID &+= 1
        return nextID
    }

    // MARK: - HTTP

    private func httpRequestHeaders(
        _ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer, _ inp: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        let old = sessionID(user)
        if old != 0 { httpTransactions.removeValue(forKey: old) }
        let id = newID()
        user.storeBytes(of: id, as: UInt64.self)

        var method: HTTPMethod?
        for (token, m) in methodTokens where lws_hdr_total_length(wsi, token) > 0 {
            method = m
            break
        }
        var path = ""
        if let inp, len > 0 {
            path = String(decoding: UnsafeRawBufferPointer(start: inp, count: len), as: UTF8.self)
        } else if let inp {
            path = String(cString: inp.assumingMemoryBound(to: CChar.self))
        }
        let tx = HTTPTransaction(id: id, wsi: wsi, method: method ?? .get, path: path)
        httpTransactions[id] = tx

        guard let method else {
            reject(tx, status: 405, message: "method not allowed", field: "method", rule: "method_not_allowed")
            return 0
        }
        tx.headers = captureHeaders(wsi)
        tx.queryItems = captureQuery(wsi)
        tx.remoteAddress = cachedPeerAddress(wsi)
        if let name = headerWithNUL(tx.headers) {
            reject(tx, status: 400, message: "header \(name) contains a NUL byte", field: name, rule: "header_value")
            return 0
        }

        let cl = tx.headers["content-length"]
        if let cl {
            guard let n = parseContentLength(cl) else {
                reject(tx, status: 400, message: "invalid Content-Length", field: "content-length",
                       rule: "content_length")
                return 0
            }
            if n > options.maxBodyBytes {
                reject(tx, status: 413,
                       message: "request body of \(n) bytes exceeds the limit of \(options.maxBodyBytes) bytes",
                       field: "body", rule: "max_body")
                return 0
            }
            tx.expected = n
        } else if method == .post || method == .put || method == .patch
            || tx.headers["transfer-encoding"] != nil
        {
            reject(tx, status: 411, message: "Content-Length required", field: "body", rule: "length_required")
            return 0
        }

        if tx.expected == 0 {
            dispatch(tx)
        } else if let expect = tx.headers["expect"], expect.lowercased() == "100-continue",
            lws_get_network_wsi(wsi) == wsi  // HTTP/1 only (an h2 stream is a child of the network wsi)
        {
            // lws 4.1 does not answer Expect itself; curl would stall a second waiting for it.
            let line = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
            let p = out.payload(line.count)
            p.update(from: line, count: line.count)
            if lws_write(wsi, p, line.count, LWS_WRITE_HTTP_HEADERS) < 0 { return -1 }
        }
        return 0
    }

    private func dispatch(_ tx: HTTPTransaction) {
        tx.dispatched = true
        let request = HTTPRequest(
            method: tx.method, path: tx.path, queryItems: tx.queryItems, lowercasedHeaders: tx.headers,
            body: tx.body, remoteAddress: tx.remoteAddress)
        tx.body = []
        let response = HTTPResponse(server: self, transactionID: tx.id, method: tx.method)
        delegate?.handleHTTP(request, response)
        guard tx.response == nil, httpTransactions[tx.id] != nil else { return }
        // Answered later: stop lws from processing further input (a pipelined next request) until then —
        // lws 4.1 otherwise re-issues BODY_COMPLETION in a busy loop while buffered input is pending. An
        // answer given inside the handler skips this pair (each flip is an epoll_ctl on the libuv loop).
        // Answers are always written from the writable callback, never from the request's own callback:
        // completing a transaction there makes lws 4.1 mis-frame a pipelined next request with a body.
        tx.inputPaused = true
        lws_rx_flow_control(tx.wsi, 0)
        lws_set_timeout(tx.wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(clamping: options.responseTimeout))
    }

    private func reject(_ tx: HTTPTransaction, status: Int, message: String, field: String, rule: String) {
        tx.rejected = true
        tx.body = []
        let rejection = HTTPRejection(status: status, message: message, field: field, rule: rule)
        let body = delegate?.rejectHTTP(rejection) ?? rejection.defaultJSON
        var headers: [(String, String)] = []
        if status == 405 { headers.append(("allow", HTTPMethod.allCases.map(\.rawValue).joined(separator: ", "))) }
        tx.response = PendingHTTPResponse(
            status: status, contentType: "application/json", headers: headers, body: body, closeAfter: true)
        lws_callback_on_writable(tx.wsi)
    }

    func httpTransactionAlive(_ id: UInt64) -> Bool {
        guard let tx = httpTransactions[id] else { return false }
        return tx.response == nil
    }

    func queueHTTPResponse(transactionID id: UInt64, _ response: PendingHTTPResponse) {
        guard !tearingDown, let tx = httpTransactions[id], tx.response == nil else { return }
        tx.response = response
        if tx.inputPaused {
            tx.inputPaused = false
            lws_rx_flow_control(tx.wsi, 1)
        }
        lws_callback_on_writable(tx.wsi)
    }

    /// Writes the headers and the first body chunk; further chunks on later writable callbacks.
    private func writeHTTP(_ tx: HTTPTransaction, _ wsi: OpaquePointer) -> Int32 {
        guard var r = tx.response else { return 0 }
        if tx.pipelined && !r.headersSent { r.closeAfter = true }
        let sendBody = tx.method != .head
        if !r.headersSent, sendBody, r.body.count <= options.txPacketSize, lws_get_network_wsi(wsi) == wsi {
            if !writeHeadersAndBody(wsi, r) { return -1 }
            r.headersSent = true
            r.bodyOffset = r.body.count
        }
        if !r.headersSent {
            if writeHeaders(wsi, r, contentLength: r.body.count) != 0 { return -1 }
            r.headersSent = true
        }
        if sendBody && r.bodyOffset < r.body.count {
            let chunk = min(r.body.count - r.bodyOffset, options.txPacketSize)
            let last = r.bodyOffset + chunk == r.body.count
            let p = out.payload(chunk)
            r.body.withUnsafeBufferPointer { src in
                p.update(from: src.baseAddress! + r.bodyOffset, count: chunk)
            }
            if lws_write(wsi, p, chunk, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < 0 { return -1 }
            r.bodyOffset += chunk
            if !last {
                tx.response = r
                lws_callback_on_writable(wsi)
                return 0
            }
        }
        // Done with this transaction.
        tx.response = r
        httpTransactions.removeValue(forKey: tx.id)
        if r.closeAfter { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    /// Builds and writes the response header block for the current transaction of `wsi`.
    private func writeHeaders(_ wsi: OpaquePointer, _ r: PendingHTTPResponse, contentLength: Int) -> Int32 {
        guard let h = buildHeaders(wsi, r, contentLength: contentLength, room: 0) else { return -1 }
        var p: UnsafeMutablePointer<UInt8>? = h.end
        return lws_finalize_write_http_header(wsi, h.start, &p, h.limit) != 0 ? -1 : 0
    }

    /// HTTP/1 only: the header block and the whole body in one write, so one `send()` (one TCP segment on
    /// loopback) per answer instead of two. lws passes a header write through as is on HTTP/1; on an h2
    /// stream headers and data must be separate frames.
    private func writeHeadersAndBody(_ wsi: OpaquePointer, _ r: PendingHTTPResponse) -> Bool {
        guard let h = buildHeaders(wsi, r, contentLength: r.body.count, room: r.body.count) else { return false }
        var p: UnsafeMutablePointer<UInt8>? = h.end
        guard lws_finalize_http_header(wsi, &p, h.limit) == 0, let bodyStart = p else { return false }
        r.body.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { bodyStart.update(from: base, count: src.count) }
        }
        let total = bodyStart - h.start + r.body.count
        return lws_write(wsi, h.start, total, LWS_WRITE_HTTP_HEADERS) >= 0
    }

    /// The header block (not yet terminated) in the write buffer: from `start` to `end`, at most up to `limit`,
    /// with `room` more bytes available behind `limit` for a body.
    private func buildHeaders(_ wsi: OpaquePointer, _ r: PendingHTTPResponse, contentLength: Int, room: Int)
        -> (start: UnsafeMutablePointer<UInt8>, end: UnsafeMutablePointer<UInt8>, limit: UnsafeMutablePointer<UInt8>)?
    {
        var extra = 0
        for (n, v) in r.headers { extra += n.utf8.count + v.utf8.count + 8 }
        let cap = out.pre + 512 + r.contentType.utf8.count + extra
        out.ensure(cap + room)
        let start = out.base.advanced(by: out.pre).assumingMemoryBound(to: UInt8.self)
        let end = out.base.advanced(by: cap).assumingMemoryBound(to: UInt8.self)
        var p: UnsafeMutablePointer<UInt8>? = start
        let rc = r.contentType.withCString {
            lws_add_http_common_headers(
                wsi, UInt32(clamping: r.status), $0, lws_filepos_t(contentLength), &p, end)
        }
        if rc != 0 { return nil }
        for (name, value) in r.headers {
            let n = sanitizeHeader(name.lowercased()) + ":"
            let v = sanitizeHeader(value)
            let ok = n.withCString { np in
                v.withCString { vp in
                    np.withMemoryRebound(to: UInt8.self, capacity: n.utf8.count + 1) { np8 in
                        vp.withMemoryRebound(to: UInt8.self, capacity: v.utf8.count + 1) { vp8 in
                            lws_add_http_header_by_name(wsi, np8, vp8, Int32(v.utf8.count), &p, end)
                        }
                    }
                }
            }
            if ok != 0 { return nil }
        }
        if r.closeAfter {
            let ok = "close".withCString { vp in
                vp.withMemoryRebound(to: UInt8.self, capacity: 6) {
                    lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION, $0, 5, &p, end)
                }
            }
            if ok != 0 { return nil }
        }
        guard let headerEnd = p else { return nil }
        return (start, headerEnd, end)
    }

    /// For answers given inside a callback that owns the write (WebSocket upgrade refusals).
    private func writeImmediate(
        _ wsi: OpaquePointer, status: Int, headers: [(String, String)] = [], body: [UInt8]
    ) -> Bool {
        let r = PendingHTTPResponse(
            status: status, contentType: "application/json", headers: headers, body: body, closeAfter: false)
        if writeHeaders(wsi, r, contentLength: body.count) != 0 { return false }
        if body.isEmpty { return true }
        let p = out.payload(body.count)
        p.update(from: body, count: body.count)
        return lws_write(wsi, p, body.count, LWS_WRITE_HTTP_FINAL) >= 0
    }

    // MARK: - WebSocket

    private func confirmUpgrade(_ wsi: OpaquePointer, _ inp: UnsafeMutableRawPointer?) -> Int32 {
        let target = inp.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
        guard target.lowercased() == "websocket" else {
            return 0  // "h2c": lws switches to HTTP/2 and the request arrives as an h2 stream
        }
        let path = lwsHeader(wsi, WSI_TOKEN_GET_URI) ?? ""
        if stopping || tearingDown {
            let body = rejectionBody(status: 503, message: "server is shutting down", field: "", rule: "shutdown")
            return writeImmediate(wsi, status: 503, body: body) ? 1 : -1
        }
        guard path == options.webSocketPath else {
            let body = rejectionBody(
                status: 404, message: "no WebSocket endpoint at \(path)", field: "path", rule: "not_found")
            return writeImmediate(wsi, status: 404, body: body) ? 1 : -1
        }
        // lws 4.1 upgrades any Sec-WebSocket-Version (it logs and speaks 13); RFC 6455 §4.4 asks for 426 naming
        // the version the server speaks.
        let version = lwsHeader(wsi, WSI_TOKEN_VERSION).map { String($0.filter { $0 != " " && $0 != "\t" }) }
        guard version == "13" else {
            let body = rejectionBody(
                status: 426, message: "unsupported Sec-WebSocket-Version \(version ?? "(none)"); this server speaks 13",
                field: "sec-websocket-version", rule: "websocket_version")
            return writeImmediate(wsi, status: 426, headers: [("sec-websocket-version", "13")], body: body) ? 1 : -1
        }
        let headers = captureHeaders(wsi)
        if let name = headerWithNUL(headers) {
            let body = rejectionBody(
                status: 400, message: "header \(name) contains a NUL byte", field: name, rule: "header_value")
            return writeImmediate(wsi, status: 400, body: body) ? 1 : -1
        }
        pendingUpgrades[wsi] = HTTPRequest(
            method: .get, path: path, queryItems: captureQuery(wsi), lowercasedHeaders: headers,
            body: [], remoteAddress: peerAddress(wsi))
        return 0
    }

    private func rejectionBody(status: Int, message: String, field: String, rule: String) -> [UInt8] {
        let rejection = HTTPRejection(status: status, message: message, field: field, rule: rule)
        return delegate?.rejectHTTP(rejection) ?? rejection.defaultJSON
    }

    private func wsEstablished(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer) -> Int32 {
        let old = sessionID(user)
        if old != 0 { httpTransactions.removeValue(forKey: old) }
        let id = newID()
        user.storeBytes(of: id, as: UInt64.self)
        let request =
            pendingUpgrades.removeValue(forKey: wsi)
            ?? HTTPRequest(
                method: .get, path: options.webSocketPath, queryItems: captureQuery(wsi),
                headers: captureHeaders(wsi), body: [], remoteAddress: peerAddress(wsi))
        let conn = WSConnection(id: id, server: self, wsi: wsi, peerAddress: request.remoteAddress)
        webSockets[id] = conn
        if stopping {
            conn.close(code: 1001, reason: "shutdown")
            return 0
        }
        delegate?.wsOpened(conn, request)
        return 0
    }

    private func wsReceive(
        _ conn: WSConnection, _ wsi: OpaquePointer, _ inp: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        if conn.closing { return closeNow(conn, wsi) }  // what the peer sent after our close is discarded
        switch conn.assembler.receive(wsi, inp, len, limit: options.maxBodyBytes, acceptBinary: false) {
        case .partial:
            return 0
        case .refuse(let code, let reason):
            conn.close(code: code, reason: reason)
            return closeNow(conn, wsi)
        case .message(let bytes, _):
            delegate?.wsText(conn, bytes)
            return conn.closing ? closeNow(conn, wsi) : 0
        }
    }

    /// Writes the close frame once (``WriteBuffer/writeClose(_:code:reason:)``) and keeps the connection open
    /// to read the peer's answer: closing a socket with unread input makes the kernel send a reset, which can
    /// destroy the close frame before the peer reads it. Input from then on is discarded; the peer's close frame
    /// (``LWS_CALLBACK_WS_PEER_INITIATED_CLOSE``) or ``LWSServerOptions/closeHandshakeTimeout`` ends it.
    private func closeNow(_ conn: WSConnection, _ wsi: OpaquePointer) -> Int32 {
        guard !conn.closeSent else { return 0 }
        conn.closeSent = true
        out.writeClose(wsi, code: conn.closeCode, reason: conn.closeReason)
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, Int32(clamping: options.closeHandshakeTimeout))
        return 0
    }

    func writeFrame(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer, binary: Bool) -> Bool {
        out.writeFrame(wsi, bytes, binary: binary)
    }

    // MARK: - Helpers

    private func captureHeaders(_ wsi: OpaquePointer) -> [String: String] {
        var headers: [String: String] = [:]
        headers.reserveCapacity(12)  // no regrowth (and rehash) for a typical request's headers
        // Only the headers present cost anything (lws knows their lengths; most of the table is absent).
        for i in headerTokenList.indices where lws_hdr_total_length(wsi, headerTokenList[i]) > 0 {
            if let v = lwsHeader(wsi, headerTokenList[i]) { headers[headerNameList[i]] = v }
        }
        for name in options.extraHeaderNames {
            let key = name.lowercased() + ":"
            let n = key.withCString { lws_hdr_custom_length(wsi, $0, Int32(key.utf8.count)) }
            guard n >= 0 else { continue }
            let v = copyCString(capacity: Int(n) + 1) { buf, cap in
                key.withCString { lws_hdr_custom_copy(wsi, buf, cap, $0, Int32(key.utf8.count)) }
            }
            if let v { headers[name.lowercased()] = v }
        }
        return headers
    }

    private func captureQuery(_ wsi: OpaquePointer) -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        var index: Int32 = 0
        while index < 256 {
            let n = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, index))
            guard n > 0 else { break }
            let frag = copyCString(capacity: n + 1) { buf, cap in
                lws_hdr_copy_fragment(wsi, buf, cap, WSI_TOKEN_HTTP_URI_ARGS, index)
            }
            index += 1
            guard let frag else { break }
            if let eq = frag.firstIndex(of: "=") {
                items.append((String(frag[..<eq]), String(frag[frag.index(after: eq)...])))
            } else {
                items.append((frag, ""))
            }
        }
        return items
    }

    /// `peerAddress` once per connection (an HTTP/1.1 keep-alive connection carries many requests).
    private func cachedPeerAddress(_ wsi: OpaquePointer) -> String {
        if let known = peerAddresses[wsi] { return known }
        let address = peerAddress(wsi)
        peerAddresses[wsi] = address
        return address
    }

    private func peerAddress(_ wsi: OpaquePointer) -> String {
        copyCString(capacity: 64) { buf, cap in
            lws_get_peer_simple(wsi, buf, Int(cap)) == nil ? -1 : Int32(strlen(buf))
        } ?? ""
    }
}

// MARK: - C entry points

/// The protocol callback. Reaches the server through `lws_context_user`.
private func lanpushLWSCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ inp: UnsafeMutableRawPointer?, _ len: Int
) -> Int32 {
    guard let wsi, let ctx = lws_get_context(wsi), let me = lws_context_user(ctx) else { return 0 }
    let server = Unmanaged<LWSServer>.fromOpaque(me).takeUnretainedValue()
    return server.callback(wsi, reason, user, inp, len)
}

// MARK: - Internal types

final class HTTPTransaction {
    let id: UInt64
    let wsi: OpaquePointer
    let method: HTTPMethod
    let path: String
    var queryItems: [(name: String, value: String)] = []
    var headers: [String: String] = [:]
    var remoteAddress = ""
    var expected = 0
    var body: [UInt8] = []
    var rejected = false
    var dispatched = false
    /// lws holds a pipelined next request: answer with `Connection: close` and close.
    var pipelined = false
    /// Input is held (rx flow control) until the answer is queued.
    var inputPaused = false
    var response: PendingHTTPResponse?

    init(id: UInt64, wsi: OpaquePointer, method: HTTPMethod, path: String) {
        self.id = id
        self.wsi = wsi
        self.method = method
        self.path = path
    }
}

/// A pending ``LWSServer/schedule(after:_:)`` call. Loop thread only.
public final class LWSTimer {
    var body: (() -> Void)?
    init(_ body: @escaping () -> Void) { self.body = body }
    private init() { body = nil }
    /// A timer that never runs (scheduled during a teardown).
    static var inert: LWSTimer { LWSTimer() }
    /// Prevents the body from running (no-op if it already ran).
    public func cancel() { body = nil }
    /// `true` until the body ran or the timer was cancelled.
    public var isPending: Bool { body != nil }
}

struct TimerEntry {
    let deadline: Int64
    let seq: UInt64
    let timer: LWSTimer

    func before(_ o: TimerEntry) -> Bool { deadline != o.deadline ? deadline < o.deadline : seq < o.seq }
}

/// Binary min-heap on (deadline, seq).
struct TimerHeap {
    private var items: [TimerEntry] = []

    func peek() -> TimerEntry? { items.first }
    mutating func removeAll() { items.removeAll() }

    mutating func push(_ e: TimerEntry) {
        items.append(e)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].before(items[parent]) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> TimerEntry? {
        guard !items.isEmpty else { return nil }
        let top = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < items.count && items[l].before(items[m]) { m = l }
                if r < items.count && items[r].before(items[m]) { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}

// MARK: - Tables and small helpers

private let methodTokens: [(lws_token_indexes, HTTPMethod)] = [
    (WSI_TOKEN_GET_URI, .get), (WSI_TOKEN_POST_URI, .post), (WSI_TOKEN_PUT_URI, .put),
    (WSI_TOKEN_PATCH_URI, .patch), (WSI_TOKEN_DELETE_URI, .delete), (WSI_TOKEN_OPTIONS_URI, .options),
    (WSI_TOKEN_HEAD_URI, .head),
]

private let headerTokens: [(String, lws_token_indexes)] = [
    ("authorization", WSI_TOKEN_HTTP_AUTHORIZATION),
    ("content-type", WSI_TOKEN_HTTP_CONTENT_TYPE),
    ("content-length", WSI_TOKEN_HTTP_CONTENT_LENGTH),
    ("transfer-encoding", WSI_TOKEN_HTTP_TRANSFER_ENCODING),
    ("expect", WSI_TOKEN_HTTP_EXPECT),
    ("host", WSI_TOKEN_HOST),
    ("user-agent", WSI_TOKEN_HTTP_USER_AGENT),
    ("accept", WSI_TOKEN_HTTP_ACCEPT),
    ("accept-encoding", WSI_TOKEN_HTTP_ACCEPT_ENCODING),
    ("accept-language", WSI_TOKEN_HTTP_ACCEPT_LANGUAGE),
    ("origin", WSI_TOKEN_ORIGIN),
    ("connection", WSI_TOKEN_CONNECTION),
    ("upgrade", WSI_TOKEN_UPGRADE),
    ("cookie", WSI_TOKEN_HTTP_COOKIE),
    ("cache-control", WSI_TOKEN_HTTP_CACHE_CONTROL),
    ("if-none-match", WSI_TOKEN_HTTP_IF_NONE_MATCH),
    ("if-modified-since", WSI_TOKEN_HTTP_IF_MODIFIED_SINCE),
    ("referer", WSI_TOKEN_HTTP_REFERER),
    ("x-forwarded-for", WSI_TOKEN_X_FORWARDED_FOR),
    ("x-real-ip", WSI_TOKEN_HTTP_X_REAL_IP),
    ("x-auth-token", WSI_TOKEN_X_AUTH_TOKEN),
    ("sec-websocket-protocol", WSI_TOKEN_PROTOCOL),
    ("sec-websocket-version", WSI_TOKEN_VERSION),
    ("sec-websocket-key", WSI_TOKEN_KEY),
    ("sec-websocket-extensions", WSI_TOKEN_EXTENSIONS),
]

private let headerTokenList: [lws_token_indexes] = headerTokens.map(\.1)
private let headerNameList: [String] = headerTokens.map(\.0)

@inline(__always)
private func sessionID(_ user: UnsafeMutableRawPointer) -> UInt64 {
    user.load(as: UInt64.self)
}

private func parseContentLength(_ s: String) -> Int? {
    var value = 0
    var digits = 0
    var trailing = false
    for b in s.utf8 {
        if b == 32 || b == 9 {
            if digits > 0 { trailing = true }
            continue
        }
        guard b >= 48 && b <= 57, !trailing else { return nil }
        digits += 1
        guard digits <= 15 else { return nil }
        value = value * 10 + Int(b - 48)
    }
    return digits > 0 ? value : nil
}

/// RFC 9110 §5.5: a field value never holds NUL; lws 4.1 stores one as it comes.
private func headerWithNUL(_ headers: [String: String]) -> String? {
    for (name, value) in headers where value.utf8.contains(0) { return name }
    return nil
}

private func sanitizeHeader(_ s: String) -> String {
    String(String.UnicodeScalarView(s.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" }))
}

/// Calls `fill(buffer, capacity)`; a non-negative result is the string's length.
private func strdupOrDie(_ s: String) -> UnsafeMutablePointer<CChar> {
    guard let p = strdup(s) else { fatalError("out of memory") }
    return p
}
