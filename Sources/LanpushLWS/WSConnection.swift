import CLibWebSockets

/// One WebSocket session. Identity is the object (and its ``id``). Every member is loop-thread only.
///
/// Writing ("write from the writable callback", the lws rule):
/// 1. call ``requestWritable()`` when you have something to send (requests merge);
/// 2. in ``LWSServerDelegate/wsWritable(_:)`` call ``send(_:binary:)`` once — then you may send further
///    frames in the same callback while ``isChoked`` is `false`. lws 4.1 accepts back-to-back writes:
///    whatever the kernel does not take is appended to lws's own output buffer (unbounded — bound your
///    queue yourself) and ``isChoked`` stays `true` until lws has flushed it, before the next
///    `wsWritable`;
/// 3. if frames remain, call ``requestWritable()`` again before returning.
/// `send` outside `wsWritable` returns `false` and sends nothing; a `false` inside it means the connection
/// is closing — stop sending. `wsWritable` may come from lws's writable callback or, more often, from the
/// server right after a loop turn (``requestWritable()``); the rules are the same.
public final class WSConnection {
    /// Unique within the server's lifetime (shared counter with HTTP transactions; never reused).
    public let id: UInt64
    /// The peer's IP address as text.
    public let peerAddress: String
    /// The subprotocol lws bound the handshake to (one of ``LWSServerOptions/webSocketProtocols``).
    public let subprotocol: String
    /// The status code of the peer's close frame, when the peer closed first (readable in `wsClosed`).
    public internal(set) var peerCloseCode: UInt16?

    weak var server: LWSServer?
    private let loopThread: LoopThread
    /// nil once lws has closed the connection.
    var wsi: OpaquePointer?
    var writer = WebSocketWriter()
    /// In the server's after-turn write list.
    var writeQueued = false
    var assembler = MessageAssembler()
    /// The socket, for tests (TCP_NODELAY check).
    let socketFD: Int32
    /// Frames of one writable turn go out together (``FrameBatch``): the connection owns its socket (not a
    /// WebSocket inside an HTTP/2 stream, which lws must frame itself).
    private let batches: Bool

    init(id: UInt64, server: LWSServer, wsi: OpaquePointer, peerAddress: String) {
        self.id = id
        self.server = server
        self.loopThread = server.loopThread
        self.wsi = wsi
        self.peerAddress = peerAddress
        self.socketFD = Int32(lws_get_socket_fd(wsi))
        self.batches = lws_get_network_wsi(wsi) == wsi
        self.subprotocol = lws_get_protocol(wsi)?.pointee.name.map { String(cString: $0) } ?? ""
    }

    /// `true` until the connection is closed or a close was requested.
    public var isOpen: Bool {
        loopThread.assertCurrent()
        return wsi != nil && !writer.closing
    }

    /// Whether the socket cannot take more right now (lws output buffer pending or kernel buffer full).
    /// `true` when the connection is closing or closed.
    ///
    /// Inside ``LWSServerDelegate/wsWritable(_:)`` it costs no system call until ``chokeCheckBytes`` have been
    /// sent in that callback: the socket was writable when the callback began (or, after a loop turn, lws held
    /// nothing unsent for it), and a write the kernel does not take whole leaves lws holding the rest
    /// (`lws_partial_buffered`), which reads as choked at once — so at most one frame waits in lws. Past the
    /// budget (and outside the callback) it asks the kernel (`poll()`, through `lws_send_pipe_choked`).
    public var isChoked: Bool {
        loopThread.assertCurrent()
        guard let wsi, !writer.closing else { return true }
        if lws_partial_buffered(wsi) != 0 { return true }
        if writer.inWritable && writer.bytesSinceCheck < Self.chokeCheckBytes { return false }
        writer.bytesSinceCheck = 0
        // The kernel is asked about what it holds, so what the turn gathered goes to it first.
        flushFrames()
        if writer.failed || lws_partial_buffered(wsi) != 0 { return true }
        return lws_send_pipe_choked(wsi) != 0
    }

    /// Writes the frames gathered in this writable turn (at its end, and before the kernel is asked whether the
    /// socket is full). A write error marks the writer failed: the connection closes.
    func flushFrames() {
        guard batches, let wsi, let server else { return }
        _ = writer.flush(wsi, server.frames)
    }

    /// Bytes a writable callback may send before ``isChoked`` asks the kernel again.
    public static let chokeCheckBytes = 64 * 1024

    /// Asks for one ``LWSServerDelegate/wsWritable(_:)`` call when the socket can take data. Repeated
    /// requests before the callback merge into one. No-op once closing.
    ///
    /// The call usually comes right after the loop's current turn (``LWSServer`` writes then, while the socket
    /// has nothing pending), otherwise from lws's writable callback.
    public func requestWritable() {
        loopThread.assertCurrent()
        // Already in this turn's write list: a fan-out asks once per change (dozens a turn at saturation).
        guard !writeQueued, let wsi, !writer.closing else { return }
        if let server, server.deferWritable(self) { return }
        lws_callback_on_writable(wsi)
    }

    /// Sends one complete frame (text unless `binary`). Only valid inside
    /// ``LWSServerDelegate/wsWritable(_:)`` for this connection; returns `false` (and sends nothing)
    /// elsewhere, when closing, or when lws reports a write error (the connection then closes).
    @discardableResult
    public func send(_ bytes: [UInt8], binary: Bool = false) -> Bool {
        bytes.withUnsafeBytes { send(bytes: $0, binary: binary) }
    }

    /// ``send(_:binary:)`` from a raw buffer (copied behind lws's `LWS_PRE` headroom before writing).
    @discardableResult
    public func send(bytes: UnsafeRawBufferPointer, binary: Bool = false) -> Bool {
        loopThread.assertCurrent()
        guard let server, let wsi else { return false }
        return writer.send(wsi, bytes, binary: binary, through: server.out, batch: batches ? server.frames : nil)
    }

    /// Stops (`true`) or resumes reading the peer's frames (lws rx flow control): while paused, what the peer sends
    /// waits in lws's buffer and the kernel's, and TCP slows the peer down. Frames already read but not yet delivered
    /// are delivered after the resume, in order.
    public func pauseInput(_ paused: Bool) {
        loopThread.assertCurrent()
        guard let wsi, !writer.closing else { return }
        lws_rx_flow_control(wsi, paused ? 0 : 1)
    }

    /// Pings this connection every `seconds` (instead of ``LWSServerOptions/pingInterval``), from now on; a peer
    /// that answers none for `seconds` + ``LWSServerOptions/pingTimeout`` is hung up.
    public func keepalive(every seconds: Double) {
        loopThread.assertCurrent()
        guard wsi != nil, let server else { return }
        server.sessions.setKeepalive(id, every: seconds)
    }

    /// Closes with a close frame carrying `code` and `reason` (at most 123 bytes of UTF-8). The frame goes
    /// out from the next writable (or receive) callback of this connection; the server then waits (at most
    /// ``LWSServerOptions/closeHandshakeTimeout``) for the peer's close frame, dropping whatever the peer still
    /// sends, and ``LWSServerDelegate/wsClosed(_:)`` follows once lws has closed the socket. No-op if already
    /// closing.
    public func close(code: UInt16 = 1000, reason: String = "") {
        loopThread.assertCurrent()
        guard let wsi, writer.requestClose(code: code, reason: reason) else { return }
        lws_callback_on_writable(wsi)
    }
}
