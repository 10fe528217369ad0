import CLibWebSockets

/// One outgoing WebSocket. Identity is the object (and its ``id``). Every member is loop-thread only
/// (the thread inside ``LWSServer/run()`` or ``WSClientLoop/run()``).
///
/// Writing follows the same rule as ``WSConnection``: ``requestWritable()``, then in
/// ``WSClientDelegate/wsClientWritable(_:)`` ``send(_:binary:)`` while ``isChoked`` is `false` (lws's own
/// output buffer is unbounded: bound your queue yourself), and ``requestWritable()`` again if frames remain.
/// `send` outside that callback returns `false` and sends nothing.
///
/// The connection retains its delegate until its last callback (closed or connect failed) has run.
public final class WSClientConnection {
    enum State { case connecting, open, closing, done }

    /// Unique within the loop's lifetime (never reused).
    public let id: UInt64
    /// The URL as parsed at connect time.
    public let url: WebSocketURL
    /// Free slot for the owner. The adapter never reads it.
    public var userData: AnyObject?
    /// The `Sec-WebSocket-Protocol` the server answered with (`nil` if none). Valid once opened.
    public internal(set) var subprotocol: String?

    weak var engine: WSClientEngine?
    private let loopThread: LoopThread
    var delegate: WSClientDelegate?
    let headers: [(String, String)]
    var state: State = .connecting
    var wsi: OpaquePointer?
    var writer = WebSocketWriter()
    var peerCloseCode: UInt16?
    var peerCloseReason = ""
    var assembler = MessageAssembler()
    /// Set when close() was called before the handshake completed.
    var cancelled = false
    /// Set when the handshake took longer than ``WSClientOptions/connectTimeout``.
    var timedOut = false
    var connectTimer: LWSTimer?

    init(id: UInt64, url: WebSocketURL, engine: WSClientEngine, delegate: WSClientDelegate, headers: [(String, String)]) {
        self.id = id
        self.url = url
        self.engine = engine
        self.loopThread = engine.loopThread
        self.delegate = delegate
        self.headers = headers
    }

    /// `true` from the handshake until the connection is closed or a close was requested.
    public var isOpen: Bool {
        loopThread.assertCurrent()
        return state == .open && wsi != nil
    }

    /// `true` while the handshake is still under way.
    public var isConnecting: Bool {
        loopThread.assertCurrent()
        return state == .connecting
    }

    /// Whether the socket cannot take more right now (lws output buffer pending or kernel buffer full).
    /// `true` when not open. Costs one `poll()` call.
    public var isChoked: Bool {
        loopThread.assertCurrent()
        guard state == .open, let wsi else { return true }
        return lws_send_pipe_choked(wsi) != 0
    }

    /// The socket, for tests (TCP_NODELAY check); -1 when not connected.
    var socketFD: Int32 { wsi.map { Int32(lws_get_socket_fd($0)) } ?? -1 }

    /// Asks for one ``WSClientDelegate/wsClientWritable(_:)`` call when the socket can take data. Repeated
    /// requests before the callback merge into one. No-op unless open.
    public func requestWritable() {
        loopThread.assertCurrent()
        guard state == .open, let wsi else { return }
        lws_callback_on_writable(wsi)
    }

    /// Sends one complete frame (text unless `binary`; lws masks it). Only valid inside
    /// ``WSClientDelegate/wsClientWritable(_:)`` for this connection; returns `false` (and sends nothing)
    /// elsewhere, when not open, or when lws reports a write error (the connection then closes).
    @discardableResult
    public func send(_ bytes: [UInt8], binary: Bool = false) -> Bool {
        bytes.withUnsafeBytes { send(bytes: $0, binary: binary) }
    }

    /// ``send(_:binary:)`` from a raw buffer (copied behind lws's `LWS_PRE` headroom before writing).
    @discardableResult
    public func send(bytes: UnsafeRawBufferPointer, binary: Bool = false) -> Bool {
        loopThread.assertCurrent()
        guard let engine, state == .open, let wsi, !engine.tearingDown else { return false }
        return writer.send(wsi, bytes, binary: binary, through: engine.out)
    }

    /// Open: sends a close frame with `code` and `reason` (at most 123 bytes of UTF-8) from the next
    /// writable callback, then waits (at most ``WSClientOptions/closeHandshakeTimeout``) for the server's close
    /// frame, dropping what the server still sends; ``WSClientDelegate/wsClientClosed(_:code:reason:)`` follows
    /// once lws has closed the socket. Still connecting: abandons the attempt (``WSClientError/cancelled``
    /// follows from the loop). No-op if already closing or closed.
    public func close(code: UInt16 = 1000, reason: String = "") {
        loopThread.assertCurrent()
        switch state {
        case .connecting:
            cancelled = true
            if let wsi { lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC) }
        case .open:
            guard let wsi, writer.requestClose(code: code, reason: reason) else { return }
            state = .closing
            lws_callback_on_writable(wsi)
        case .closing, .done:
            return
        }
    }
}
