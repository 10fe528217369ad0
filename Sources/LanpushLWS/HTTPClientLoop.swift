import CLibWebSockets
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Outgoing HTTP/1.1 requests (the relay path, Home Assistant's REST API) on lws's own client, on a thread and an
/// lws context of their own, made at the first request.
///
/// Why not URLSession: on Linux it is libcurl, and libcurl brings its own TLS stack (gnutls) with Kerberos, LDAP,
/// SSH, RTMP and the rest of its protocol libraries into the daemon — ~3.6 MiB resident in a gateway that may
/// never send a request (docs/BENCHMARKS.md, "Baseline memory"). lws and OpenSSL are loaded anyway.
///
/// Why a thread of its own and not the gateway's loop: lws 4.1 as Debian builds it resolves names with a blocking
/// `getaddrinfo` inside `lws_client_connect_via_info`; here names are resolved on a Dispatch queue first and lws
/// is handed the address, so a slow DNS server holds up no other request; and the gateway's loop serves the LAN
/// whatever the relay does.
///
/// Threading: ``send(_:completion:)`` and ``cancel(_:)`` from any thread. Completions run on the client's thread,
/// at most once per request (a cancelled request's never): hop back to your own loop before touching its state.
/// lws's own limits are backstops for the connection's stages, not for a server that answers its head and then
/// stalls: bound each request with a timeout of your own that cancels it (`JSONHTTPClient` does).
public final class HTTPClientLoop: @unchecked Sendable {
    /// One request. `url`: `http://` or `https://`; the body is sent with its `Content-Length`.
    public struct Request: Sendable {
        public var method: String
        public var url: String
        public var headers: [(String, String)]
        public var body: [UInt8]?
        /// Asked with the address the host name resolved to (text, e.g. `127.0.0.1`) before connecting: `false`
        /// fails the request without a connection. A URL's host can name any address; the caller decides which it
        /// may reach (the relay path never reaches loopback or link-local addresses it was not told to).
        public var admitsAddress: (@Sendable (String) -> Bool)?

        public init(
            method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
            admitsAddress: (@Sendable (String) -> Bool)? = nil
        ) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.admitsAddress = admitsAddress
        }
    }

    /// What came back: an HTTP answer (any status), or why there was none.
    public enum Outcome: Sendable, Equatable {
        case answer(status: Int, body: [UInt8])
        case invalidURL(String)
        case failed(String)
    }

    public typealias Completion = @Sendable (Outcome) -> Void

    /// The process's client: one thread and one lws context for every outgoing request.
    public static let shared = HTTPClientLoop()

    /// The largest answer body read; a longer one fails the request (a relay or HA answer is a few hundred bytes).
    public static let maxAnswerBytes = 1 << 20

    private let lock = PThreadLock()
    private var queue: [HTTPClientExchange] = []
    private var cancelled: [UInt64] = []
    /// Requests whose host name is still being resolved, and those of them cancelled meanwhile (dropped when the
    /// name is back): the client's thread never hears of either.
    private var resolving = Set<UInt64>()
    private var dropped = Set<UInt64>()
    private var nextID: UInt64 = 0
    private var started = false
    private var failedToStart: String?
    /// Set on the client's thread once its context exists.
    private var waker: LoopWaker?

    init() {}

    /// Starts `request`; returns its ticket for ``cancel(_:)``. Never blocks: the host name is resolved on a
    /// Dispatch queue, the exchange runs on the client's thread.
    @discardableResult
    public func send(_ request: Request, completion: @escaping Completion) -> UInt64 {
        let url: WebSocketURL
        do {
            url = try WebSocketURL(request.url)
        } catch {
            DispatchQueue.global().async { completion(.invalidURL(request.url)) }
            return 0
        }
        let lower = request.url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            DispatchQueue.global().async { completion(.invalidURL(request.url)) }
            return 0
        }
        let id: UInt64 = lock.withLock {
            nextID &+= 1
            resolving.insert(nextID)
            return nextID
        }
        let exchange = HTTPClientExchange(id: id, request: request, url: url, completion: completion)
        DispatchQueue.global().async { [self] in
            exchange.address = Self.resolve(url.host)
            if let address = exchange.address, let admits = request.admitsAddress, !admits(address) {
                lock.withLock {
                    resolving.remove(id)
                    dropped.remove(id)
                }
                return completion(.failed("\(url.host) resolves to \(address), which this request may not reach"))
            }
            enqueue(exchange)
        }
        return id
    }

    /// Abandons a request: its completion will not run, its connection is closed. Any thread; a ticket that is
    /// done or unknown is ignored.
    public func cancel(_ ticket: UInt64) {
        guard ticket != 0 else { return }
        let w: LoopWaker? = lock.withLock {
            if resolving.contains(ticket) {
                dropped.insert(ticket)
                return nil
            }
            cancelled.append(ticket)
            return waker
        }
        w?.wake()
    }

    private func enqueue(_ exchange: HTTPClientExchange) {
        var startNow = false
        var failure: String?
        var cancelledMeanwhile = false
        let w: LoopWaker? = lock.withLock {
            resolving.remove(exchange.id)
            if dropped.remove(exchange.id) != nil {
                cancelledMeanwhile = true
                return nil
            }
            if let failedToStart {
                failure = failedToStart
                return nil
            }
            queue.append(exchange)
            if !started {
                started = true
                startNow = true
            }
            return waker
        }
        if cancelledMeanwhile { return exchange.abandon() }
        if let failure { return exchange.finish(.failed(failure)) }
        if startNow {
            let thread = Thread { [self] in run() }
            thread.name = "lanpush-http-client"
            thread.start()
        }
        w?.wake()
    }

    /// The client's thread: the context, then its loop, for the life of the process.
    private func run() {
        let engine = HTTPClientEngine()
        let loop = LoopContext()
        var info = lws_context_creation_info()
        // Not DO_SSL_GLOBAL_INIT on the context (only on its vhost, which builds the client SSL_CTX from it): lws
        // 4.1 takes new process-wide OpenSSL ex-data indexes at every context that does, and a TLS handshake then
        // under way on the gateway's own context (its `wss://` link to Home Assistant) would find its connection
        // under the old index and fail. Nothing else changes with it: OpenSSL 3 initialises itself, and this
        // context lives as long as the process (lws frees a vhost's SSL_CTX only in a context that initialised).
        info.options = lanpush_opt_explicit_vhosts()
        info.count_threads = 1
        info.fd_limit_per_thread = 128
        info.port = -1  // CONTEXT_PORT_NO_LISTEN
        info.protocols = engine.protocolList
        guard let ctx = loop.create(&info, want: .poll, fdBudget: 128), engine.attach(ctx) else {
            let pending: [HTTPClientExchange] = lock.withLock {
                failedToStart = "the HTTP client could not start (lws)"
                defer { queue.removeAll() }
                return queue
            }
            for exchange in pending { exchange.finish(.failed("the HTTP client could not start (lws)")) }
            return
        }
        engine.onWake = { [unowned self] in drain(engine) }
        loop.thread.enter()
        loop.acceptWakes()
        lock.withLock { waker = loop.waker }
        drain(engine)
        while loop.runOnce() {}
    }

    /// On the client's thread: the requests and cancellations posted since the last wake.
    private func drain(_ engine: HTTPClientEngine) {
        let (todo, gone): ([HTTPClientExchange], [UInt64]) = lock.withLock {
            defer {
                queue.removeAll()
                cancelled.removeAll()
            }
            return (queue, cancelled)
        }
        for exchange in todo { engine.start(exchange) }
        for id in gone { engine.cancel(id) }
    }

    /// The address to connect to: the first IPv4 address of `host` if it has one (a home network's IPv6 is often
    /// half set up), else its first address; `nil` when the name does not resolve.
    static func resolve(_ host: String) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        var chosen: UnsafeMutablePointer<addrinfo>? = first
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let a = p {
            if a.pointee.ai_family == AF_INET {
                chosen = a
                break
            }
            p = a.pointee.ai_next
        }
        guard let a = chosen, let sa = a.pointee.ai_addr else { return nil }
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(sa, a.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return nil
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
