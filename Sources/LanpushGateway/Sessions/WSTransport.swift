import LanpushLWS

/// `SessionTransport` over an lws connection.
final class WSTransport: SessionTransport {
    weak var connection: WSConnection?
    let peer: String
    let subprotocol: String

    init(_ connection: WSConnection) {
        self.connection = connection
        self.peer = connection.peerAddress
        self.subprotocol = connection.subprotocol
    }

    func requestWritable() { connection?.requestWritable() }
    func send(_ bytes: [UInt8]) -> Bool { connection?.send(bytes) ?? false }
    var isChoked: Bool { connection?.isChoked ?? true }
    func close(code: UInt16, reason: String) { connection?.close(code: code, reason: reason) }
    func pauseInput(_ paused: Bool) { connection?.pauseInput(paused) }
}
