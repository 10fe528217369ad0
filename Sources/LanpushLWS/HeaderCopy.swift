import CLibWebSockets

/// A header lws parsed for `wsi` (request headers on the server, the handshake answer on a client), or `nil`
/// when absent. Loop thread only, inside a callback for `wsi`.
func lwsHeader(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
    let n = Int(lws_hdr_total_length(wsi, token))
    guard n > 0 else { return nil }
    return copyCString(capacity: n + 1) { buf, cap in lws_hdr_copy(wsi, buf, cap, token) }
}

/// Lets `fill` copy a NUL-terminated string into a temporary buffer of `capacity` bytes (it returns the length
/// or a negative error, as lws's copy functions do) and decodes it as UTF-8.
func copyCString(capacity: Int, _ fill: (UnsafeMutablePointer<CChar>, Int32) -> Int32) -> String? {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buf -> String? in
        guard let base = buf.baseAddress else { return nil }
        base.initialize(repeating: 0, count: capacity)
        let n = Int(fill(base, Int32(capacity)))
        guard n >= 0, n < capacity else { return nil }
        return base.withMemoryRebound(to: UInt8.self, capacity: n) {
            String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self)
        }
    }
}
