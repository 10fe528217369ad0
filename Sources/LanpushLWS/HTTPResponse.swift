/// The handle through which the delegate answers one HTTP request — at once or later (e.g. after a disk
/// commit), always on the loop thread.
///
/// The first `respond` wins; later calls are ignored. If the client has gone away (or the request was
/// already answered) `respond` is a no-op: the handle never touches a dead connection.
public final class HTTPResponse {
    weak var server: LWSServer?
    private let loopThread: LoopThread
    let transactionID: UInt64
    public let method: HTTPMethod
    public private(set) var hasResponded = false

    init(server: LWSServer, transactionID: UInt64, method: HTTPMethod) {
        self.server = server
        self.loopThread = server.loopThread
        self.transactionID = transactionID
        self.method = method
    }

    /// Whether the connection still waits for this answer. Loop thread only.
    public var isPending: Bool {
        loopThread.assertCurrent()
        return !hasResponded && (server?.httpTransactionAlive(transactionID) ?? false)
    }

    /// Queues the answer; it is written when the socket is writable, then the connection is ready for
    /// the next keep-alive request. `headers` are extra headers (`Content-Type` and `Content-Length` are
    /// set by the adapter). For HEAD requests only the headers go out. Loop thread only.
    public func respond(
        status: Int, headers: [(String, String)] = [], body: [UInt8],
        contentType: String = "application/json"
    ) {
        loopThread.assertCurrent()
        guard !hasResponded else { return }
        hasResponded = true
        server?.queueHTTPResponse(
            transactionID: transactionID,
            PendingHTTPResponse(
                status: status, contentType: contentType, headers: headers, body: body,
                closeAfter: false))
    }

    /// Convenience: a JSON body given as a `String`.
    public func respond(status: Int, headers: [(String, String)] = [], json: String) {
        respond(status: status, headers: headers, body: Array(json.utf8))
    }
}

struct PendingHTTPResponse {
    var status: Int
    var contentType: String
    var headers: [(String, String)]
    var body: [UInt8]
    var closeAfter: Bool
    var headersSent = false
    var bodyOffset = 0

    /// Everything of the answer is written (a HEAD answer has no body on the wire).
    func isComplete(for method: HTTPMethod) -> Bool {
        headersSent && (method == .head || bodyOffset >= body.count)
    }
}


/// An HTTP answer the adapter produced itself, before the delegate saw the request
/// (411 no Content-Length, 413 body too large, 405 method, 400 bad Content-Length, 404 WebSocket path,
/// 503 stopping). The delegate may render the body (``LWSServerDelegate/rejectHTTP(_:)``).
public struct HTTPRejection: Sendable, Equatable {
    public let status: Int
    public let message: String
    public let field: String
    public let rule: String

    public init(status: Int, message: String, field: String, rule: String) {
        self.status = status
        self.message = message
        self.field = field
        self.rule = rule
    }

    /// `{"message":"...","field":"...","rule":"..."}`
    public var defaultJSON: [UInt8] {
        JSONText.object([("message", message), ("field", field), ("rule", rule)])
    }
}
