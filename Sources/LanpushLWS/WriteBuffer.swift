import CLibWebSockets

/// The buffer every `lws_write` of one context goes through. lws needs `LWS_PRE` writable bytes in front of
/// whatever it is given (it builds the frame or chunk header there), so payloads are copied in behind that
/// headroom; the buffer grows to the largest write and is reused.
///
/// Threading: loop thread only, like the context whose writes it carries.
final class WriteBuffer {
    /// `LWS_PRE`: headroom in front of every payload.
    let pre = Int(lanpush_lws_pre())
    private(set) var base: UnsafeMutableRawPointer
    private var capacity: Int

    init(capacity: Int = 16 * 1024) {
        self.capacity = capacity
        base = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    /// Makes room for `n` bytes from ``base`` (headroom included).
    func ensure(_ n: Int) {
        guard n > capacity else { return }
        var cap = capacity
        while cap < n { cap *= 2 }
        base.deallocate()
        base = .allocate(byteCount: cap, alignment: 16)
        capacity = cap
    }

    /// Room for an `n`-byte payload behind the headroom.
    func payload(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        ensure(pre + n)
        return base.advanced(by: pre).assumingMemoryBound(to: UInt8.self)
    }

    /// One WebSocket data frame. Only a negative `lws_write` result is an error: with output already
    /// buffered, lws 4.1 appends the frame and returns what it flushed of the older data, which can be less
    /// than this frame's length.
    func writeFrame(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer, binary: Bool) -> Bool {
        let p = payload(bytes.count)
        if bytes.count > 0, let src = bytes.baseAddress { UnsafeMutableRawPointer(p).copyMemory(from: src, byteCount: bytes.count) }
        return lws_write(wsi, p, bytes.count, binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT) >= 0
    }

    /// A close frame (code + reason), written now; the caller then returns -1 so lws closes the socket.
    ///
    /// Why not `lws_close_reason` and let lws send it: on lws 4.1's libuv loop the close path kills the
    /// socket before the pending close frame is ever written (the peer saw no close code at all). A frame
    /// written here is in the kernel before the socket closes, on either loop; what the kernel does not take
    /// yet, lws flushes before it closes (its "flushing before close" state, up to 5 s).
    func writeClose(_ wsi: OpaquePointer, code: UInt16, reason: [UInt8]) {
        let n = 2 + min(reason.count, 123)
        let p = payload(n)
        p[0] = UInt8(code >> 8)
        p[1] = UInt8(code & 0xFF)
        for i in 2..<n { p[i] = reason[i - 2] }
        // 4 is lws's LWS_WRITE_CLOSE; its public header leaves the name out ("handled by lws_close_reason").
        _ = lws_write(wsi, p, n, lws_write_protocol(rawValue: 4))
    }
}

/// A close frame's reason as UTF-8, cut at a character boundary to the 123 bytes a close frame can carry.
func closeReasonBytes(_ reason: String) -> [UInt8] {
    var r: [UInt8] = []
    for scalar in reason.unicodeScalars {
        let encoded = Array(String(scalar).utf8)
        if r.count + encoded.count > 123 { break }
        r.append(contentsOf: encoded)
    }
    return r
}
