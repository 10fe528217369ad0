import LanpushLWS

/// `SessionTransport` over an lws connection.
///
/// Holds the connection strongly: the delegate drops the transport, and the gateway its session, in the connection's
/// close callback, and a closed connection answers every call from its own state (no lws handle: nothing sent, choked,
/// no-op). A weak reference cost an atomic load at every write request, frame and choke check, ~1.7 % of a fan-out.
final class WSTransport: SessionTransport {
    let connection: WSConnection
    let peer: String
    let subprotocol: String

    init(_ connection: WSConnection) {
        self.connection = connection
        self.peer = connection.peerAddress
        self.subprotocol = connection.subprotocol
    }

    func requestWritable() { connection.requestWritable() }
    func send(_ bytes: [UInt8]) -> Bool { connection.send(bytes) }
    var isChoked: Bool { connection.isChoked }
    func close(code: UInt16, reason: String) { connection.close(code: code, reason: reason) }
    func pauseInput(_ paused: Bool) { connection.pauseInput(paused) }
    func keepalive(every seconds: Double) { connection.keepalive(every: seconds) }
}
