/// What a session needs from a WebSocket connection; the lws adapter provides it. Loop thread only.
public protocol SessionTransport: AnyObject {
    /// Ask for a `writable` callback (lws `lws_callback_on_writable`).
    func requestWritable()
    /// Send one text frame; only valid inside the writable callback. `false` when the socket is choked.
    func send(_ bytes: [UInt8]) -> Bool
    /// True while the kernel/lws cannot take more data right now.
    var isChoked: Bool { get }
    /// Close with a WebSocket close code and reason.
    func close(code: UInt16, reason: String)
    var peer: String { get }
    /// The WebSocket subprotocol the handshake chose (`lanpush.v1`, `lanpush.v2`, `lanpush.publisher`).
    var subprotocol: String { get }
    /// Stop (`true`) or resume reading the peer's frames: TCP then holds what the peer still sends (flow control of
    /// a publisher that outruns its commits or does not read its answers).
    func pauseInput(_ paused: Bool)
    /// Ping this connection every `seconds` (a client asked for a longer keepalive than the default); a peer that
    /// answers none for `seconds` + the ping timeout is gone.
    func keepalive(every seconds: Double)
}
