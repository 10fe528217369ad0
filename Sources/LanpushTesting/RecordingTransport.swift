import LanpushCore
import LanpushGateway

/// A WebSocket as the gateway sees one, with nothing on the wire: every frame sent is kept, a close is recorded,
/// and the test decides when the socket is writable or full.
public final class RecordingTransport: SessionTransport {
    /// Every text frame the gateway sent, parsed.
    public private(set) var sent: [JSONValue] = []
    /// The close the gateway asked for, if any.
    public private(set) var closed: (code: UInt16, reason: String)?
    /// While true the socket takes nothing (a slow reader): `send` refuses and frames wait in the gateway.
    public var choked = false
    /// The gateway asked to write since the last flush.
    public private(set) var wantsWrite = false
    public let peer: String

    public init(peer: String = "127.0.0.1") {
        self.peer = peer
    }

    public func requestWritable() { wantsWrite = true }

    public func send(_ bytes: [UInt8]) -> Bool {
        guard !choked, closed == nil else { return false }
        sent.append((try? JSONValue.parse(bytes)) ?? .string(String(decoding: bytes, as: UTF8.self)))
        return true
    }

    public var isChoked: Bool { choked }

    public func close(code: UInt16, reason: String) {
        if closed == nil { closed = (code, reason) }
    }

    /// Takes the write request (the loop's after-turn flush does the same).
    func takeWriteRequest() -> Bool {
        defer { wantsWrite = false }
        return wantsWrite
    }
}
