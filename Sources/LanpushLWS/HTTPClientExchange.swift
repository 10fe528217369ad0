import CLibWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// One request and its answer, from the client's queue to its completion.
final class HTTPClientExchange: @unchecked Sendable {
    let id: UInt64
    let request: HTTPClientLoop.Request
    let url: WebSocketURL
    /// The numeric address to connect to (`nil`: the name did not resolve). Set before the exchange is queued.
    var address: String?
    private var completion: HTTPClientLoop.Completion?

    // The client's thread only, from `start` on.
    var wsi: OpaquePointer?
    var status = 0
    var answer: [UInt8] = []
    /// Whether the answer declares its end (`Content-Length` or chunked); without, it ends when the server closes.
    var framed = true
    /// lws holds C strings of the connection until it is destroyed.
    let strings = LWSMemory()

    init(id: UInt64, request: HTTPClientLoop.Request, url: WebSocketURL, completion: @escaping HTTPClientLoop.Completion) {
        self.id = id
        self.request = request
        self.url = url
        self.completion = completion
    }

    var isDone: Bool { completion == nil }

    /// Reports the outcome, once; later calls (and a cancelled exchange's) do nothing.
    func finish(_ outcome: HTTPClientLoop.Outcome) {
        guard let c = completion else { return }
        completion = nil
        c(outcome)
    }

    /// Drops the completion without calling it (the caller stopped waiting).
    func abandon() { completion = nil }
}

/// The client protocol of ``HTTPClientLoop``'s context: every lws event of an outgoing HTTP request — headers to
/// send, the body, the answer's status and body, errors and the connection's end.
///
/// The client's thread only. lws reaches it through `lws_vhost_user` of its vhost.
final class HTTPClientEngine {
    static let protocolName = "lanpush-http-client"

    let protocolList: UnsafePointer<lws_protocols>
    var onWake: (() -> Void)?
    private let memory = LWSMemory()
    private var plainVhost: OpaquePointer?
    private var tlsVhost: OpaquePointer?
    private var context: OpaquePointer?
    private var exchanges: [UInt64: HTTPClientExchange] = [:]

    init() {
        protocolList = memory.protocols(
            names: [Self.protocolName], callback: lanpushHTTPClientCallback, perSessionDataSize: 0, rxBufferSize: 4096,
            id: 3, txPacketSize: 0)
    }

    /// Binds the engine to its context and makes the plain vhost (the TLS one comes with the first `https://`
    /// request). lws delivers the loop's wake-ups to the protocols of its vhosts, so one must exist from the start.
    func attach(_ ctx: OpaquePointer) -> Bool {
        context = ctx
        return vhost(secure: false) != nil
    }

    /// The plain vhost, or the TLS one: no listener; TLS trusting `SSL_CERT_FILE` when set (OpenSSL's own
    /// convention, which the tests use for a CA of their own), else the system bundle, plus OpenSSL's default
    /// paths. Made apart because the TLS one costs ~4 MiB (OpenSSL's code and the parsed CA bundle) that a gateway
    /// talking plain HTTP to Home Assistant only never needs.
    private func vhost(secure: Bool) -> OpaquePointer? {
        if let made = secure ? tlsVhost : plainVhost { return made }
        guard let context else { return nil }
        var vinfo = lws_context_creation_info()
        vinfo.port = -1
        vinfo.protocols = protocolList
        vinfo.vhost_name = memory.string(secure ? "lanpush-https-client" : "lanpush-http-client")
        vinfo.user = Unmanaged.passUnretained(self).toOpaque()
        if secure {
            // DO_SSL_GLOBAL_INIT on the vhost's options is what makes lws 4.1 build its client SSL_CTX.
            vinfo.options = lanpush_opt_do_ssl_global_init()
            let systemBundle = "/etc/ssl/certs/ca-certificates.crt"
            if let file = getenv("SSL_CERT_FILE").map({ String(cString: $0) }), !file.isEmpty {
                vinfo.client_ssl_ca_filepath = memory.string(file)
            } else if access(systemBundle, R_OK) == 0 {
                vinfo.client_ssl_ca_filepath = memory.string(systemBundle)
            }
        }
        // Backstops only: the caller's own timeout bounds the whole exchange and cancels it.
        vinfo.timeout_secs = 60
        vinfo.connect_timeout_secs = 30
        let made = lws_create_vhost(context, &vinfo)
        if secure { tlsVhost = made } else { plainVhost = made }
        return made
    }

    func start(_ exchange: HTTPClientExchange) {
        guard let address = exchange.address else { return exchange.finish(.failed("host not found")) }
        guard let context, let vhost = vhost(secure: exchange.url.secure) else {
            return exchange.finish(.failed(exchange.url.secure ? "TLS: the client could not be set up (CA file?)" : "the HTTP client is not running"))
        }
        exchanges[exchange.id] = exchange
        let keep = exchange.strings.string
        var info = lws_client_connect_info()
        info.context = context
        info.vhost = vhost
        info.address = keep(address)
        info.port = Int32(exchange.url.port)
        info.path = keep(exchange.url.path)
        // The Host header; over TLS also the name sent in SNI and checked against the certificate.
        info.host = keep(exchange.url.hostHeader)
        info.origin = nil
        info.method = keep(exchange.request.method.uppercased())
        info.protocol = nil
        info.local_protocol_name = protocolList.pointee.name
        info.alpn = keep("http/1.1")
        var flags = Int32(LCCSCF_HTTP_NO_FOLLOW_REDIRECT.rawValue)
        if exchange.url.secure { flags |= Int32(LCCSCF_USE_SSL.rawValue) }
        info.ssl_connection = flags
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(exchange.id))
        if lws_client_connect_via_info(&info) == nil {
            // lws may already have reported the error (and the exchange finished) inside the call.
            exchanges.removeValue(forKey: exchange.id)
            exchange.finish(.failed("connect failed"))
        }
    }

    /// A request still queued is started in the same wake before its cancellation is seen, so an unknown id is one
    /// that is over.
    func cancel(_ id: UInt64) {
        guard let exchange = exchanges[id] else { return }
        exchange.abandon()
        if let wsi = exchange.wsi { lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC) }
    }

    fileprivate func callback(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ inp: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        if reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED {
            onWake?()
            return 0
        }
        guard let p = lws_get_opaque_user_data(wsi), let exchange = exchanges[UInt64(UInt(bitPattern: p))] else {
            return 0
        }
        exchange.wsi = wsi
        switch reason {
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            guard let inp, !exchange.isDone else { return -1 }
            return appendHeaders(exchange, wsi, inp, len)

        case LWS_CALLBACK_CLIENT_HTTP_WRITEABLE:
            return writeBody(exchange, wsi)

        case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP:
            exchange.status = Int(lws_http_client_http_response(wsi))
            exchange.framed = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0
                || lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0
            return exchange.isDone ? -1 : 0

        case LWS_CALLBACK_RECEIVE_CLIENT_HTTP:
            // lws delivers the answer's body (de-chunked) through RECEIVE_CLIENT_HTTP_READ from inside this read.
            var buffer = [CChar](repeating: 0, count: Int(lanpush_lws_pre()) + 4096)
            return buffer.withUnsafeMutableBufferPointer { b in
                var start: UnsafeMutablePointer<CChar>? = b.baseAddress! + Int(lanpush_lws_pre())
                var room = Int32(4096)
                return lws_http_client_read(wsi, &start, &room) < 0 ? -1 : 0
            }

        case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ:
            guard let inp, len > 0 else { return 0 }
            if exchange.answer.count + len > HTTPClientLoop.maxAnswerBytes {
                exchange.finish(.failed("answer larger than \(HTTPClientLoop.maxAnswerBytes) bytes"))
                return -1
            }
            exchange.answer.append(contentsOf: UnsafeRawBufferPointer(start: inp, count: len))
            return 0

        case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
            exchange.finish(.answer(status: exchange.status, body: exchange.answer))
            return -1  // one request per connection: close it

        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            exchange.finish(.failed(Self.describe(inp, len)))
            return 0

        case LWS_CALLBACK_CLOSED_CLIENT_HTTP, LWS_CALLBACK_WSI_DESTROY:
            // An answer without a declared length ends when the server closes; anything else ending here ended
            // too early.
            if exchange.status > 0 && !exchange.framed {
                exchange.finish(.answer(status: exchange.status, body: exchange.answer))
            } else {
                exchange.finish(.failed(exchange.status > 0 ? "connection lost" : "connection closed"))
            }
            if reason == LWS_CALLBACK_WSI_DESTROY {
                exchanges.removeValue(forKey: exchange.id)
                exchange.wsi = nil
            }
            return 0

        default:
            return 0
        }
    }

    private func appendHeaders(
        _ exchange: HTTPClientExchange, _ wsi: OpaquePointer, _ inp: UnsafeMutableRawPointer, _ len: Int
    ) -> Int32 {
        let pp = inp.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        guard var p = pp.pointee else { return -1 }
        let end = p + len
        var headers = exchange.request.headers
        if let body = exchange.request.body { headers.append(("content-length", String(body.count))) }
        for (name, value) in headers {
            let bad: (Unicode.Scalar) -> Bool = { $0 == "\r" || $0 == "\n" || $0 == "\0" }
            guard !name.isEmpty, !name.contains(":"), !name.unicodeScalars.contains(where: bad),
                !value.unicodeScalars.contains(where: bad)
            else {
                exchange.finish(.failed("bad header '\(name)'"))
                return -1
            }
            let n = Array((name.lowercased() + ":").utf8) + [0]
            let v = Array(value.utf8)
            var cursor: UnsafeMutablePointer<UInt8>? = p
            let rc = n.withUnsafeBufferPointer { nb in
                v.withUnsafeBufferPointer { vb in
                    lws_add_http_header_by_name(wsi, nb.baseAddress, vb.baseAddress ?? nb.baseAddress, Int32(v.count), &cursor, end)
                }
            }
            guard rc == 0, let moved = cursor else {
                exchange.finish(.failed("request headers too large"))
                return -1
            }
            p = moved
        }
        pp.pointee = p
        if exchange.request.body != nil {
            lws_client_http_body_pending(wsi, 1)
            lws_callback_on_writable(wsi)
        }
        return 0
    }

    private func writeBody(_ exchange: HTTPClientExchange, _ wsi: OpaquePointer) -> Int32 {
        guard let body = exchange.request.body, !exchange.isDone else { return exchange.isDone ? -1 : 0 }
        let pre = Int(lanpush_lws_pre())
        var buffer = [UInt8](repeating: 0, count: pre + body.count)
        buffer.replaceSubrange(pre..., with: body)
        let written = buffer.withUnsafeMutableBufferPointer { b in
            lws_write(wsi, b.baseAddress! + pre, body.count, LWS_WRITE_HTTP_FINAL)
        }
        // lws keeps what the socket did not take and sends it before reading the answer.
        if written < 0 {
            exchange.finish(.failed("connection lost while sending"))
            return -1
        }
        lws_client_http_body_pending(wsi, 0)
        return 0
    }

    /// lws's reason for a failed connection, in the words a log reader expects.
    static func describe(_ inp: UnsafeMutableRawPointer?, _ len: Int) -> String {
        guard let inp else { return "connect failed" }
        let text = len > 0
            ? String(decoding: UnsafeRawBufferPointer(start: inp, count: len), as: UTF8.self)
            : String(cString: inp.assumingMemoryBound(to: CChar.self))
        let lower = text.lowercased()
        // lws 4.1 says "Unable to connect" for a refused or unreachable address, after trying each it resolved.
        if lower.contains("refused") || lower.contains("unable to connect") { return "could not connect" }
        if lower.contains("tls") || lower.contains("ssl") || lower.contains("certificate") || lower.contains("verify") {
            return "TLS: \(text)"
        }
        return text.isEmpty ? "connect failed" : text
    }
}

/// C entry point: reaches the engine through the user pointer of its vhost.
func lanpushHTTPClientCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ inp: UnsafeMutableRawPointer?, _ len: Int
) -> Int32 {
    guard let wsi, let vh = lws_get_vhost(wsi), let me = lws_vhost_user(vh) else { return 0 }
    return Unmanaged<HTTPClientEngine>.fromOpaque(me).takeUnretainedValue().callback(wsi, reason, inp, len)
}
