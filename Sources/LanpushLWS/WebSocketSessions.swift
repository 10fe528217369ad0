import CLibWebSockets

/// The server's WebSocket sessions: the upgrade (path, version, headers), the open connections, their input
/// (reassembled messages to the delegate; dropped once closing), their writes and their end.
///
/// Writes happen right after each loop turn (``flushWritable()``), not from lws's writable callback: that callback
/// costs a POLLOUT flip on and off per write — an `epoll_ctl` each on libev, a removal and a re-add on libuv
/// (docs/BENCHMARKS.md) — plus a turn of latency. Changes of one turn still merge (one
/// `wsWritable` per connection per turn). lws's callback is still used when lws holds unsent bytes for the socket,
/// for close frames and after a write error, because only from there can lws close the connection.
///
/// Loop thread only.
final class WebSocketSessions {
    private unowned(unsafe) let server: LWSServer
    private let options: LWSServerOptions
    private let capture: RequestCapture
    private let writer: HTTPResponseWriter
    private(set) var connections: [UInt64: WSConnection] = [:]
    /// Handshake requests, from the upgrade's callback until the connection is established.
    private var pendingUpgrades: [OpaquePointer: HTTPRequest] = [:]
    /// Connections that asked to write during the current loop turn.
    private var wantWritable: [WSConnection] = []
    private var flushing = false
    /// Pings and hang-ups of silent peers (instead of lws's per-connection validity timers).
    private var keepalive: KeepaliveWheel
    private var keepaliveTimer: LWSTimer?

    init(server: LWSServer, capture: RequestCapture, writer: HTTPResponseWriter) {
        self.server = server
        self.options = server.options
        self.capture = capture
        self.writer = writer
        keepalive = KeepaliveWheel(interval: Double(options.pingInterval), timeout: Double(options.pingTimeout))
    }

    var isEmpty: Bool { connections.isEmpty }

    // MARK: - Handshake

    /// `LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`: 0 lets the upgrade proceed; 1 means the adapter answered (JSON) and
    /// the connection stays HTTP (an h2 stream); -1 hangs up (after the JSON answer, on HTTP/1).
    func confirmUpgrade(_ wsi: OpaquePointer, _ inp: UnsafeMutableRawPointer?) -> Int32 {
        let target = inp.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
        guard target.lowercased() == "websocket" else {
            return 0  // "h2c": lws switches to HTTP/2 and the request arrives as an h2 stream
        }
        let path = lwsHeader(wsi, WSI_TOKEN_GET_URI) ?? ""
        if server.isStopping {
            return refuse(wsi, status: 503, message: "server is shutting down", field: "", rule: "shutdown")
        }
        guard path == options.webSocketPath else {
            return refuse(wsi, status: 404, message: "no WebSocket endpoint at \(path)", field: "path",
                          rule: "not_found")
        }
        // lws 4.1 upgrades any Sec-WebSocket-Version (it logs and speaks 13); RFC 6455 section 4.4 asks for 426 naming
        // the version the server speaks.
        let version = lwsHeader(wsi, WSI_TOKEN_VERSION).map { String($0.filter { $0 != " " && $0 != "\t" }) }
        guard version == "13" else {
            return refuse(
                wsi, status: 426,
                message: "unsupported Sec-WebSocket-Version \(version ?? "(none)"); this server speaks 13",
                field: "sec-websocket-version", rule: "websocket_version", headers: [("sec-websocket-version", "13")])
        }
        let headers = capture.headers(wsi)
        if let name = headerWithNUL(headers) {
            return refuse(wsi, status: 400, message: "header \(name) contains a NUL byte", field: name,
                          rule: "header_value")
        }
        let peer = capture.peerAddress(wsi)
        if options.refusesPlain(wsi, from: peer) {
            return refuse(wsi, status: 403, message: "plain ws:// is off here: use wss://", field: "scheme", rule: "tls_required")
        }
        let request = HTTPRequest(
            method: .get, path: path, queryItems: capture.query(wsi), lowercasedHeaders: headers,
            body: [], remoteAddress: peer)
        if let refused = server.delegate?.wsUpgrade(request) {
            return refuse(wsi, status: refused.status, message: refused.message, field: refused.field, rule: refused.rule)
        }
        pendingUpgrades[wsi] = request
        return 0
    }

    /// `LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION`: 0 accepts the upgrade to the adapter's protocol.
    func acceptsProtocol(_ wsi: OpaquePointer) -> Int32 {
        if server.isStopping { return 1 }
        return lwsHeader(wsi, WSI_TOKEN_GET_URI) == options.webSocketPath ? 0 : 1
    }

    private func refuse(
        _ wsi: OpaquePointer, status: Int, message: String, field: String, rule: String,
        headers: [(String, String)] = []
    ) -> Int32 {
        let body = server.rejectionBody(status: status, message: message, field: field, rule: rule)
        let h1 = lws_get_network_wsi(wsi) == wsi
        // HTTP/1: the hand-built answer says `connection: close`, so hang up (-1) once it is written; h2: the stream
        // answered (1) and the connection goes on.
        return writer.writeRefusal(wsi, status: status, headers: headers, body: body) && !h1 ? 1 : -1
    }

    /// `LWS_CALLBACK_ESTABLISHED`.
    func established(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer) -> Int32 {
        let id = server.newID()
        user.storeBytes(of: id, as: UInt64.self)
        let request =
            pendingUpgrades.removeValue(forKey: wsi)
            ?? HTTPRequest(
                method: .get, path: options.webSocketPath, queryItems: capture.query(wsi),
                lowercasedHeaders: capture.headers(wsi), body: [], remoteAddress: capture.peerAddress(wsi))
        let conn = WSConnection(id: id, server: server, wsi: wsi, peerAddress: request.remoteAddress)
        connections[id] = conn
        keepalive.confirmed(id, now: loopSeconds())
        scheduleKeepalive()
        if server.isStopping {
            conn.close(code: 1001, reason: "shutdown")
            return 0
        }
        server.delegate?.wsOpened(conn, request)
        return 0
    }

    // MARK: - Input

    /// `LWS_CALLBACK_RECEIVE`.
    func received(_ user: UnsafeMutableRawPointer, _ wsi: OpaquePointer, _ inp: UnsafeMutableRawPointer?, _ len: Int)
        -> Int32
    {
        guard let conn = connections[sessionID(user)] else { return 0 }
        if conn.writer.closing { return writeClose(conn, wsi) }  // input after our close is dropped
        switch conn.assembler.receive(wsi, inp, len, limit: options.maxBodyBytes, acceptBinary: false) {
        case .partial:
            return 0
        case .refuse(let code, let reason):
            conn.close(code: code, reason: reason)
            return writeClose(conn, wsi)
        case .message(let bytes, _):
            server.delegate?.wsText(conn, bytes)
            return conn.writer.closing ? writeClose(conn, wsi) : 0
        }
    }

    /// `LWS_CALLBACK_WS_PEER_INITIATED_CLOSE`.
    func peerClosed(_ user: UnsafeMutableRawPointer, _ inp: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        guard let conn = connections[sessionID(user)] else { return 0 }
        // The answer to our own close frame: nothing more will come, close without echoing it.
        if conn.writer.closeSent { return -1 }
        if let inp, len >= 2 {
            let b = inp.assumingMemoryBound(to: UInt8.self)
            conn.peerCloseCode = UInt16(b[0]) << 8 | UInt16(b[1])
        }
        return 0  // lws echoes the close frame, then closes
    }

    /// The connection's own keepalive interval (``WSConnection/keepalive(every:)``).
    func setKeepalive(_ id: UInt64, every seconds: Double) {
        guard connections[id] != nil else { return }
        keepalive.setInterval(id, seconds, now: loopSeconds())
    }

    /// `LWS_CALLBACK_RECEIVE_PONG`: the peer is alive; its next PING is a full interval away.
    func pong(_ user: UnsafeMutableRawPointer) {
        let id = sessionID(user)
        guard connections[id] != nil else { return }
        keepalive.confirmed(id, now: loopSeconds())
    }

    /// `LWS_CALLBACK_CLOSED`.
    func closed(_ user: UnsafeMutableRawPointer) {
        let id = sessionID(user)
        guard id != 0, let conn = connections.removeValue(forKey: id) else { return }
        keepalive.remove(id)
        conn.wsi = nil
        conn.writer.abandon()
        server.delegate?.wsClosed(conn)
    }

    /// `LWS_CALLBACK_WSI_DESTROY`: an upgrade that never completed.
    func forget(_ wsi: OpaquePointer) {
        if !pendingUpgrades.isEmpty { pendingUpgrades.removeValue(forKey: wsi) }
    }

    // MARK: - Output

    /// `LWS_CALLBACK_SERVER_WRITEABLE`.
    func writable(_ user: UnsafeMutableRawPointer, _ wsi: OpaquePointer) -> Int32 {
        guard let conn = connections[sessionID(user)] else { return 0 }
        if conn.writer.closing { return writeClose(conn, wsi) }
        conn.writer.inWritable = true
        conn.writer.bytesSinceCheck = 0
        server.delegate?.wsWritable(conn)
        conn.flushFrames()
        conn.writer.inWritable = false
        if conn.writer.failed { return -1 }
        if conn.writer.closing { return writeClose(conn, wsi) }
        return 0
    }

    /// Queues `conn` for ``flushWritable()``; `false` when it must go through lws's writable callback instead
    /// (during the flush itself, so the loop still wakes for it, and from teardown on).
    func deferWritable(_ conn: WSConnection) -> Bool {
        guard !flushing, !server.isTearingDown else { return false }
        if !conn.writeQueued {
            conn.writeQueued = true
            wantWritable.append(conn)
        }
        return true
    }

    /// After each loop turn: every connection that asked to write gets its ``LWSServerDelegate/wsWritable(_:)``
    /// now, when lws holds nothing unsent for it. A frame the kernel does not take whole is buffered by lws, which
    /// flushes it on POLLOUT.
    func flushWritable() {
        guard !wantWritable.isEmpty else { return }
        let batch = wantWritable
        wantWritable.removeAll(keepingCapacity: true)
        flushing = true
        defer { flushing = false }
        for conn in batch {
            conn.writeQueued = false
            guard let wsi = conn.wsi, !conn.writer.closing, !conn.writer.failed else { continue }
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                continue
            }
            conn.writer.inWritable = true
            conn.writer.bytesSinceCheck = 0
            server.delegate?.wsWritable(conn)
            conn.flushFrames()
            conn.writer.inWritable = false
            if conn.writer.failed || conn.writer.closing { lws_callback_on_writable(wsi) }
        }
    }

    // MARK: - Keepalive

    private func scheduleKeepalive() {
        guard keepaliveTimer == nil, !keepalive.isEmpty, !server.isTearingDown else { return }
        keepaliveTimer = server.schedule(after: KeepaliveWheel.tick) { [unowned(unsafe) self] in
            self.keepaliveTimer = nil
            self.sweepKeepalive()
        }
    }

    /// PINGs to peers silent for `pingInterval`; peers that did not answer one within `pingTimeout` are dropped
    /// (no close frame: they are not listening), as lws's validity policy did.
    private func sweepKeepalive() {
        for (id, step) in keepalive.sweep(now: loopSeconds()) {
            guard let conn = connections[id], let wsi = conn.wsi else { continue }
            switch step {
            case .ping:
                if conn.writer.closing { continue }  // the close handshake has its own timeout
                if !conn.writer.ping(wsi, through: server.out) { lws_callback_on_writable(wsi) }
            case .hangUp:
                lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            }
        }
        scheduleKeepalive()
    }

    private func writeClose(_ conn: WSConnection, _ wsi: OpaquePointer) -> Int32 {
        conn.writer.writeClose(wsi, through: server.out, timeout: options.closeHandshakeTimeout)
        return 0
    }

    // MARK: - Stopping

    func closeAll(code: UInt16, reason: String) {
        for conn in connections.values { conn.close(code: code, reason: reason) }
    }

    /// Before the context is destroyed: no frame of any kind any more.
    func abandonAll() {
        for conn in connections.values { conn.writer.abandon() }
    }

    func removeAll() {
        keepaliveTimer?.cancel()
        keepaliveTimer = nil
        // The context is gone: a connection still held elsewhere (a session's transport) must not reach lws with a
        // handle it freed — without one, every call is a no-op.
        for conn in connections.values { conn.wsi = nil }
        connections.removeAll()
        wantWritable.removeAll()
        pendingUpgrades.removeAll()
    }
}

/// The loop's clock in seconds (lws's, which its timers use too).
func loopSeconds() -> Double {
    Double(lws_now_usecs()) / 1_000_000
}
