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
    /// `TestSession.drain()` empties it again.
    public var choked = false
    /// The socket takes this many more frames, then is choked (a kernel buffer that fills mid-flush).
    public var chokeAfter: Int?
    /// The gateway stopped reading this socket (flow control): a real client's frames would wait in TCP.
    public private(set) var inputPaused = false
    /// The gateway asked to write since the last flush.
    public private(set) var wantsWrite = false
    /// How many times the gateway asked to write (with lws, each is a writable callback the loop schedules).
    public private(set) var writeRequests = 0
    public let peer: String
    public let subprotocol: String

    public init(peer: String = "127.0.0.1", subprotocol: String = ProtocolVersion.v1.rawValue) {
        self.peer = peer
        self.subprotocol = subprotocol
    }

    public func requestWritable() {
        wantsWrite = true
        writeRequests += 1
    }

    public func send(_ bytes: [UInt8]) -> Bool {
        guard !choked, closed == nil else { return false }
        if let left = chokeAfter {
            chokeAfter = left - 1
            if left <= 1 { choked = true }
        }
        sent.append((try? JSONValue.parse(bytes)) ?? .string(String(decoding: bytes, as: UTF8.self)))
        return true
    }

    public var isChoked: Bool { choked }

    public func pauseInput(_ paused: Bool) { inputPaused = paused }

    /// The keepalive interval the gateway set for this connection (`nil`: the server's default).
    public private(set) var keepaliveInterval: Double?

    public func keepalive(every seconds: Double) { keepaliveInterval = seconds }

    public func close(code: UInt16, reason: String) {
        if closed == nil { closed = (code, reason) }
    }

    /// Takes the write request (the loop's after-turn flush does the same). A choked socket keeps its request:
    /// lws calls back only once it can write again.
    func takeWriteRequest() -> Bool {
        guard !choked else { return false }
        defer { wantsWrite = false }
        return wantsWrite
    }
}
