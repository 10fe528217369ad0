import CLibWebSockets

/// The client protocol's callback: every lws event of an outgoing WebSocket arrives here — handshake headers,
/// the handshake's end, input, writability, the close and the connection's destruction — and moves the
/// connection's state and its delegate.
///
/// Loop thread only.
extension WSClientEngine {
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
            return established(conn, wsi)

        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard let conn = connection(for: wsi) else { return 0 }
            return receive(conn, wsi, inp, len)

        case LWS_CALLBACK_CLIENT_WRITEABLE:
            guard let conn = connection(for: wsi) else { return 0 }
            return writable(conn, wsi)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            guard let conn = connection(for: wsi) else { return 0 }
            return peerClosed(conn, inp, len)

        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            guard let conn = connection(for: wsi) else { return 0 }
            connectFailed(conn, wsi, inp, len)
            return 0

        case LWS_CALLBACK_CLIENT_CLOSED:
            guard let conn = connection(for: wsi) else { return 0 }
            ended(conn, whileConnecting: "closed during the handshake")
            return 0

        case LWS_CALLBACK_WSI_DESTROY:
            // The catch-all: whatever lws did not report by the time the wsi goes.
            guard let id = connectionID(for: wsi) else { return 0 }
            if let conn = connections[id] ?? (connectingNow?.id == id ? connectingNow : nil) {
                ended(conn, whileConnecting: "connection closed")
            }
            connectionDestroyed(id)
            return 0

        default:
            return 0
        }
    }

    private func established(_ conn: WSClientConnection, _ wsi: OpaquePointer) -> Int32 {
        if conn.cancelled || tearingDown { return -1 }
        conn.wsi = wsi
        conn.state = .open
        conn.connectTimer?.cancel()
        conn.delegate?.wsClientOpened(conn)
        if conn.state == .closing { lws_callback_on_writable(wsi) }
        return 0
    }

    private func writable(_ conn: WSClientConnection, _ wsi: OpaquePointer) -> Int32 {
        if conn.state == .closing { return writeClose(conn, wsi) }
        guard conn.state == .open else { return 0 }
        conn.writer.inWritable = true
        conn.delegate?.wsClientWritable(conn)
        conn.writer.inWritable = false
        if conn.writer.failed { return -1 }
        if conn.state == .closing { return writeClose(conn, wsi) }
        return 0
    }

    private func peerClosed(_ conn: WSClientConnection, _ inp: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        // The answer to our own close frame: nothing more will come, close without echoing it.
        if conn.writer.closeSent { return -1 }
        if let inp, len >= 2 {
            let b = inp.assumingMemoryBound(to: UInt8.self)
            conn.peerCloseCode = UInt16(b[0]) << 8 | UInt16(b[1])
            conn.peerCloseReason = String(
                decoding: UnsafeRawBufferPointer(start: inp + 2, count: len - 2), as: UTF8.self)
        }
        return 0  // lws echoes the close frame, then closes
    }

    private func connectFailed(
        _ conn: WSClientConnection, _ wsi: OpaquePointer, _ inp: UnsafeMutableRawPointer?, _ len: Int
    ) {
        var text = "connect failed"
        if let inp, len > 0 {
            text = String(decoding: UnsafeRawBufferPointer(start: inp, count: len), as: UTF8.self)
        } else if let inp {
            text = String(cString: inp.assumingMemoryBound(to: CChar.self))
        }
        let status = Int(lws_http_client_http_response(wsi))
        finish(conn, failure: .connectFailed(reason: text, httpStatus: status > 0 ? status : nil),
               deferred: inConnectCall)
    }

    /// The connection is gone: a failed connect if it never opened, else a close.
    private func ended(_ conn: WSClientConnection, whileConnecting reason: String) {
        if conn.state == .connecting {
            finish(conn, failure: .connectFailed(reason: reason, httpStatus: nil), deferred: inConnectCall)
        } else {
            finish(conn, closedWith: conn.peerCloseCode, conn.peerCloseReason)
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
        if conn.state == .closing { return writeClose(conn, wsi) }  // input after our close is dropped
        guard conn.state == .open else { return 0 }
        switch conn.assembler.receive(wsi, inp, len, limit: options.maxMessageBytes, acceptBinary: options.acceptBinary) {
        case .partial:
            return 0
        case .refuse(let code, let reason):
            conn.close(code: code, reason: reason)
            return writeClose(conn, wsi)
        case .message(let bytes, let binary):
            if binary {
                conn.delegate?.wsClientBinary(conn, bytes)
            } else {
                conn.delegate?.wsClientText(conn, bytes)
            }
            return conn.state == .closing ? writeClose(conn, wsi) : 0
        }
    }

    private func writeClose(_ conn: WSClientConnection, _ wsi: OpaquePointer) -> Int32 {
        conn.writer.writeClose(wsi, through: out, timeout: options.closeHandshakeTimeout)
        return 0
    }
}


// MARK: - C entry point

/// The client protocol's callback: reaches the engine through the user pointer of its vhost (the same
/// function serves the server's context and the standalone loop's).
func lanpushLWSClientCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ inp: UnsafeMutableRawPointer?, _ len: Int
) -> Int32 {
    guard let wsi, let vh = lws_get_vhost(wsi), let me = lws_vhost_user(vh) else { return 0 }
    return Unmanaged<WSClientEngine>.fromOpaque(me).takeUnretainedValue().callback(wsi, reason, inp, len)
}
