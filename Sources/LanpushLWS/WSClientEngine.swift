import CLibWebSockets
#if canImport(Glibc)
import Glibc
#endif

/// The client side of one lws context: a client vhost (no listener) with one protocol, its connections,
/// and the lws callbacks that drive them. Owned by the context's owner (``LWSServer`` or ``WSClientLoop``),
/// which must keep it alive until `lws_context_destroy` has returned and its event loop has finished closing
/// (``EventLoop/destroy()``), and then call ``contextDestroyed()``.
///
/// Loop thread only. lws reaches it through `lws_vhost_user` of its vhost.
final class WSClientEngine {
    static let protocolName = "lanpush-ws-client"

    let options: WSClientOptions
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
    private var connectStrings: [UInt64: [UnsafeMutablePointer<CChar>]] = [:]
    /// Terminal callbacks waiting for their deferred run (delivered at the end if the loop stops first).
    private var pendingReports: [UInt64: () -> Void] = [:]
    private var inConnectCall = false
    private var connectingNow: WSClientConnection?
    private(set) var tearingDown = false
    private let out = WriteBuffer()

    // Memory lws points into for the context's lifetime.
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolNameC: UnsafeMutablePointer<CChar>
    private let vhostNameC: UnsafeMutablePointer<CChar>
    private let caFileC: UnsafeMutablePointer<CChar>?
    private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>
    private let retryTable: UnsafeMutablePointer<UInt32>
    private var released = false

    init(options: WSClientOptions, schedule: @escaping (Double, @escaping () -> Void) -> LWSTimer?) {
        self.options = options
        self.schedule = schedule

        protocolNameC = clientStrdup(WSClientEngine.protocolName)
        vhostNameC = clientStrdup("lanpush-client")
        let systemBundle = "/etc/ssl/certs/ca-certificates.crt"
        if let ca = options.caFile {
            caFileC = clientStrdup(ca)
        } else if access(systemBundle, R_OK) == 0 {
            // Naming the bundle also keeps lws 4.1 from trying its compiled-in CA dir ("../share") and
            // logging an error about it on every start.
            caFileC = clientStrdup(systemBundle)
        } else {
            caFileC = nil
        }

        retryTable = .allocate(capacity: 1)
        retryTable.initialize(to: 1000)
        retryPolicy = .allocate(capacity: 1)
        var retry = lws_retry_bo_t()
        retry.retry_ms_table = UnsafePointer(retryTable)
        retry.retry_ms_table_count = 1
        retry.conceal_count = 1
        let ping = max(0, min(options.pingInterval, 30000))
        let hangup = ping == 0 ? 0 : ping + max(1, min(options.pingTimeout, 30000))
        retry.secs_since_valid_ping = UInt16(ping)
        retry.secs_since_valid_hangup = UInt16(hangup)
        retry.jitter_percent = 0
        retryPolicy.initialize(to: retry)

        protocols = .allocate(capacity: 2)
        var proto = lws_protocols()
        proto.name = UnsafePointer(protocolNameC)
        proto.callback = lanpushLWSClientCallback
        proto.per_session_data_size = 0
        proto.rx_buffer_size = max(128, options.rxBufferSize)
        proto.id = 2
        proto.user = nil
        proto.tx_packet_size = 0
        protocols.initialize(to: proto)
        (protocols + 1).initialize(to: lws_protocols())  // terminator
    }

    deinit {
        releaseMemory()
    }

    /// The protocols array, for a context that is created around this engine (the standalone loop).
    var protocolList: UnsafePointer<lws_protocols> { UnsafePointer(protocols) }

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
        vinfo.protocols = UnsafePointer(protocols)
        vinfo.extensions = nil  // no permessage-deflate
        vinfo.vhost_name = UnsafePointer(vhostNameC)
        vinfo.user = Unmanaged.passUnretained(self).toOpaque()
        // DO_SSL_GLOBAL_INIT on the *vhost* options is what makes lws 4.1 build its client SSL_CTX.
        vinfo.options = lanpush_opt_do_ssl_global_init() | lanpush_opt_validate_utf8()
        vinfo.client_ssl_ca_filepath = UnsafePointer(caFileC)
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
        delegate: WSClientDelegate
    ) throws(WSClientError) -> WSClientConnection {
        guard !tearingDown else { throw .notRunning }
        let url = try WebSocketURL(text)
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

        var strings: [UnsafeMutablePointer<CChar>] = []
        func keep(_ s: String) -> UnsafePointer<CChar> {
            let p = clientStrdup(s)
            strings.append(p)
            return UnsafePointer(p)
        }
        var info = lws_client_connect_info()
        info.context = context
        info.vhost = vhost
        info.address = keep(url.host)
        info.port = Int32(url.port)
        info.path = keep(url.path)
        info.host = keep(url.hostHeader)
        info.origin = nil
        info.protocol = subprotocol.map { keep($0) }
        info.local_protocol_name = UnsafePointer(protocolNameC)
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
        if options.pingInterval > 0 { info.retry_and_idle_policy = UnsafePointer(retryPolicy) }
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
        for (_, list) in connectStrings { for p in list { free(p) } }
        connectStrings.removeAll()
        vhost = nil
        releaseMemory()
    }

    private func releaseMemory() {
        guard !released else { return }
        released = true
        free(protocolNameC)
        free(vhostNameC)
        if let caFileC { free(caFileC) }
        protocols.deinitialize(count: 2)
        protocols.deallocate()
        retryPolicy.deinitialize(count: 1)
        retryPolicy.deallocate()
        retryTable.deinitialize(count: 1)
        retryTable.deallocate()
    }

    // MARK: - Reporting the end (exactly once)

    private func finish(_ conn: WSClientConnection, failure: WSClientError, deferred: Bool) {
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

    private func finish(_ conn: WSClientConnection, closedWith code: UInt16?, _ reason: String) {
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

    // MARK: - lws callback dispatch

    fileprivate func callback(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ inp: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            if !tearingDown { onWaitCancelled?() }
            return 0

        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            guard let conn = connection(for: wsi), let inp else { return 0 }
            return appendHeaders(conn, wsi, inp, len)

        case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
            // The last moment the handshake's response headers exist.
            guard let conn = connection(for: wsi) else { return -1 }
            conn.subprotocol = lwsHeader(wsi, WSI_TOKEN_PROTOCOL)
            return 0

        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            guard let conn = connection(for: wsi) else { return -1 }
            if conn.cancelled || tearingDown { return -1 }
            conn.wsi = wsi
            conn.state = .open
            conn.connectTimer?.cancel()
            conn.delegate?.wsClientOpened(conn)
            if conn.state == .closing { lws_callback_on_writable(wsi) }
            return 0

        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard let conn = connection(for: wsi) else { return 0 }
            return receive(conn, wsi, inp, len)

        case LWS_CALLBACK_CLIENT_WRITEABLE:
            guard let conn = connection(for: wsi) else { return 0 }
            if conn.state == .closing { return closeNow(conn, wsi) }
            guard conn.state == .open else { return 0 }
            conn.inWritable = true
            conn.delegate?.wsClientWritable(conn)
            conn.inWritable = false
            if conn.writeFailed { return -1 }
            if conn.state == .closing { return closeNow(conn, wsi) }
            return 0

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let conn = connection(for: wsi), let inp, len >= 2 {
                let b = inp.assumingMemoryBound(to: UInt8.self)
                conn.peerCloseCode = UInt16(b[0]) << 8 | UInt16(b[1])
                conn.peerCloseReason = String(
                    decoding: UnsafeRawBufferPointer(start: inp + 2, count: len - 2), as: UTF8.self)
            }
            return 0  // lws echoes the close frame, then closes

        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            guard let conn = connection(for: wsi) else { return 0 }
            var text = "connect failed"
            if let inp, len > 0 {
                text = String(decoding: UnsafeRawBufferPointer(start: inp, count: len), as: UTF8.self)
            } else if let inp {
                text = String(cString: inp.assumingMemoryBound(to: CChar.self))
            }
            let status = Int(lws_http_client_http_response(wsi))
            finish(conn, failure: .connectFailed(reason: text, httpStatus: status > 0 ? status : nil),
                   deferred: inConnectCall)
            return 0

        case LWS_CALLBACK_CLIENT_CLOSED:
            guard let conn = connection(for: wsi) else { return 0 }
            if conn.state == .connecting {
                finish(conn, failure: .connectFailed(reason: "closed during the handshake", httpStatus: nil),
                       deferred: inConnectCall)
            } else {
                finish(conn, closedWith: conn.peerCloseCode, conn.peerCloseReason)
            }
            return 0

        case LWS_CALLBACK_WSI_DESTROY:
            // The catch-all: whatever lws did not report by the time the wsi goes.
            guard let id = connectionID(for: wsi) else { return 0 }
            if let conn = connections[id] ?? (connectingNow?.id == id ? connectingNow : nil) {
                if conn.state == .connecting {
                    finish(conn, failure: .connectFailed(reason: "connection closed", httpStatus: nil),
                           deferred: inConnectCall)
                } else {
                    finish(conn, closedWith: conn.peerCloseCode, conn.peerCloseReason)
                }
            }
            if let list = connectStrings.removeValue(forKey: id) { for p in list { free(p) } }
            return 0

        default:
            return 0
        }
    }

    private func connectionID(for wsi: OpaquePointer) -> UInt64? {
        if let p = lws_get_opaque_user_data(wsi) { return UInt64(UInt(bitPattern: p)) }
        return connectingNow?.id
    }

    private func connection(for wsi: OpaquePointer) -> WSClientConnection? {
        guard let id = connectionID(for: wsi) else { return nil }
        if let conn = connections[id] { return conn }
        if let c = connectingNow, c.id == id, c.state != .done { return c }
        return nil
    }

    private func appendHeaders(
        _ conn: WSClientConnection, _ wsi: OpaquePointer, _ inp: UnsafeMutableRawPointer, _ len: Int
    ) -> Int32 {
        guard !conn.headers.isEmpty else { return 0 }
        let pp = inp.assumingMemoryBound(to: UnsafeMutablePointer<CChar>?.self)
        guard let start = pp.pointee else { return -1 }
        let end = UnsafeMutableRawPointer(start).advanced(by: len).assumingMemoryBound(to: UInt8.self)
        var p: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(start).assumingMemoryBound(to: UInt8.self)
        for (name, value) in conn.headers {
            let n = Array((name.lowercased() + ":").utf8) + [0]
            let v = Array(value.utf8)
            let rc = n.withUnsafeBufferPointer { nb in
                v.withUnsafeBufferPointer { vb in
                    lws_add_http_header_by_name(wsi, nb.baseAddress, vb.baseAddress ?? nb.baseAddress, Int32(v.count), &p, end)
                }
            }
            if rc != 0 { return -1 }  // does not fit: lws fails the connection
        }
        pp.pointee = p.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: CChar.self) }
        return 0
    }

    private func receive(
        _ conn: WSClientConnection, _ wsi: OpaquePointer, _ inp: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        if conn.state == .closing { return closeNow(conn, wsi) }
        guard conn.state == .open else { return 0 }
        switch conn.assembler.receive(wsi, inp, len, limit: options.maxMessageBytes, acceptBinary: options.acceptBinary) {
        case .partial:
            return 0
        case .refuse(let code, let reason):
            conn.close(code: code, reason: reason)
            return closeNow(conn, wsi)
        case .message(let bytes, let binary):
            if binary {
                conn.delegate?.wsClientBinary(conn, bytes)
            } else {
                conn.delegate?.wsClientText(conn, bytes)
            }
            return conn.state == .closing ? closeNow(conn, wsi) : 0
        }
    }

    /// Writes the close frame (``WriteBuffer/writeClose(_:code:reason:)``); returning -1 makes lws close.
    private func closeNow(_ conn: WSClientConnection, _ wsi: OpaquePointer) -> Int32 {
        out.writeClose(wsi, code: conn.closeCode, reason: conn.closeReason)
        return -1
    }

    func writeFrame(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer, binary: Bool) -> Bool {
        guard !tearingDown else { return false }
        return out.writeFrame(wsi, bytes, binary: binary)
    }

}

// MARK: - C entry point

/// The client protocol's callback: reaches the engine through the user pointer of its vhost (the same
/// function serves the server's context and the standalone loop's).
private func lanpushLWSClientCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ inp: UnsafeMutableRawPointer?, _ len: Int
) -> Int32 {
    guard let wsi, let vh = lws_get_vhost(wsi), let me = lws_vhost_user(vh) else { return 0 }
    return Unmanaged<WSClientEngine>.fromOpaque(me).takeUnretainedValue().callback(wsi, reason, inp, len)
}

private func clientStrdup(_ s: String) -> UnsafeMutablePointer<CChar> {
    guard let p = strdup(s) else { fatalError("out of memory") }
    return p
}
