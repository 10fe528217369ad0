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
    /// ``WSClientLoop`` only: the event loop under the context (many connections: epoll through libev).
    public var eventLoop: LWSEventLoopKind
    /// After this side sent its close frame: seconds it keeps reading (and dropping) what the server still sends,
    /// waiting for the server's close frame, before it closes the socket anyway (closing with unread input makes
    /// the kernel send a reset, which can destroy the close frame before the server reads it).
    public var closeHandshakeTimeout: Int

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
        eventLoop: LWSEventLoopKind = .libev,
        closeHandshakeTimeout: Int = 2
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
        self.closeHandshakeTimeout = closeHandshakeTimeout
    }
}
