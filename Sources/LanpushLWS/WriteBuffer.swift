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

    /// `bytes` behind the headroom, written as they are (`LWS_WRITE_HTTP`: lws adds nothing). For answers lws has
    /// no builder for at that point.
    @discardableResult
    func writeRaw(_ wsi: OpaquePointer, _ bytes: [UInt8]) -> Bool {
        let p = payload(bytes.count)
        p.update(from: bytes, count: bytes.count)
        return lws_write(wsi, p, bytes.count, LWS_WRITE_HTTP) >= 0
    }
}
