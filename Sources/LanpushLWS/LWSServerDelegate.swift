/// What the daemon implements. Every method is called on the loop thread (the thread inside
/// ``LWSServer/run()``), never concurrently; the delegate may call back into the server and its
/// connections synchronously from any of them.
public protocol LWSServerDelegate: AnyObject {
    /// A complete HTTP request (body read in full, within ``LWSServerOptions/maxBodyBytes``). Answer through
    /// `response`, now or later on the loop thread. WebSocket upgrades never arrive here.
    func handleHTTP(_ request: HTTPRequest, _ response: HTTPResponse)

    /// Renders the body of an answer the adapter gives on its own (see ``HTTPRejection``); it is sent
    /// as `application/json`. Default: ``HTTPRejection/defaultJSON``.
    func rejectHTTP(_ rejection: HTTPRejection) -> [UInt8]

    /// A WebSocket handshake on ``LWSServerOptions/webSocketPath`` is about to be accepted: a rejection answers it
    /// (JSON) instead and closes the connection. `request` holds its path, query, headers and peer address.
    /// Default: accept.
    func wsUpgrade(_ request: HTTPRequest) -> HTTPRejection?

    /// A WebSocket on ``LWSServerOptions/webSocketPath`` completed its handshake. `request` holds the
    /// handshake's path, query, headers and peer address (method `.get`, empty body).
    func wsOpened(_ connection: WSConnection, _ request: HTTPRequest)

    /// One complete text message (fragments reassembled, UTF-8 validated by lws).
    func wsText(_ connection: WSConnection, _ bytes: [UInt8])

    /// The connection asked for with ``WSConnection/requestWritable()`` can take data now: call
    /// ``WSConnection/send(_:binary:)``. Not called once the connection is closing.
    func wsWritable(_ connection: WSConnection)

    /// The connection is gone (peer close, ping timeout, error, ``WSConnection/close(code:reason:)``, or
    /// server stop). Called exactly once per opened connection; afterwards the object is inert.
    func wsClosed(_ connection: WSConnection)

    /// ``LWSServer/wake()`` was called (several wakes may merge into one call, and an occasional call may
    /// come without a wake: drain your queue, don't count calls). Default: nothing.
    func loopWoken()

    /// One turn of the loop is over: every callback of it has run. The place to finish what the turn changed (the
    /// gateway commits it to its store here, once, whatever the turn did). Default: nothing.
    func loopTurnEnded()
}

extension LWSServerDelegate {
    public func rejectHTTP(_ rejection: HTTPRejection) -> [UInt8] { rejection.defaultJSON }
    public func wsUpgrade(_ request: HTTPRequest) -> HTTPRejection? { nil }
    public func loopWoken() {}
    public func loopTurnEnded() {}
}
