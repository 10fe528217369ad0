import CLibWebSockets

/// One HTTP request from its headers to its answer.
final class HTTPTransaction {
    let id: UInt64
    let wsi: OpaquePointer
    let method: HTTPMethod
    let path: String
    var queryItems: [(name: String, value: String)] = []
    var headers = HTTPHeaderFields()
    var remoteAddress = ""
    var expected = 0
    var body: [UInt8] = []
    var rejected = false
    var dispatched = false
    /// lws holds a pipelined next request: answer with `Connection: close` and close.
    var pipelined = false
    /// Input is held (rx flow control) until the answer is queued.
    var inputPaused = false
    var response: PendingHTTPResponse?

    init(id: UInt64, wsi: OpaquePointer, method: HTTPMethod, path: String) {
        self.id = id
        self.wsi = wsi
        self.method = method
        self.path = path
    }
}

/// The server's HTTP requests: the adapter's own limits (method, `Content-Length`, body size) before the delegate
/// sees a request, the body, the hand-over to the delegate, and the answer — now or later — through
/// ``HTTPResponseWriter``.
///
/// An answer is written right after the loop turn that produced it (``flushAnswers()``), like the WebSocket writes:
/// asking lws for a writable callback instead costs a POLLOUT flip on and off: an `epoll_ctl` each on libev, a
/// removal from epoll and a re-add on libuv (docs/BENCHMARKS.md). lws's writable callback still carries
/// answers that close the connection, pipelined ones, and the rest of an answer the socket did not take whole.
///
/// lws 4.1 workarounds live here:
/// - an answer is never written inside the request's own callback: completing a transaction there makes lws
///   mis-frame a pipelined next request that has a body;
/// - while an answer is pending past the loop turn of its request, input is paused (rx flow control), or lws
///   re-delivers `BODY_COMPLETION` in a busy loop whenever a pipelined request waits in its buffer;
/// - when lws does hold a pipelined request behind a body, the answer goes out with `Connection: close` (its input
///   accounting is off by then); a pipelining client retries the rest (RFC 9112 section 9.3.2).
///
/// Loop thread only.
final class HTTPTransactions {
    private unowned(unsafe) let server: LWSServer
    private let options: LWSServerOptions
    private let capture: RequestCapture
    private let writer: HTTPResponseWriter
    private var transactions: [UInt64: HTTPTransaction] = [:]
    /// Answers queued during the current loop turn, for ``flushAnswers()``.
    private var answersDue: [HTTPTransaction] = []
    /// Requests handed to the delegate during the current loop turn without an answer yet: their input is paused
    /// after the turn (``flushAnswers()``) if the answer has not come by then.
    private var pausesDue: [HTTPTransaction] = []

    init(server: LWSServer, capture: RequestCapture, writer: HTTPResponseWriter) {
        self.server = server
        self.options = server.options
        self.capture = capture
        self.writer = writer
    }

    /// `LWS_CALLBACK_HTTP`: the request's headers are parsed; `inp` holds the path.
    func headersParsed(
        _ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer, _ inp: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        let old = sessionID(user)
        if old != 0 { transactions.removeValue(forKey: old) }
        let id = server.newID()
        user.storeBytes(of: id, as: UInt64.self)

        let method = capture.method(wsi)
        var path = ""
        if let inp, len > 0 {
            path = String(decoding: UnsafeRawBufferPointer(start: inp, count: len), as: UTF8.self)
        } else if let inp {
            path = String(cString: inp.assumingMemoryBound(to: CChar.self))
        }
        let tx = HTTPTransaction(id: id, wsi: wsi, method: method ?? .get, path: path)
        transactions[id] = tx

        guard let method else {
            reject(tx, status: 405, message: "method not allowed", field: "method", rule: "method_not_allowed")
            return 0
        }
        tx.headers = capture.headers(wsi)
        tx.queryItems = capture.query(wsi)
        tx.remoteAddress = capture.cachedPeerAddress(wsi)
        if options.refusesPlain(wsi, from: tx.remoteAddress) {
            reject(tx, status: 403, message: "plain HTTP is off here: use https://", field: "scheme", rule: "tls_required")
            return 0
        }
        if let name = headerWithNUL(tx.headers) {
            reject(tx, status: 400, message: "header \(name) contains a NUL byte", field: name, rule: "header_value")
            return 0
        }

        if let cl = tx.headers["content-length"] {
            guard let n = parseContentLength(cl) else {
                reject(tx, status: 400, message: "invalid Content-Length", field: "content-length",
                       rule: "content_length")
                return 0
            }
            if n > options.maxBodyBytes {
                reject(tx, status: 413,
                       message: "request body of \(n) bytes exceeds the limit of \(options.maxBodyBytes) bytes",
                       field: "body", rule: "max_body")
                return 0
            }
            tx.expected = n
        } else if method == .post || method == .put || method == .patch
            || tx.headers["transfer-encoding"] != nil
        {
            reject(tx, status: 411, message: "Content-Length required", field: "body", rule: "length_required")
            return 0
        }

        if tx.expected == 0 {
            dispatch(tx)
        } else if let expect = tx.headers["expect"], expect.lowercased() == "100-continue",
            lws_get_network_wsi(wsi) == wsi  // HTTP/1 only (an h2 stream is a child of the network wsi)
        {
            // lws 4.1 does not answer Expect itself; curl would stall a second waiting for it.
            if !writer.writeInterim(wsi, "HTTP/1.1 100 Continue\r\n\r\n") { return -1 }
        }
        return 0
    }

    /// `LWS_CALLBACK_HTTP_BODY`: a piece of the body.
    func bodyReceived(_ user: UnsafeMutableRawPointer, _ inp: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        guard let tx = transactions[sessionID(user)], !tx.rejected, !tx.dispatched else { return 0 }
        if let inp, len > 0 {
            if tx.body.count + len > min(tx.expected, options.maxBodyBytes) {
                reject(tx, status: 413, message: "request body larger than declared or allowed",
                       field: "body", rule: "max_body")
                return 0
            }
            tx.body.append(contentsOf: UnsafeRawBufferPointer(start: inp, count: len))
        }
        return 0
    }

    /// `LWS_CALLBACK_HTTP_BODY_COMPLETION`.
    func bodyComplete(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer) -> Int32 {
        guard let tx = transactions[sessionID(user)] else { return 0 }
        if !tx.rejected && !tx.dispatched {
            dispatch(tx)
            return 0
        }
        // lws 4.1 re-delivers BODY_COMPLETION on every loop pass while a pipelined next request sits in its input
        // buffer, and then never reports the connection writable: answer from here, and close after it.
        tx.pipelined = true
        if tx.response != nil { return write(tx, wsi) }
        return 0
    }

    /// `LWS_CALLBACK_HTTP_WRITEABLE`.
    func writable(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer) -> Int32 {
        guard let tx = transactions[sessionID(user)] else { return 0 }
        return write(tx, wsi)
    }

    /// `LWS_CALLBACK_CLOSED_HTTP` / `LWS_CALLBACK_HTTP_DROP_PROTOCOL`, and a WebSocket taking the connection over.
    func forget(_ user: UnsafeMutableRawPointer) {
        let id = sessionID(user)
        if id != 0 { transactions.removeValue(forKey: id) }
    }

    func removeAll() {
        transactions.removeAll()
        answersDue.removeAll()
        pausesDue.removeAll()
    }

    func isAwaitingAnswer(_ id: UInt64) -> Bool {
        guard let tx = transactions[id] else { return false }
        return tx.response == nil
    }

    func queueResponse(transactionID id: UInt64, _ response: PendingHTTPResponse) {
        guard let tx = transactions[id], tx.response == nil else { return }
        tx.response = response
        if tx.inputPaused {
            tx.inputPaused = false
            lws_rx_flow_control(tx.wsi, 1)
        }
        if writesAfterTurn(tx, response) {
            answersDue.append(tx)
        } else {
            lws_callback_on_writable(tx.wsi)
        }
    }

    /// An answer that keeps the connection open, on HTTP/1 (an h2 stream's frames go through its parent's
    /// writable callback), to a request lws holds nothing pipelined behind.
    private func writesAfterTurn(_ tx: HTTPTransaction, _ r: PendingHTTPResponse) -> Bool {
        !tx.pipelined && !r.closeAfter && !server.isTearingDown && lws_get_network_wsi(tx.wsi) == tx.wsi
    }

    /// After each loop turn, outside every lws callback: the answers queued during the turn. What the kernel does
    /// not take whole stays with lws, which flushes it on POLLOUT and only then completes the transaction. Then
    /// the input of each request of the turn still waiting for its answer is paused.
    ///
    /// lws 4.1 mis-frames a pipelined request that waits in its input buffer behind a request with a body once
    /// that transaction completes, and then re-delivers the body's completion in a busy loop. Which connection
    /// holds buffered input lws does not say, only whether any does (its "do not wait in poll" test), and whether
    /// its re-delivery or a writable callback comes first differs between its event loops. So when any input is
    /// buffered at the end of the turn that read a request with a body, that request counts as pipelined: its
    /// answer goes out with `Connection: close` whenever it comes, and a pipelining client retries the rest.
    func flushAnswers() {
        guard !answersDue.isEmpty || !pausesDue.isEmpty else { return }
        let inputBuffered = server.loop.context.map { lws_service_adjust_timeout($0, 1, 0) == 0 } ?? true
        writeAnswersDue(inputBuffered: inputBuffered)
        guard !pausesDue.isEmpty else { return }
        for tx in pausesDue where transactions[tx.id] === tx && tx.response == nil && !tx.inputPaused {
            if inputBuffered && tx.expected > 0 { tx.pipelined = true }
            tx.inputPaused = true
            lws_rx_flow_control(tx.wsi, 0)
            lws_set_timeout(tx.wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(clamping: options.responseTimeout))
        }
        pausesDue.removeAll(keepingCapacity: true)
    }

    private func writeAnswersDue(inputBuffered: Bool) {
        guard !answersDue.isEmpty else { return }
        let batch = answersDue
        answersDue.removeAll(keepingCapacity: true)
        for tx in batch {
            guard transactions[tx.id] === tx, let r = tx.response else { continue }
            if inputBuffered && tx.expected > 0 { tx.pipelined = true }
            // Pipelined, may be pipelined, or lws still holds bytes of this connection to send: the writable
            // callback takes it (a request without a body completes there and lws serves what follows in order).
            if inputBuffered || !writesAfterTurn(tx, r) || lws_partial_buffered(tx.wsi) != 0 {
                lws_callback_on_writable(tx.wsi)
                continue
            }
            // Outside a callback lws cannot be told to hang up by a return value: it closes on its next service.
            if write(tx, tx.wsi) != 0 {
                lws_set_timeout(tx.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            } else if transactions[tx.id] == nil {
                settleKeepAlive(tx.wsi)
            }
        }
    }

    /// A keep-alive transaction just completed: lws parks the connection until a poll reports it writable (POLLOUT
    /// on, and off again at that pass) before it reads the next request. The socket has just taken a whole answer,
    /// so it is writable: telling lws so now turns POLLOUT on and off within this turn, which libev, applying only a
    /// turn's net change, does not pass to epoll — no extra pass per request, and at most the one `epoll_ctl` libev
    /// makes for a watcher lws re-set (an add the kernel refuses as already registered). Not on libuv, where each of
    /// those changes reaches epoll at once.
    private func settleKeepAlive(_ wsi: OpaquePointer) {
        guard server.loop.kind == .libev, let ctx = server.loop.context else { return }
        _ = lanpush_service_writable(ctx, wsi)
    }

    private func dispatch(_ tx: HTTPTransaction) {
        tx.dispatched = true
        let request = HTTPRequest(
            method: tx.method, path: tx.path, queryItems: tx.queryItems, lowercasedHeaders: tx.headers,
            body: tx.body, remoteAddress: tx.remoteAddress)
        tx.body = []
        let response = HTTPResponse(server: server, transactionID: tx.id, method: tx.method)
        server.delegate?.handleHTTP(request, response)
        guard tx.response == nil, transactions[tx.id] != nil else { return }
        // Answered later: hold further input (a pipelined next request) until then — from the end of this turn, so
        // that an answer given within the turn (the delegate answers when the turn's changes are committed) skips
        // the pause and its undoing: each is an interest change (an epoll_ctl; a removal and a re-add on libuv).
        // The answer's deadline is armed there too: lws keeps its timeouts in one sorted list, and an insertion
        // walks it (a few entries per open connection).
        pausesDue.append(tx)
    }

    private func reject(_ tx: HTTPTransaction, status: Int, message: String, field: String, rule: String) {
        tx.rejected = true
        tx.body = []
        let body = server.rejectionBody(status: status, message: message, field: field, rule: rule)
        var headers: [(String, String)] = []
        if status == 405 { headers.append(("allow", HTTPMethod.allCases.map(\.rawValue).joined(separator: ", "))) }
        tx.response = PendingHTTPResponse(
            status: status, contentType: "application/json", headers: headers, body: body, closeAfter: true)
        lws_callback_on_writable(tx.wsi)
    }

    /// Writes the answer (or its next chunk); the transaction ends with its last byte.
    private func write(_ tx: HTTPTransaction, _ wsi: OpaquePointer) -> Int32 {
        guard var r = tx.response else { return 0 }
        if tx.pipelined && !r.headersSent { r.closeAfter = true }
        guard writer.write(&r, wsi, method: tx.method) else { return -1 }
        tx.response = r
        if !r.isComplete(for: tx.method) {
            lws_callback_on_writable(wsi)
            return 0
        }
        transactions.removeValue(forKey: tx.id)
        if r.closeAfter { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }
}

/// The connection's id, kept by lws in the per-session data of the adapter's protocol.
@inline(__always)
func sessionID(_ user: UnsafeMutableRawPointer) -> UInt64 {
    user.load(as: UInt64.self)
}
