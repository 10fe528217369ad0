import CLibWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// Copies what lws parsed of a request — method, headers, query, peer address — into Swift values, so that an
/// ``HTTPRequest`` stays valid after lws reuses its header table.
///
/// Why a fixed list of headers: lws 4.1 keeps known headers in a table indexed by token and has no way to walk
/// the unknown ones, so the adapter copies the headers a gateway reads (plus
/// ``LWSServerOptions/extraHeaderNames``); asking lws for the length first makes the absent ones nearly free.
///
/// Loop thread only, inside a callback for the connection.
final class RequestCapture {
    private let extraHeaderNames: [String]
    /// The peer address of each live connection, looked up once (keep-alive requests reuse it).
    private var peerAddresses: [OpaquePointer: String] = [:]

    init(extraHeaderNames: [String]) {
        self.extraHeaderNames = extraHeaderNames
    }

    /// The method lws recognised, or `nil` (lws parsed a method the adapter does not serve).
    func method(_ wsi: OpaquePointer) -> HTTPMethod? {
        for (token, m) in methodTokens where lws_hdr_total_length(wsi, token) > 0 { return m }
        return nil
    }

    /// Whether lws has parsed a request line yet (headers may still be incomplete).
    func requestLineSeen(_ wsi: OpaquePointer) -> Bool {
        methodTokens.contains { lws_hdr_total_length(wsi, $0.0) > 0 }
    }

    func headers(_ wsi: OpaquePointer) -> HTTPHeaderFields {
        var headers = HTTPHeaderFields()
        headers.reserveCapacity(8)  // no regrowth for a typical request's headers
        for i in headerTokenList.indices where lws_hdr_total_length(wsi, headerTokenList[i]) > 0 {
            if let v = lwsHeader(wsi, headerTokenList[i]) { headers.appendNew(headerNameList[i], v) }
        }
        for name in extraHeaderNames {
            let key = name.lowercased() + ":"
            let n = key.withCString { lws_hdr_custom_length(wsi, $0, Int32(key.utf8.count)) }
            guard n >= 0 else { continue }
            let v = copyCString(capacity: Int(n) + 1) { buf, cap in
                key.withCString { lws_hdr_custom_copy(wsi, buf, cap, $0, Int32(key.utf8.count)) }
            }
            if let v { headers[name.lowercased()] = v }
        }
        return headers
    }

    func query(_ wsi: OpaquePointer) -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        var index: Int32 = 0
        while index < 256 {
            let n = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, index))
            guard n > 0 else { break }
            let frag = copyCString(capacity: n + 1) { buf, cap in
                lws_hdr_copy_fragment(wsi, buf, cap, WSI_TOKEN_HTTP_URI_ARGS, index)
            }
            index += 1
            guard let frag else { break }
            if let eq = frag.firstIndex(of: "=") {
                items.append((String(frag[..<eq]), String(frag[frag.index(after: eq)...])))
            } else {
                items.append((frag, ""))
            }
        }
        return items
    }

    /// The peer's address, looked up once per connection (an HTTP/1.1 keep-alive connection carries many requests).
    func cachedPeerAddress(_ wsi: OpaquePointer) -> String {
        if let known = peerAddresses[wsi] { return known }
        let address = peerAddress(wsi)
        peerAddresses[wsi] = address
        return address
    }

    func peerAddress(_ wsi: OpaquePointer) -> String {
        copyCString(capacity: 64) { buf, cap in
            lws_get_peer_simple(wsi, buf, Int(cap)) == nil ? -1 : Int32(strlen(buf))
        } ?? ""
    }

    /// lws is destroying the connection.
    func forget(_ wsi: OpaquePointer) {
        if !peerAddresses.isEmpty { peerAddresses.removeValue(forKey: wsi) }
    }
}

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

/// RFC 9110 section 5.5: a field value never holds NUL; lws 4.1 stores one as it comes.
func headerWithNUL(_ headers: HTTPHeaderFields) -> String? {
    for (name, value) in headers {
        var v = value  // withUTF8 needs a var; a native string is not copied
        if v.withUTF8({ buf in buf.baseAddress.map { memchr($0, 0, buf.count) != nil } ?? false }) { return name }
    }
    return nil
}

/// A `Content-Length` value: digits only (surrounding blanks allowed), at most 15 of them.
func parseContentLength(_ s: String) -> Int? {
    var value = 0
    var digits = 0
    var trailing = false
    for b in s.utf8 {
        if b == 32 || b == 9 {
            if digits > 0 { trailing = true }
            continue
        }
        guard b >= 48 && b <= 57, !trailing else { return nil }
        digits += 1
        guard digits <= 15 else { return nil }
        value = value * 10 + Int(b - 48)
    }
    return digits > 0 ? value : nil
}

private let methodTokens: [(lws_token_indexes, HTTPMethod)] = [
    (WSI_TOKEN_GET_URI, .get), (WSI_TOKEN_POST_URI, .post), (WSI_TOKEN_PUT_URI, .put),
    (WSI_TOKEN_PATCH_URI, .patch), (WSI_TOKEN_DELETE_URI, .delete), (WSI_TOKEN_OPTIONS_URI, .options),
    (WSI_TOKEN_HEAD_URI, .head),
]

private let headerTokens: [(String, lws_token_indexes)] = [
    ("authorization", WSI_TOKEN_HTTP_AUTHORIZATION),
    ("content-type", WSI_TOKEN_HTTP_CONTENT_TYPE),
    ("content-length", WSI_TOKEN_HTTP_CONTENT_LENGTH),
    ("transfer-encoding", WSI_TOKEN_HTTP_TRANSFER_ENCODING),
    ("expect", WSI_TOKEN_HTTP_EXPECT),
    ("host", WSI_TOKEN_HOST),
    ("user-agent", WSI_TOKEN_HTTP_USER_AGENT),
    ("accept", WSI_TOKEN_HTTP_ACCEPT),
    ("accept-encoding", WSI_TOKEN_HTTP_ACCEPT_ENCODING),
    ("accept-language", WSI_TOKEN_HTTP_ACCEPT_LANGUAGE),
    ("origin", WSI_TOKEN_ORIGIN),
    ("connection", WSI_TOKEN_CONNECTION),
    ("upgrade", WSI_TOKEN_UPGRADE),
    ("cookie", WSI_TOKEN_HTTP_COOKIE),
    ("cache-control", WSI_TOKEN_HTTP_CACHE_CONTROL),
    ("if-none-match", WSI_TOKEN_HTTP_IF_NONE_MATCH),
    ("if-modified-since", WSI_TOKEN_HTTP_IF_MODIFIED_SINCE),
    ("referer", WSI_TOKEN_HTTP_REFERER),
    ("x-forwarded-for", WSI_TOKEN_X_FORWARDED_FOR),
    ("x-real-ip", WSI_TOKEN_HTTP_X_REAL_IP),
    ("x-auth-token", WSI_TOKEN_X_AUTH_TOKEN),
    ("sec-websocket-protocol", WSI_TOKEN_PROTOCOL),
    ("sec-websocket-version", WSI_TOKEN_VERSION),
    ("sec-websocket-key", WSI_TOKEN_KEY),
    ("sec-websocket-extensions", WSI_TOKEN_EXTENSIONS),
]

private let headerTokenList: [lws_token_indexes] = headerTokens.map(\.1)
private let headerNameList: [String] = headerTokens.map(\.0)
