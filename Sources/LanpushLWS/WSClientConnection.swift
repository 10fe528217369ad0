import CLibWebSockets

/// What the owner of an outgoing WebSocket implements. Every method is called on the loop thread of the
/// context the connection lives on (the ``LWSServer``'s or the ``WSClientLoop``'s), never concurrently; the
/// delegate may call back into the connection (and open further connections) synchronously from any of them.
///
/// Each connection ends with exactly one of ``wsClientConnectFailed(_:error:)`` (it never opened) or
/// ``wsClientClosed(_:code:reason:)`` (it had opened). Neither is ever called from inside
/// `connectWebSocket`: a connection that fails at once reports it from the loop right after.
public protocol WSClientDelegate: AnyObject {
    /// The handshake completed (status 101); ``WSClientConnection/subprotocol`` holds what the server chose.
    func wsClientOpened(_ connection: WSClientConnection)

    /// One complete text message (fragments reassembled, UTF-8 validated by lws).
    func wsClientText(_ connection: WSClientConnection, _ bytes: [UInt8])

    /// The connection asked for with ``WSClientConnection/requestWritable()`` can take data now: call
    /// ``WSClientConnection/send(_:binary:)``. Not called once the connection is closing.
    func wsClientWritable(_ connection: WSClientConnection)

    /// The open connection is gone: peer close, ping timeout, error, ``WSClientConnection/close(code:reason:)``
    /// or loop stop. `code` and `reason` are those of the peer's close frame when the peer sent one first
    /// (`nil` / "" when the socket just dropped, or when this side closed first).
    func wsClientClosed(_ connection: WSClientConnection, code: UInt16?, reason: String)

    /// The connection never opened: DNS, TCP, TLS or handshake failure, timeout, a close before it opened
    /// (``WSClientError/cancelled``) or the loop stopping.
    func wsClientConnectFailed(_ connection: WSClientConnection, error: WSClientError)

    /// One complete binary message — only with ``WSClientOptions/acceptBinary`` (otherwise a binary message
    /// closes the connection with 1003). Default: ignored.
    func wsClientBinary(_ connection: WSClientConnection, _ bytes: [UInt8])
}

extension WSClientDelegate {
    public func wsClientWritable(_ connection: WSClientConnection) {}
    public func wsClientBinary(_ connection: WSClientConnection, _ bytes: [UInt8]) {}
}

/// Why a client WebSocket could not be created or could not open.
public enum WSClientError: Error, Equatable, CustomStringConvertible {
    /// The URL is not `ws://` / `wss://` (`http://` / `https://` are accepted as aliases) or is malformed.
    case invalidURL(String)
    /// The loop is stopping or gone: no new connections.
    case notRunning
    /// lws could not create the client vhost (e.g. the CA file cannot be read).
    case setupFailed(String)
    /// DNS, TCP, TLS or WebSocket handshake failure, in lws's words ("connect failed",
    /// "HS: ws upgrade response not 101", a certificate error, ...). `httpStatus` is the server's answer to
    /// the upgrade request when one arrived (e.g. 404), else `nil`.
    case connectFailed(reason: String, httpStatus: Int?)
    /// ``WSClientConnection/close(code:reason:)`` (or a loop stop) before the connection opened.
    case cancelled

    public var description: String {
        switch self {
        case .invalidURL(let why): return "invalid WebSocket URL: \(why)"
        case .notRunning: return "the event loop is stopping"
        case .setupFailed(let why): return "cannot set up WebSocket clients: \(why)"
        case .connectFailed(let reason, let status?): return "\(reason) (HTTP \(status))"
        case .connectFailed(let reason, nil): return reason
        case .cancelled: return "cancelled before the connection opened"
        }
    }
}

/// Settings for the client connections of one context (one ``WSClientLoop``, or one ``LWSServer`` — see
/// ``LWSServer/configureWebSocketClients(_:)``). Plain values; copied when the clients are set up.
public struct WSClientOptions: Sendable {
    /// Largest reassembled incoming message; beyond it the connection closes with 1009.
    public var maxMessageBytes: Int
    /// Per-connection receive buffer (lws `rx_buffer_size`); bigger messages arrive in pieces the adapter
    /// reassembles.
    public var rxBufferSize: Int
    /// Seconds without a PONG before lws sends a PING; `0` turns keepalive off.
    public var pingInterval: Int
    /// Seconds after the ping time without a PONG before the connection is hung up.
    public var pingTimeout: Int
    /// Seconds for DNS + TCP + TLS + upgrade (lws `timeout_secs` of the client vhost).
    public var connectTimeout: Int
    /// A PEM file of CA certificates to trust for `wss://`. `nil`: the system store
    /// (`/etc/ssl/certs/ca-certificates.crt`, plus OpenSSL's default paths). OpenSSL's default verify paths
    /// are always loaded as well.
    public var caFile: String?
    /// ``WSClientLoop`` only: after ``WSClientLoop/requestStop()``, how long `run()` waits for peers to
    /// answer the 1001 close frames.
    public var stopDrainSeconds: Double
    /// ``WSClientLoop`` only: lws's process-wide log mask (`LLL_ERR` = 1, `LLL_WARN` = 2, ...), to stderr.
    public var libraryLogMask: Int32
    /// Deliver binary messages to ``WSClientDelegate/wsClientBinary(_:_:)`` (e.g. MQTT over WebSocket) instead
    /// of closing with 1003.
    public var acceptBinary: Bool
    /// ``WSClientLoop`` only: lws `fd_limit_per_thread`, i.e. about how many connections the loop can hold.
    /// Keep it below RLIMIT_NOFILE (lws 4.1 misbehaves at EMFILE).
    public var fdLimit: Int
    /// ``WSClientLoop`` only: the event loop under the context (many connections: epoll through libuv).
    public var eventLoop: LWSEventLoopKind

    public init(
        maxMessageBytes: Int = 16 * 1024 * 1024,
        rxBufferSize: Int = 16 * 1024,
        pingInterval: Int = 30,
        pingTimeout: Int = 30,
        connectTimeout: Int = 10,
        caFile: String? = nil,
        stopDrainSeconds: Double = 0.5,
        libraryLogMask: Int32 = 1 | 2,
        acceptBinary: Bool = false,
        fdLimit: Int = 256,
        eventLoop: LWSEventLoopKind = .libuv
    ) {
        self.maxMessageBytes = maxMessageBytes
        self.rxBufferSize = rxBufferSize
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.connectTimeout = connectTimeout
        self.caFile = caFile
        self.stopDrainSeconds = stopDrainSeconds
        self.libraryLogMask = libraryLogMask
        self.acceptBinary = acceptBinary
        self.fdLimit = fdLimit
        self.eventLoop = eventLoop
    }
}

/// A parsed `ws://` / `wss://` URL.
public struct WebSocketURL: Sendable, Equatable {
    public let secure: Bool
    /// Host name or address as connected to (IPv6 without brackets).
    public let host: String
    public let port: Int
    /// Path and query, at least "/".
    public let path: String

    /// Accepts `ws`, `wss`, and `http` / `https` as their aliases. Userinfo and fragments are dropped.
    public init(_ text: String) throws(WSClientError) {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else {
            throw .invalidURL("'\(text)' has no scheme")
        }
        let scheme = text[..<colon].lowercased()
        switch scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: throw .invalidURL("scheme '\(scheme)' (use ws:// or wss://)")
        }
        var rest = text[text.index(colon, offsetBy: 3)...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        var pathPart = String(rest[authorityEnd...])
        if pathPart.isEmpty { pathPart = "/" } else if pathPart.first == "?" { pathPart = "/" + pathPart }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var hostPart: Substring
        var portPart: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL("unclosed '[' in '\(text)'") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw .invalidURL("junk after ']' in '\(text)'") }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        } else {
            hostPart = authority
        }
        guard !hostPart.isEmpty else { throw .invalidURL("no host in '\(text)'") }
        guard !hostPart.unicodeScalars.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" || $0 == "/" }) else {
            throw .invalidURL("bad host in '\(text)'")
        }
        host = String(hostPart)
        if let portPart {
            guard let p = Int(portPart), (1...65535).contains(p) else {
                throw .invalidURL("bad port '\(portPart)' in '\(text)'")
            }
            port = p
        } else {
            port = secure ? 443 : 80
        }
        guard !pathPart.unicodeScalars.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw .invalidURL("spaces in the path of '\(text)'")
        }
        path = pathPart
    }

    /// The `Host:` header value: brackets around IPv6, the port unless it is the scheme's default.
    public var hostHeader: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? h : "\(h):\(port)"
    }

    public var description: String { "\(secure ? "wss" : "ws")://\(hostHeader)\(path)" }
}

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
    var delegate: WSClientDelegate?
    let headers: [(String, String)]
    var state: State = .connecting
    var wsi: OpaquePointer?
    var closeCode: UInt16 = 1000
    var closeReason: [UInt8] = []
    var peerCloseCode: UInt16?
    var peerCloseReason = ""
    var httpStatus: Int?
    var inWritable = false
    var writeFailed = false
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
        self.delegate = delegate
        self.headers = headers
    }

    /// `true` from the handshake until the connection is closed or a close was requested.
    public var isOpen: Bool { state == .open && wsi != nil }

    /// `true` while the handshake is still under way.
    public var isConnecting: Bool { state == .connecting }

    /// Whether the socket cannot take more right now (lws output buffer pending or kernel buffer full).
    /// `true` when not open. Costs one `poll()` call.
    public var isChoked: Bool {
        guard state == .open, let wsi else { return true }
        return lws_send_pipe_choked(wsi) != 0
    }

    /// The socket, for tests (TCP_NODELAY check); -1 when not connected.
    var socketFD: Int32 { wsi.map { Int32(lws_get_socket_fd($0)) } ?? -1 }

    /// Asks for one ``WSClientDelegate/wsClientWritable(_:)`` call when the socket can take data. Repeated
    /// requests before the callback merge into one. No-op unless open.
    public func requestWritable() {
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
        guard state == .open, let wsi, inWritable, !writeFailed, let engine else { return false }
        if engine.writeFrame(wsi, bytes, binary: binary) { return true }
        writeFailed = true
        return false
    }

    /// Open: sends a close frame with `code` and `reason` (at most 123 bytes of UTF-8) from the next
    /// writable callback; ``WSClientDelegate/wsClientClosed(_:code:reason:)`` follows once lws has closed
    /// the socket. Still connecting: abandons the attempt (``WSClientError/cancelled`` follows from the loop).
    /// No-op if already closing or closed.
    public func close(code: UInt16 = 1000, reason: String = "") {
        switch state {
        case .connecting:
            cancelled = true
            if let wsi { lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC) }
        case .open:
            guard let wsi else { return }
            state = .closing
            closeCode = code
            closeReason = closeReasonBytes(reason)
            lws_callback_on_writable(wsi)
        case .closing, .done:
            return
        }
    }
}
