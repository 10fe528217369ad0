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
