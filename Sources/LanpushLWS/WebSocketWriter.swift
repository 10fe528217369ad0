import CLibWebSockets

/// The write side of one WebSocket, server or client: frames go out only inside a writable turn, and a close is
/// a close *handshake*.
///
/// Frames: lws 4.1 takes back-to-back writes; whatever the kernel does not take is kept in lws's own (unbounded)
/// output buffer and flushed before the next writable callback. Only a negative `lws_write` result is an error:
/// with output already buffered, lws appends the frame and returns what it flushed of the older data.
///
/// Closing: the close frame is written here, not by lws (on lws 4.1's libuv loop the close path kills the socket
/// before its pending close frame is ever written). Then the connection stays open, input is read and dropped,
/// until the peer's close frame or the timeout: closing a socket with unread input makes the kernel answer with a
/// reset, and a reset throws away the close frame if it still waits in the socket. Once the peer's close frame
/// arrives nothing more will come, and the socket closes with a clean FIN.
///
/// Loop thread only, inside the callbacks of the connection that owns it.
struct WebSocketWriter {
    /// Inside the connection's writable turn: `send` is allowed.
    var inWritable = false
    /// lws reported a write error: the connection closes.
    private(set) var failed = false
    /// A close was asked for: no more frames.
    private(set) var closing = false
    private(set) var closeCode: UInt16 = 1000
    private var closeReason: [UInt8] = []
    /// The close frame is written: waiting for the peer's.
    private(set) var closeSent = false
    /// Bytes sent in the current writable turn since the kernel was last asked whether the socket is full.
    var bytesSinceCheck = 0

    /// One complete data frame. `false` (nothing sent) outside a writable turn, once closing, or on a write error.
    /// With a `batch` the frame joins the turn's others and goes out with them (``flush(_:_:)``, at the latest when
    /// the turn ends); one too large for a batch is written alone, after what is gathered.
    mutating func send(
        _ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer, binary: Bool, through out: WriteBuffer,
        batch: FrameBatch? = nil
    ) -> Bool {
        guard inWritable, !failed, !closing else { return false }
        bytesSinceCheck += bytes.count
        if let batch {
            if batch.append(wsi, bytes, binary: binary) { return true }
            guard flush(wsi, batch) else { return false }
            if batch.append(wsi, bytes, binary: binary) { return true }
        }
        let p = out.payload(bytes.count)
        if bytes.count > 0, let src = bytes.baseAddress {
            UnsafeMutableRawPointer(p).copyMemory(from: src, byteCount: bytes.count)
        }
        if lws_write(wsi, p, bytes.count, binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT) >= 0 { return true }
        failed = true
        return false
    }

    /// Writes the frames `batch` gathered for this connection. `false` on a write error (the connection closes).
    mutating func flush(_ wsi: OpaquePointer, _ batch: FrameBatch) -> Bool {
        if batch.flush(wsi) { return true }
        failed = true
        return false
    }

    /// A PING, written whenever the keepalive is due (lws buffers it behind unsent data, if any). Its payload is not
    /// empty: lws 4.1 reports only a PONG that carries one (`LWS_CALLBACK_RECEIVE_PONG`), and a PONG echoes the PING's.
    /// `false` on a write error (the connection then closes from its writable callback).
    mutating func ping(_ wsi: OpaquePointer, through out: WriteBuffer) -> Bool {
        guard !failed, !closing else { return true }
        let payload: StaticString = "lanpush"
        let p = out.payload(payload.utf8CodeUnitCount)
        p.update(from: payload.utf8Start, count: payload.utf8CodeUnitCount)
        if lws_write(wsi, p, payload.utf8CodeUnitCount, LWS_WRITE_PING) >= 0 { return true }
        failed = true
        return false
    }

    /// Records a close with `code` and `reason` (cut to the 123 bytes a close frame carries). `false` when a close
    /// was already asked for.
    mutating func requestClose(code: UInt16, reason: String) -> Bool {
        guard !closing else { return false }
        closing = true
        closeCode = code
        closeReason = closeReasonBytes(reason)
        return true
    }

    /// The connection is gone or the context is going: no frame of any kind any more.
    mutating func abandon() {
        closing = true
        closeSent = true
    }

    /// From a callback of the connection once closing: writes the close frame (once) and arms the wait for the
    /// peer's. The callback then returns 0: the connection stays open to read the answer.
    mutating func writeClose(_ wsi: OpaquePointer, through out: WriteBuffer, timeout seconds: Int) {
        guard closing, !closeSent else { return }
        closeSent = true
        let n = 2 + closeReason.count
        let p = out.payload(n)
        p[0] = UInt8(closeCode >> 8)
        p[1] = UInt8(closeCode & 0xFF)
        for i in 0..<closeReason.count { p[i + 2] = closeReason[i] }
        // 4 is lws's LWS_WRITE_CLOSE; its public header leaves the name out ("handled by lws_close_reason").
        _ = lws_write(wsi, p, n, lws_write_protocol(rawValue: 4))
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, Int32(clamping: seconds))
    }
}

/// A close frame's reason as UTF-8, cut at a character boundary to the 123 bytes a close frame can carry.
func closeReasonBytes(_ reason: String) -> [UInt8] {
    var r: [UInt8] = []
    for scalar in reason.unicodeScalars {
        let encoded = Array(String(scalar).utf8)
        if r.count + encoded.count > 123 { break }
        r.append(contentsOf: encoded)
    }
    return r
}
