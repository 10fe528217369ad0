import CLibWebSockets
#if canImport(Glibc)
import Glibc
#endif

/// The client side of one lws context: a client vhost (no listener) with one protocol, its connections,
/// and the lws callbacks that drive them. Owned by the context's owner (``LWSServer`` or ``WSClientLoop``),
/// which must keep it alive until `lws_context_destroy` has returned and its event loop has finished closing
/// (``EventLoop/destroy()``), and then call ``contextDestroyed()``.
///
/// Loop thread only. lws reaches it through `lws_vhost_user` of its vhost (WSClientCallbacks.swift).
final class WSClientEngine: LoopConfined {
    static let protocolName = "lanpush-ws-client"

    let options: WSClientOptions
    let loopThread: LoopThread
    /// Whether the context initialised OpenSSL: only then does the client vhost get an `SSL_CTX` (lws frees a
    /// vhost's `SSL_CTX` only in a context that did) and may `wss://` be connected.
    let tls: Bool
    /// Set by ``attach(_:)`` before any connection is made.
    private var context: OpaquePointer?
    /// The owner's timers: report failures that happen inside `lws_client_connect_via_info` from the loop
    /// (no delegate callback ever runs inside `connectWebSocket`), and bound the handshake.
    private let schedule: (Double, @escaping () -> Void) -> LWSTimer?
    /// Called whenever the last connection has gone (stop draining).
    var onIdle: (() -> Void)?
    /// Called for `LWS_CALLBACK_EVENT_WAIT_CANCELLED` (the standalone loop's wake-up); the server
    /// handles its own on its vhost.
    var onWaitCancelled: (() -> Void)?

    private var vhost: OpaquePointer?
    private var nextID: UInt64 = 0
    private(set) var connections: [UInt64: WSClientConnection] = [:]
    /// C strings handed to lws for a connection, freed when lws destroys its wsi (or at the end).
    private var connectStrings: [UInt64: LWSMemory] = [:]
    /// Terminal callbacks waiting for their deferred run (delivered at the end if the loop stops first).
    private var pendingReports: [UInt64: () -> Void] = [:]
    /// Inside `lws_client_connect_via_info`: lws may report the end before it returns.
    private(set) var inConnectCall = false
    private(set) var connectingNow: WSClientConnection?
    private(set) var tearingDown = false
    let out = WriteBuffer()

    /// Memory lws points into for the context's lifetime.
    private let memory = LWSMemory()
    /// The protocols array, for a context that is created around this engine (the standalone loop).
    let protocolList: UnsafePointer<lws_protocols>
    private let retryPolicy: UnsafePointer<lws_retry_bo_t>

    init(
        options: WSClientOptions, loopThread: LoopThread, tls: Bool = true,
        schedule: @escaping (Double, @escaping () -> Void) -> LWSTimer?
    ) {
        self.options = options
        self.loopThread = loopThread
        self.tls = tls
        self.schedule = schedule
        let ping = max(0, min(options.pingInterval, 30000))
        let hangup = ping == 0 ? 0 : ping + max(1, min(options.pingTimeout, 30000))
        retryPolicy = memory.retryPolicy(pingSeconds: ping, hangupSeconds: hangup)
        protocolList = memory.protocols(
            names: [WSClientEngine.protocolName], callback: lanpushLWSClientCallback, perSessionDataSize: 0,
            rxBufferSize: max(128, options.rxBufferSize), id: 2, txPacketSize: 0)
    }

    /// Binds the engine to its context (once, before ``ensureVhost()``).
    func attach(_ context: OpaquePointer) {
        self.context = context
    }

    /// Creates the client vhost (once): no listener, client TLS with the CA file, UTF-8 validation.
    func ensureVhost() throws(WSClientError) {
        if vhost != nil { return }
        guard let context, !tearingDown else { throw .notRunning }
        var vinfo = lws_context_creation_info()
        vinfo.port = -1  // CONTEXT_PORT_NO_LISTEN
        vinfo.protocols = protocolList
        vinfo.extensions = nil  // no permessage-deflate
        vinfo.vhost_name = memory.string("lanpush-client")
        vinfo.user = Unmanaged.passUnretained(self).toOpaque()
        // DO_SSL_GLOBAL_INIT on the *vhost* options is what makes lws 4.1 build its client SSL_CTX.
        vinfo.options = lanpush_opt_validate_utf8()
        if tls { vinfo.options |= lanpush_opt_do_ssl_global_init() }
        let systemBundle = "/etc/ssl/certs/ca-certificates.crt"
        if let ca = options.caFile {
            vinfo.client_ssl_ca_filepath = memory.string(ca)
        } else if access(systemBundle, R_OK) == 0 {
            // Naming the bundle also keeps lws 4.1 from trying its compiled-in CA dir ("../share") and
            // logging an error about it on every start.
            vinfo.client_ssl_ca_filepath = memory.string(systemBundle)
        }
        vinfo.timeout_secs = UInt32(max(1, options.connectTimeout))
        vinfo.connect_timeout_secs = UInt32(max(1, options.connectTimeout))
        guard let vh = lws_create_vhost(context, &vinfo) else {
            throw .setupFailed("lws_create_vhost failed (unreadable CA file \(options.caFile ?? "")?)")
        }
        vhost = vh
    }

    // MARK: - Connecting

    func connect(
        url text: String, subprotocol: String?, headers: [(String, String)], allowInsecureTLS: Bool,
        localAddress: String? = nil, delegate: WSClientDelegate
    ) throws(WSClientError) -> WSClientConnection {
        guard !tearingDown else { throw .notRunning }
        let url = try WebSocketURL(text)
        if url.secure && !tls { throw .setupFailed("wss:// needs TLS, which this server was started without") }
        for (name, value) in headers {
            let bad: (Unicode.Scalar) -> Bool = { $0 == "\r" || $0 == "\n" || $0 == "\0" }
            guard !name.isEmpty, !name.unicodeScalars.contains(where: bad), !name.contains(":"),
                !value.unicodeScalars.contains(where: bad)
            else {
                throw .invalidURL("bad header '\(name)'")
            }
        }
        try ensureVhost()
        guard let context else { throw .notRunning }
        nextID &+= 1
        let conn = WSClientConnection(id: nextID, url: url, engine: self, delegate: delegate, headers: headers)
        connections[conn.id] = conn

        let strings = LWSMemory()
        let keep = strings.string
        var info = lws_client_connect_info()
        info.context = context
        info.vhost = vhost
        info.address = keep(url.host)
        info.port = Int32(url.port)
        info.path = keep(url.path)
        info.host = keep(url.hostHeader)
        info.origin = nil
        info.iface = localAddress.map { keep($0) }
        info.protocol = subprotocol.map { keep($0) }
        info.local_protocol_name = protocolList.pointee.name
        info.ietf_version_or_minus_one = -1
        if url.secure {
            var flags = Int32(LCCSCF_USE_SSL.rawValue)
            if allowInsecureTLS {
                flags |= Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue) | Int32(LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue)
                    | Int32(LCCSCF_ALLOW_EXPIRED.rawValue)
            }
            info.ssl_connection = flags
        }
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(conn.id))
        if options.pingInterval > 0 { info.retry_and_idle_policy = retryPolicy }
        connectStrings[conn.id] = strings

        inConnectCall = true
        connectingNow = conn
        let wsi = lws_client_connect_via_info(&info)
        inConnectCall = false
        connectingNow = nil
        if conn.state != .done {
            if let wsi {
                conn.wsi = wsi
                // lws's own handshake timeouts follow the context's settings (20 s on the server's): bound
                // the whole attempt here, the same on both kinds of loop.
                conn.connectTimer = schedule(Double(max(1, options.connectTimeout))) { [weak conn] in
                    guard let conn, conn.state == .connecting, let wsi = conn.wsi else { return }
                    conn.timedOut = true
                    lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
                }
            } else {
                finish(conn, failure: .connectFailed(reason: "connect failed", httpStatus: nil), deferred: true)
            }
        }
        return conn
    }

    // MARK: - Stopping

    /// Closes every open connection with `code` and abandons every pending one.
    func closeAll(code: UInt16, reason: String) {
        for conn in connections.values { conn.close(code: code, reason: reason) }
    }

    /// Before `lws_context_destroy`: refuse new connections and make every method inert; lws still reports
    /// each connection's end (on this thread) while the context is destroyed.
    func contextWillBeDestroyed() {
        tearingDown = true
    }

    /// After `lws_context_destroy`: report whatever has not been reported and free what lws pointed into.
    func contextDestroyed() {
        tearingDown = true
        for conn in Array(connections.values) {
            if conn.state == .connecting {
                finish(conn, failure: .cancelled, deferred: false)
            } else {
                finish(conn, closedWith: conn.peerCloseCode, conn.peerCloseReason)
            }
        }
        let reports = pendingReports
        pendingReports.removeAll()
        for id in reports.keys.sorted() { reports[id]?() }
        connectStrings.removeAll()  // each frees its strings
        vhost = nil
        memory.release()
    }

    /// `LWS_CALLBACK_WSI_DESTROY` of a connection: lws no longer reads its connect strings.
    func connectionDestroyed(_ id: UInt64) {
        connectStrings.removeValue(forKey: id)
    }

    // MARK: - Reporting the end (exactly once)

    func finish(_ conn: WSClientConnection, failure: WSClientError, deferred: Bool) {
        guard conn.state != .done else { return }
        conn.state = .done
        conn.wsi = nil
        conn.connectTimer?.cancel()
        connections.removeValue(forKey: conn.id)
        var error = failure
        if conn.cancelled {
            error = .cancelled
        } else if conn.timedOut {
            error = .connectFailed(reason: "timed out after \(max(1, options.connectTimeout)) s", httpStatus: nil)
        }
        report(conn, deferred: deferred) { delegate in delegate.wsClientConnectFailed(conn, error: error) }
    }

    func finish(_ conn: WSClientConnection, closedWith code: UInt16?, _ reason: String) {
        guard conn.state != .done else { return }
        conn.state = .done
        conn.wsi = nil
        connections.removeValue(forKey: conn.id)
        report(conn, deferred: false) { delegate in delegate.wsClientClosed(conn, code: code, reason: reason) }
    }

    private func report(_ conn: WSClientConnection, deferred: Bool, _ call: @escaping (WSClientDelegate) -> Void) {
        let run = { [conn] in
            guard let delegate = conn.delegate else { return }
            conn.delegate = nil
            call(delegate)
        }
        if deferred && !tearingDown {
            pendingReports[conn.id] = run
            let id = conn.id
            _ = schedule(0) { [weak self] in
                guard let self, let body = self.pendingReports.removeValue(forKey: id) else { return }
                body()
            }
        } else {
            run()
        }
        if connections.isEmpty { onIdle?() }
    }
}
