import CLibWebSockets

/// Configuration of an ``LWSServer``. Plain values; copied at `init`.
public struct LWSServerOptions: Sendable {
    /// Address to listen on: an IPv4 literal (`"0.0.0.0"` = every IPv4 address, `"127.0.0.1"`),
    /// an IPv6 literal (`"::"` = every address, v4-mapped included), or an interface name.
    public var host: String
    /// TCP port; `0` asks the kernel for an ephemeral port (read it back from ``LWSServer/port``).
    public var port: Int
    /// Seconds without a PONG before the server sends a WebSocket PING (the adapter's own keepalive,
    /// `KeepaliveWheel`, not lws's per-connection validity timers).
    public var pingInterval: Int
    /// Seconds after the ping time without a PONG before the connection is hung up. A silent peer is
    /// closed `pingInterval + pingTimeout` seconds (plus at most ~0.5 s of timer slack) after its last PONG
    /// (or after the handshake).
    public var pingTimeout: Int
    /// Largest accepted HTTP request body and largest reassembled WebSocket message, in bytes.
    /// Beyond it: HTTP answers 413, WebSocket closes with 1009.
    public var maxBodyBytes: Int
    /// Per-connection WebSocket receive buffer (lws `rx_buffer_size`). Small keeps idle sessions small;
    /// bigger messages still arrive, in several pieces that the adapter reassembles.
    public var rxBufferSize: Int
    /// Receive buffers of their own for some subprotocols (name → bytes, 128 B to 1 MiB), in place of
    /// ``rxBufferSize``. lws reads a WebSocket at most its buffer's size per loop turn, so a connection that streams
    /// many small messages reads a few of them a turn with a small buffer; its own subprotocol lets it read in big
    /// pieces while thousands of idle sessions keep small buffers. The largest also sizes lws's per-thread read buffer
    /// (`pt_serv_buf_size`, 4 KiB otherwise), which caps every read.
    public var receiveBuffers: [String: Int] = [:]
    /// Largest single `send()` lws issues (lws `tx_packet_size`); the remainder of a bigger frame is
    /// buffered by lws and flushed before the next writable callback.
    public var txPacketSize: Int
    /// lws `fd_limit_per_thread`. Pass a value below RLIMIT_NOFILE (lws 4.1 spins on accept at EMFILE).
    /// `0` keeps lws's own default (derived from the rlimit — not recommended).
    public var fdLimitPerThread: Int
    /// How many connections may be receiving their request headers at once (lws `max_http_header_pool`);
    /// connections beyond it wait, unread, until one finishes. lws 4.1 allocates a header table (about
    /// ``maxHeaderBytes`` + 2 KiB) when a connection starts sending headers and frees it once they are parsed
    /// (a WebSocket after its handshake, a keep-alive connection between requests), so the pool bounds memory
    /// under a flood, not idle memory. Size it to the session limit: every session reconnecting at once (after a
    /// restart or a Wi-Fi drop) holds one at the same time. Keep it well above ``pendingPerAddress``, or one
    /// address can fill it.
    public var httpHeaderPool: Int
    /// Seconds a connection may take to send its first request's headers. Then (checked once a second) it is
    /// answered 400 — a request line arrived but its headers never completed, which is also how lws 4.1 leaves
    /// some malformed header lines — or 408 when it sent nothing, and closed; so connections that send nothing
    /// cannot hold header tables. A later request on a keep-alive connection gets two seconds more once its first
    /// byte arrived, then lws closes it without an answer.
    public var headerTimeout: Int
    /// How many connections from one peer address may be still sending their request headers at once. Past it,
    /// new connections from that address are closed right after `accept`, before anything is read. A home's
    /// burst (many tablets behind one NAT reconnecting together) stays far below the default.
    public var pendingPerAddress: Int
    /// How many HTTP connections from one peer address may be open at once, idle keep-alive ones included (a
    /// WebSocket no longer counts once upgraded). Past it, new connections from that address are closed right after
    /// `accept`.
    public var connectionsPerAddress: Int = 512
    /// After the server sent a WebSocket close frame: seconds it keeps reading (and discarding) what the peer
    /// still sends, waiting for the peer's close frame, before it closes the socket anyway. Closing while unread
    /// data sits in the socket makes the kernel answer with a reset, which can destroy the close frame before
    /// the peer reads it.
    public var closeHandshakeTimeout: Int
    /// Largest request header block lws accepts (lws `max_http_header_data`).
    public var maxHeaderBytes: Int
    /// Seconds a request may wait for its ``HTTPResponse`` before lws drops the connection.
    public var responseTimeout: Int
    /// Seconds an idle HTTP/1.1 keep-alive connection is kept open between requests.
    public var keepAliveTimeout: Int
    /// After ``LWSServer/requestStop()``: how long `run()` waits for WebSocket peers to answer the
    /// 1001 close frame before tearing everything down.
    public var stopDrainSeconds: Double
    /// The only path on which WebSocket upgrades are accepted; other upgrade paths get a JSON 404.
    public var webSocketPath: String
    /// The WebSocket subprotocols served, all on the same callbacks. lws binds a handshake to the first name in the
    /// client's `Sec-WebSocket-Protocol` that is served here, and a handshake without the header to the first
    /// name of this list (``WSConnection/subprotocol`` tells which).
    public var webSocketProtocols: [String]
    /// Request headers lws does not know by name that should still be captured into ``HTTPRequest``
    /// (lower case, without the colon), e.g. `"x-request-id"`.
    public var extraHeaderNames: [String]
    /// lws's process-wide log mask (`LLL_ERR` = 1, `LLL_WARN` = 2, `LLL_NOTICE` = 4, ...). lws logs to stderr.
    public var libraryLogMask: Int32
    /// The event loop under the context (``LWSServer/eventLoop`` tells which one is in use).
    public var eventLoop: LWSEventLoopKind
    /// `wss://` and `https://` on the same port as plain (lws tells them apart by the first bytes). `nil`: plain only.
    public var tls: LWSTLSOptions?
    /// Whether outgoing `wss://` connections (``LWSServer/connectWebSocket(url:subprotocol:headers:allowInsecureTLS:delegate:)``)
    /// may be made. OpenSSL is initialised at start only for them or for ``tls``: without either it never is, which
    /// keeps about 2 MiB of libcrypto (its error strings, algorithm tables, a client `SSL_CTX`) out of the process.
    /// `false` makes a `wss://` connection fail with ``WSClientError/setupFailed(_:)``; `ws://` is unaffected.
    public var tlsClients: Bool

    /// Whether the context initialises OpenSSL (and may then give its client vhost an `SSL_CTX`).
    var initialisesOpenSSL: Bool { tls != nil || tlsClients }

    public init(
        host: String = "0.0.0.0",
        port: Int = 8765,
        pingInterval: Int = 10,
        pingTimeout: Int = 10,
        maxBodyBytes: Int = 64 * 1024,
        rxBufferSize: Int = 512,
        txPacketSize: Int = 64 * 1024,
        fdLimitPerThread: Int = 0,
        httpHeaderPool: Int = 1024,
        headerTimeout: Int = 5,
        pendingPerAddress: Int = 256,
        closeHandshakeTimeout: Int = 2,
        maxHeaderBytes: Int = 8192,
        responseTimeout: Int = 60,
        keepAliveTimeout: Int = 30,
        stopDrainSeconds: Double = 0.5,
        webSocketPath: String = "/v1/stream",
        webSocketProtocols: [String] = ["lanpush.v1"],
        extraHeaderNames: [String] = [],
        libraryLogMask: Int32 = 1 | 2,
        eventLoop: LWSEventLoopKind = .libev,
        tlsClients: Bool = true
    ) {
        self.host = host
        self.port = port
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.maxBodyBytes = maxBodyBytes
        self.rxBufferSize = rxBufferSize
        self.txPacketSize = txPacketSize
        self.fdLimitPerThread = fdLimitPerThread
        self.httpHeaderPool = httpHeaderPool
        self.headerTimeout = headerTimeout
        self.pendingPerAddress = pendingPerAddress
        self.closeHandshakeTimeout = closeHandshakeTimeout
        self.maxHeaderBytes = maxHeaderBytes
        self.responseTimeout = responseTimeout
        self.keepAliveTimeout = keepAliveTimeout
        self.stopDrainSeconds = stopDrainSeconds
        self.webSocketPath = webSocketPath
        self.webSocketProtocols = webSocketProtocols
        self.extraHeaderNames = extraHeaderNames
        self.libraryLogMask = libraryLogMask
        self.eventLoop = eventLoop
        self.tlsClients = tlsClients
    }
}

/// The listener's certificate (PEM files OpenSSL reads), and who may still speak plain HTTP beside TLS.
public struct LWSTLSOptions: Sendable, Equatable {
    public var certificatePath: String
    public var privateKeyPath: String
    /// Plain `ws://` / `http://` from any address; `false`: only from loopback (a local Home Assistant), every other
    /// plain request or handshake gets 403 in JSON naming `https`.
    public var plainFromAnywhere: Bool

    /// The TLS 1.2 suites the listener offers: ECDHE key exchange and AEAD ciphers only (Mozilla's "intermediate"
    /// list, in OpenSSL's names).
    public static let tls12Ciphers = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    public init(certificatePath: String, privateKeyPath: String, plainFromAnywhere: Bool = true) {
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
        self.plainFromAnywhere = plainFromAnywhere
    }
}

extension LWSServerOptions {
    func validate() throws(LWSServerError) {
        guard (0...65535).contains(port) else { throw .invalidOptions("port \(port) out of range") }
        guard pingInterval >= 1, pingTimeout >= 1, pingInterval + pingTimeout <= 65535 else {
            throw .invalidOptions("pingInterval and pingTimeout must be >= 1 s")
        }
        guard maxBodyBytes >= 0, rxBufferSize >= 128, txPacketSize >= 1024 else {
            throw .invalidOptions("buffer sizes too small")
        }
        guard httpHeaderPool >= 1, headerTimeout >= 1, pendingPerAddress >= 1, connectionsPerAddress >= 1,
              closeHandshakeTimeout >= 1
        else {
            throw .invalidOptions(
                "httpHeaderPool, headerTimeout, pendingPerAddress and closeHandshakeTimeout must be >= 1")
        }
        guard !webSocketProtocols.isEmpty, !webSocketProtocols.contains(where: \.isEmpty) else {
            throw .invalidOptions("webSocketProtocols needs at least one non-empty name")
        }
        for (name, size) in receiveBuffers {
            guard webSocketProtocols.contains(name) else {
                throw .invalidOptions("receiveBuffers names \(name), which is not one of webSocketProtocols")
            }
            guard (128...(1 << 20)).contains(size) else {
                throw .invalidOptions("receiveBuffers[\(name)] must be 128 B to 1 MiB")
            }
        }
    }
}

/// Why ``LWSServer/init(options:delegate:)`` failed.
public enum LWSServerError: Error, CustomStringConvertible, Equatable {
    /// An option is out of range (the string says which).
    case invalidOptions(String)
    /// `lws_create_context` failed.
    case contextCreationFailed
    /// The vhost could not listen on host:port (address in use, no such address or interface, no permission).
    case listenFailed(host: String, port: Int)

    public var description: String {
        switch self {
        case .invalidOptions(let why): return "invalid server options: \(why)"
        case .contextCreationFailed: return "libwebsockets: could not create the context"
        case .listenFailed(let host, let port):
            return "cannot listen on \(host):\(port) (address in use, unknown address, or no permission)"
        }
    }
}

extension LWSServerOptions {
    /// A plain connection the options do not let in: TLS is on with plain only from loopback, and this one is plain
    /// from elsewhere.
    func refusesPlain(_ wsi: OpaquePointer, from peer: String) -> Bool {
        guard let tls, !tls.plainFromAnywhere, lws_is_ssl(wsi) == 0 else { return false }
        return !(peer.hasPrefix("127.") || peer == "::1" || peer.hasPrefix("::ffff:127."))
    }
}
