import CLibWebSockets

/// The frames one server connection writes in one writable turn, gathered and handed to lws as one write: one
/// `send()` — one TCP segment and one wake-up of the reader — where each frame used to be one. At saturation a
/// session writes several frames a turn (a fan-out's changes to several tags, the answers of a publisher's window),
/// and each `send()` on loopback costs more in the kernel than lanpushd spends building the frame.
///
/// The frames are complete RFC 6455 frames, built here as lws builds a server's: FIN, the opcode, the length in its
/// shortest form, no mask (a server never masks) and no extension bits (the server offers no extension). lws takes
/// them through `LWS_WRITE_HTTP`, its raw write, which on a WebSocket connection goes straight to the socket
/// (`lws_issue_raw`) with the same partial-write buffering as a frame. Only a connection that owns its socket batches:
/// a WebSocket carried in an HTTP/2 stream needs lws's own framing.
///
/// One batch per server (only one connection writes at a time, inside its writable turn), loop thread only.
final class FrameBatch {
    /// `LWS_PRE`: lws's headroom in front of every write.
    private let pre = Int(lanpush_lws_pre())
    private let base: UnsafeMutableRawPointer
    /// The largest batch: lws hands at most this much to one `send()` (its `tx_packet_size`) and would keep the
    /// rest of a larger write as a partial one.
    let limit: Int
    /// Bytes gathered, frame headers included.
    private(set) var count = 0
    /// The connection the gathered frames are for.
    private var wsi: OpaquePointer?

    init(limit: Int) {
        self.limit = limit
        base = .allocate(byteCount: Int(lanpush_lws_pre()) + limit, alignment: 16)
    }

    deinit { base.deallocate() }

    /// The header of a server's unfragmented, unmasked frame of `length` payload bytes, in its shortest form.
    static func headerCount(_ length: Int) -> Int { length < 126 ? 2 : length <= 0xFFFF ? 4 : 10 }

    /// Appends one frame for `wsi`; `false` (nothing appended) when it does not fit beside what is gathered, or is
    /// for another connection than the gathered frames.
    func append(_ wsi: OpaquePointer, _ payload: UnsafeRawBufferPointer, binary: Bool) -> Bool {
        let header = Self.headerCount(payload.count)
        guard count + header + payload.count <= limit, self.wsi == nil || self.wsi == wsi else { return false }
        self.wsi = wsi
        let p = base.advanced(by: pre + count).assumingMemoryBound(to: UInt8.self)
        p[0] = 0x80 | (binary ? 0x2 : 0x1)
        switch header {
        case 2:
            p[1] = UInt8(payload.count)
        case 4:
            p[1] = 126
            p[2] = UInt8(payload.count >> 8)
            p[3] = UInt8(payload.count & 0xFF)
        default:
            p[1] = 127
            for i in 0..<8 { p[2 + i] = UInt8(truncatingIfNeeded: UInt64(payload.count) >> (56 - 8 * UInt64(i))) }
        }
        if let src = payload.baseAddress, payload.count > 0 {
            UnsafeMutableRawPointer(p + header).copyMemory(from: src, byteCount: payload.count)
        }
        count += header + payload.count
        return true
    }

    /// Writes what is gathered for `wsi` (nothing when the batch is empty or another connection's). `false` when lws
    /// reports a write error.
    func flush(_ wsi: OpaquePointer) -> Bool {
        guard count > 0, self.wsi == wsi else { return true }
        let n = count
        count = 0
        self.wsi = nil
        return lws_write(wsi, base.advanced(by: pre).assumingMemoryBound(to: UInt8.self), n, LWS_WRITE_HTTP) >= 0
    }
}
