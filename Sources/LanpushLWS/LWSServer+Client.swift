import CLibWebSockets

/// Outgoing WebSockets on the server's own loop (e.g. the gateway's connection to Home Assistant's
/// `/api/websocket`): the same context and service thread, a separate client vhost (no listener) created on
/// the first connection, whose only protocol (`"lanpush-ws-client"`) is never offered to incoming upgrades.
///
/// Threading: exactly the server's rules — ``connectWebSocket(url:subprotocol:headers:allowInsecureTLS:delegate:)``,
/// ``configureWebSocketClients(_:)`` and every ``WSClientConnection`` member are loop-thread only (or before
/// `run()` on the creating thread); every ``WSClientDelegate`` callback runs on the loop thread.
///
/// Stopping: ``requestStop()`` also sends each open client connection a 1001 "going away" close frame and
/// waits for them within the same ``LWSServerOptions/stopDrainSeconds``; whatever is left when the context
/// is destroyed gets its last delegate callback then (on the loop thread, inside `run()`).
extension LWSServer {
    /// Replaces the options of the client connections (TLS CA file, keepalive, message limit). Call before
    /// the first ``connectWebSocket(url:subprotocol:headers:allowInsecureTLS:delegate:)``; returns `false`
    /// (and changes nothing) once client connections exist. Loop thread only (or before `run()`).
    @discardableResult
    public func configureWebSocketClients(_ options: WSClientOptions) -> Bool {
        assertOnLoop()
        guard clientEngine == nil else { return false }
        clientOptions = options
        return true
    }

    /// Starts connecting to `url` (`ws://` or `wss://`; `http(s)://` are accepted as aliases), offering
    /// `subprotocol` when given and sending `headers` with the upgrade request (e.g. `Authorization`).
    /// `wss://` verifies the server's certificate and host name against the system CA store (plus
    /// ``WSClientOptions/caFile``) unless `allowInsecureTLS`. Loop thread only (or before `run()`).
    ///
    /// Throws for a malformed URL or header, or once the server is stopping. Every other failure — DNS,
    /// refused, TLS, a non-101 answer, timeout — arrives as ``WSClientDelegate/wsClientConnectFailed(_:error:)``
    /// from the loop, never from inside this call. Host names are resolved with a blocking `getaddrinfo` on
    /// the loop thread (lws 4.1 as Debian builds it has no asynchronous DNS).
    @discardableResult
    public func connectWebSocket(
        url: String, subprotocol: String? = nil, headers: [(String, String)] = [], allowInsecureTLS: Bool = false,
        delegate: WSClientDelegate
    ) throws(WSClientError) -> WSClientConnection {
        assertOnLoop()
        guard let ctx = contextForClients else { throw .notRunning }
        let engine: WSClientEngine
        if let existing = clientEngine {
            engine = existing
        } else {
            engine = WSClientEngine(options: clientOptions, loopThread: loopThread, tls: options.initialisesOpenSSL) {
                [weak self] seconds, body in
                self?.schedule(after: seconds, body)
            }
            engine.attach(ctx)
            try engine.ensureVhost()
            engine.onIdle = { [weak self] in self?.connectionGone() }
            clientEngine = engine
        }
        return try engine.connect(
            url: url, subprotocol: subprotocol, headers: headers, allowInsecureTLS: allowInsecureTLS,
            delegate: delegate)
    }

    /// Outgoing WebSockets not yet closed (connecting or open). Loop thread only.
    public var webSocketClientCount: Int { clientEngine?.connections.count ?? 0 }
}
