import CLibWebSockets

/// Writes HTTP answers through lws: the header block from lws's header helpers, then the body.
///
/// An answer that fits one packet goes out as ONE write of headers and body together on HTTP/1 (one `send()`, one
/// TCP segment on loopback, instead of two); lws passes a header write through unchanged there. On an h2 stream
/// headers and data must be separate frames, and a big body goes out in `txPacketSize` chunks, one per writable
/// callback.
///
/// Loop thread only, inside a callback for the connection (or, for ``writeTimeoutAnswer(_:_:)``, while lws holds
/// nothing unsent for it).
struct HTTPResponseWriter {
    let out: WriteBuffer
    let txPacketSize: Int

    /// Writes what is next of `r`: the headers (with the body when it fits), or the next body chunk. `false` on a
    /// write error (the caller closes).
    func write(_ r: inout PendingHTTPResponse, _ wsi: OpaquePointer, method: HTTPMethod) -> Bool {
        let sendBody = method != .head
        if !r.headersSent, sendBody, r.body.count <= txPacketSize, lws_get_network_wsi(wsi) == wsi {
            guard writeHeadersAndBody(wsi, r) else { return false }
            r.headersSent = true
            r.bodyOffset = r.body.count
        }
        if !r.headersSent {
            guard writeHeaders(wsi, r, contentLength: r.body.count) else { return false }
            r.headersSent = true
        }
        if sendBody && r.bodyOffset < r.body.count {
            let chunk = min(r.body.count - r.bodyOffset, txPacketSize)
            let last = r.bodyOffset + chunk == r.body.count
            let p = out.payload(chunk)
            let offset = r.bodyOffset
            r.body.withUnsafeBufferPointer { src in p.update(from: src.baseAddress! + offset, count: chunk) }
            guard lws_write(wsi, p, chunk, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) >= 0 else { return false }
            r.bodyOffset += chunk
        }
        return true
    }

    /// A refused WebSocket handshake, answered from the upgrade's own callback. On HTTP/1 it is built by hand:
    /// lws 4.1 asks for the upgrade before it has parsed the request's HTTP version, so its header helpers would
    /// write an `HTTP/1.0` status line, which WebSocket clients (Python `websockets`, for one) refuse to read as an
    /// answer at all. The connection closes after it (`true`: written, the caller hangs up). On an h2 stream lws
    /// knows the version and frames the answer itself.
    func writeRefusal(_ wsi: OpaquePointer, status: Int, headers: [(String, String)] = [], body: [UInt8]) -> Bool {
        if lws_get_network_wsi(wsi) == wsi {
            return writeClosingAnswer(wsi, status: status, reason: Self.reason(status), headers: headers, body: body)
        }
        let r = PendingHTTPResponse(
            status: status, contentType: "application/json", headers: headers, body: body, closeAfter: false)
        guard writeHeaders(wsi, r, contentLength: body.count) else { return false }
        if body.isEmpty { return true }
        let p = out.payload(body.count)
        p.update(from: body, count: body.count)
        return lws_write(wsi, p, body.count, LWS_WRITE_HTTP_FINAL) >= 0
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 426: "Upgrade Required"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }

    /// An interim answer (`100 Continue`) ahead of the real one.
    func writeInterim(_ wsi: OpaquePointer, _ line: String) -> Bool {
        let bytes = Array(line.utf8)
        let p = out.payload(bytes.count)
        p.update(from: bytes, count: bytes.count)
        return lws_write(wsi, p, bytes.count, LWS_WRITE_HTTP_HEADERS) >= 0
    }

    /// A complete `Connection: close` answer built by hand, for connections lws has no HTTP state for: a `CONNECT`
    /// (lws 4.1 makes it a raw socket) and a request whose headers never completed.
    @discardableResult
    func writeClosingAnswer(
        _ wsi: OpaquePointer, status: Int, reason: String, headers: [(String, String)] = [], body: [UInt8]
    ) -> Bool {
        var head = "HTTP/1.1 \(status) \(reason)\r\nserver: lanpush\r\ncontent-type: application/json\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "content-length: \(body.count)\r\nconnection: close\r\n\r\n"
        return out.writeRaw(wsi, Array(head.utf8) + body)
    }

    private func writeHeaders(_ wsi: OpaquePointer, _ r: PendingHTTPResponse, contentLength: Int) -> Bool {
        guard let h = buildHeaders(wsi, r, contentLength: contentLength, room: 0) else { return false }
        var p: UnsafeMutablePointer<UInt8>? = h.end
        return lws_finalize_write_http_header(wsi, h.start, &p, h.limit) == 0
    }

    private func writeHeadersAndBody(_ wsi: OpaquePointer, _ r: PendingHTTPResponse) -> Bool {
        guard let h = buildHeaders(wsi, r, contentLength: r.body.count, room: r.body.count) else { return false }
        var p: UnsafeMutablePointer<UInt8>? = h.end
        guard lws_finalize_http_header(wsi, &p, h.limit) == 0, let bodyStart = p else { return false }
        r.body.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { bodyStart.update(from: base, count: src.count) }
        }
        let total = bodyStart - h.start + r.body.count
        return lws_write(wsi, h.start, total, LWS_WRITE_HTTP_HEADERS) >= 0
    }

    /// The header block (not yet terminated) in the write buffer: from `start` to `end`, at most up to `limit`,
    /// with `room` more bytes available behind `limit` for a body.
    private func buildHeaders(_ wsi: OpaquePointer, _ r: PendingHTTPResponse, contentLength: Int, room: Int)
        -> (start: UnsafeMutablePointer<UInt8>, end: UnsafeMutablePointer<UInt8>, limit: UnsafeMutablePointer<UInt8>)?
    {
        var extra = 0
        for (n, v) in r.headers { extra += n.utf8.count + v.utf8.count + 8 }
        let cap = out.pre + 512 + r.contentType.utf8.count + extra
        out.ensure(cap + room)
        let start = out.base.advanced(by: out.pre).assumingMemoryBound(to: UInt8.self)
        let end = out.base.advanced(by: cap).assumingMemoryBound(to: UInt8.self)
        var p: UnsafeMutablePointer<UInt8>? = start
        let rc = r.contentType.withCString {
            lws_add_http_common_headers(
                wsi, UInt32(clamping: r.status), $0, lws_filepos_t(contentLength), &p, end)
        }
        if rc != 0 { return nil }
        for (name, value) in r.headers {
            let n = sanitizeHeader(name.lowercased()) + ":"
            let v = sanitizeHeader(value)
            let ok = n.withCString { np in
                v.withCString { vp in
                    np.withMemoryRebound(to: UInt8.self, capacity: n.utf8.count + 1) { np8 in
                        vp.withMemoryRebound(to: UInt8.self, capacity: v.utf8.count + 1) { vp8 in
                            lws_add_http_header_by_name(wsi, np8, vp8, Int32(v.utf8.count), &p, end)
                        }
                    }
                }
            }
            if ok != 0 { return nil }
        }
        if r.closeAfter {
            let ok = "close".withCString { vp in
                vp.withMemoryRebound(to: UInt8.self, capacity: 6) {
                    lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION, $0, 5, &p, end)
                }
            }
            if ok != 0 { return nil }
        }
        guard let headerEnd = p else { return nil }
        return (start, headerEnd, end)
    }
}

/// A header name or value without the bytes that would end or split the header line.
private func sanitizeHeader(_ s: String) -> String {
    String(String.UnicodeScalarView(s.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" }))
}
