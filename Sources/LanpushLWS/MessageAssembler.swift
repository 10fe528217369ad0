import CLibWebSockets

/// Puts WebSocket messages back together from lws's receive callbacks: a message bigger than the receive
/// buffer (or sent in fragments) arrives in several pieces. Enforces the size limit before buffering, so an
/// oversized message is refused without holding it. Shared by server and client connections.
///
/// Loop thread only, inside the receive callback of the connection that owns it.
struct MessageAssembler {
    enum Outcome {
        /// More pieces to come.
        case partial
        case message([UInt8], binary: Bool)
        /// Close the connection with this code (1003 binary not accepted, 1009 too big).
        case refuse(code: UInt16, reason: String)
    }

    private var buffer: [UInt8] = []
    private var inProgress = false
    private var binary = false

    mutating func receive(
        _ wsi: OpaquePointer, _ inp: UnsafeMutableRawPointer?, _ len: Int, limit: Int, acceptBinary: Bool
    ) -> Outcome {
        let remaining = Int(lws_remaining_packet_payload(wsi))
        let complete = lws_is_final_fragment(wsi) != 0 && remaining == 0
        if !inProgress {
            binary = lws_frame_is_binary(wsi) != 0
            if binary && !acceptBinary { return .refuse(code: 1003, reason: "binary messages are not supported") }
            if len + remaining > limit { return .refuse(code: 1009, reason: "message too big") }
            if complete {  // the common case: the whole message in one piece, no buffering
                return .message(inp.map { Array(UnsafeRawBufferPointer(start: $0, count: len)) } ?? [], binary: binary)
            }
            inProgress = true
            buffer.removeAll(keepingCapacity: false)
        }
        if buffer.count + len + remaining > limit {
            buffer = []
            return .refuse(code: 1009, reason: "message too big")
        }
        if let inp, len > 0 { buffer.append(contentsOf: UnsafeRawBufferPointer(start: inp, count: len)) }
        guard complete else { return .partial }
        let bytes = buffer
        buffer = []
        inProgress = false
        return .message(bytes, binary: binary)
    }
}
