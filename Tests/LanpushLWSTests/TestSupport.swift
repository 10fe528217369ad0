import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LanpushLWS

/// A small thread-safe box for values the loop thread writes and the test thread reads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = PThreadLock()
    private var value: Value
    init(_ v: Value) { value = v }
    func get() -> Value { lock.withLock { value } }
    func set(_ v: Value) { lock.withLock { value = v } }
    func update<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}

/// Polls `condition` until it holds or `timeout` passes.
func waitUntil(_ timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// Test delegate: a few HTTP routes and a WebSocket echo.
final class TestDelegate: LWSServerDelegate, @unchecked Sendable {
    /// Set right after the server is created, before `run()`; read on the loop thread only.
    var server: LWSServer?

    let opened = Locked<[UInt64]>([])
    let closed = Locked<[UInt64]>([])
    let texts = Locked<[[UInt8]]>([])
    let wakes = Locked(0)
    let noDelay = Locked<[Bool]>([])
    let openedRequests = Locked<[HTTPRequest]>([])
    let lateResponseWasPending = Locked<Bool?>(nil)
    /// For each message received (in order): its connection's subprotocol and the loop turn it was read in.
    let textTurns = Locked<[(subprotocol: String, turn: Int)]>([])
    private var turn = 0
    /// The newest connection, handed out of the loop only for the confinement tests.
    let lastConnection = Locked<WSConnection?>(nil)

    // Loop-thread only.
    private var outbox: [UInt64: [[UInt8]]] = [:]
    /// `/turn` requests, answered when their loop turn ends (as the gateway answers once the turn is committed).
    private var answersAtTurnEnd: [(HTTPResponse, [UInt8])] = []
    private var conns: [UInt64: WSConnection] = [:]

    func handleHTTP(_ request: HTTPRequest, _ response: HTTPResponse) {
        switch request.path {
        case "/hello":
            response.respond(status: 200, json: #"{"hello":"world"}"#)
        case "/echo":
            response.respond(
                status: 200, body: request.body,
                contentType: request.header("content-type") ?? "application/octet-stream")
        case "/info":
            var o: [String: Any] = [
                "method": request.method.rawValue, "path": request.path, "query": request.query,
                "rawQuery": request.rawQuery, "remote": request.remoteAddress, "bodyLength": request.body.count,
            ]
            var h: [String: String] = [:]
            for name in ["authorization", "content-type", "content-length", "x-request-id", "host"] {
                if let v = request.header(name) { h[name] = v }
            }
            o["headers"] = h
            let data = try! JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])
            response.respond(status: 200, headers: [("X-Test", "yes")], body: Array(data))
        case "/turn":
            answersAtTurnEnd.append((response, request.body))
        case "/delay":
            let ms = Double(request.query["ms"] ?? "100") ?? 100
            server?.schedule(after: ms / 1000) {
                response.respond(status: 202, json: #"{"delayed":true}"#)
            }
        case "/late":
            // The client hangs up before this answer; respond must then be a harmless no-op.
            server?.schedule(after: 0.3) { [lateResponseWasPending] in
                lateResponseWasPending.set(response.isPending)
                response.respond(status: 200, json: "{}")
            }
        case "/timers":
            final class Order { var items: [Int] = [] }
            let order = Order()
            guard let server else { return }
            server.schedule(after: 0.05) { order.items.append(3) }
            server.schedule(after: 0.02) { order.items.append(1) }
            let cancelled = server.schedule(after: 0.03) { order.items.append(99) }
            server.schedule(after: 0.03) {
                order.items.append(2)
                server.schedule(after: 0) { order.items.append(21) }  // scheduled from a timer
            }
            cancelled.cancel()
            server.schedule(after: 0.08) {
                response.respond(status: 200, json: "\(order.items)")
            }
        case "/big":
            let n = Int(request.query["n"] ?? "300000") ?? 300000
            var body = [UInt8](repeating: UInt8(ascii: "a"), count: n)
            body[0] = UInt8(ascii: "<")
            body[n - 1] = UInt8(ascii: ">")
            response.respond(status: 200, body: body, contentType: "text/plain")
        default:
            response.respond(status: 404, json: #"{"message":"not found"}"#)
        }
    }

    func wsOpened(_ connection: WSConnection, _ request: HTTPRequest) {
        conns[connection.id] = connection
        lastConnection.set(connection)
        opened.update { $0.append(connection.id) }
        openedRequests.update { $0.append(request) }
        var flag: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(connection.socketFD, Int32(IPPROTO_TCP), TCP_NODELAY, &flag, &len)
        noDelay.update { $0.append(flag != 0) }
    }

    func wsText(_ connection: WSConnection, _ bytes: [UInt8]) {
        textTurns.update { $0.append((connection.subprotocol, turn)) }
        if bytes.starts(with: Array("ack".utf8)) { return }  // a flood the echo must not answer
        texts.update { $0.append(bytes) }
        if bytes == Array("close-me".utf8) {
            connection.close(code: 4002, reason: "ack timeout")
            return
        }
        if bytes.starts(with: Array("bench:".utf8)) {
            benchRemaining[connection.id] = Int(String(decoding: bytes.dropFirst(6), as: UTF8.self)) ?? 0
            connection.requestWritable()
            return
        }
        if bytes.starts(with: Array("pause:".utf8)) {
            // Input paused for the given seconds: what the peer sends meanwhile must wait, then arrive in order.
            let seconds = Double(String(decoding: bytes.dropFirst(6), as: UTF8.self)) ?? 0
            connection.pauseInput(true)
            server?.schedule(after: seconds) { connection.pauseInput(false) }
            return
        }
        if bytes.starts(with: Array("sizes:".utf8)) {
            // Frames of the given payload lengths, in one turn; byte i of each is i % 251 (a pattern a misplaced
            // header or a cut would break).
            for n in String(decoding: bytes.dropFirst(6), as: UTF8.self).split(separator: ",").compactMap({ Int($0) }) {
                outbox[connection.id, default: []].append((0..<n).map { UInt8($0 % 251) })
            }
        } else if bytes == Array("burst".utf8) {
            for i in 0..<200 { outbox[connection.id, default: []].append(Array("m\(i)".utf8)) }
        } else {
            outbox[connection.id, default: []].append(bytes)
        }
        connection.requestWritable()
    }

    private var benchRemaining: [UInt64: Int] = [:]
    private let benchFrame = Array(#"{"type":"update","seq":123456,"tag":"washer","delta":{"progress":1234}}"#.utf8)

    func wsWritable(_ connection: WSConnection) {
        if var n = benchRemaining[connection.id], n > 0 {
            repeat {
                if !connection.send(benchFrame) { break }
                n -= 1
            } while n > 0 && !connection.isChoked
            benchRemaining[connection.id] = n
            if n > 0 { connection.requestWritable() }
            return
        }
        guard var queue = outbox[connection.id], !queue.isEmpty else { return }
        repeat {
            let frame = queue.removeFirst()
            if !connection.send(frame) { break }
        } while !queue.isEmpty && !connection.isChoked
        outbox[connection.id] = queue
        if !queue.isEmpty { connection.requestWritable() }
    }

    let peerCloseCodes = Locked<[UInt16]>([])

    func wsClosed(_ connection: WSConnection) {
        if let code = connection.peerCloseCode { peerCloseCodes.update { $0.append(code) } }
        #expect(!connection.isOpen)
        #expect(!connection.send([1]))
        conns[connection.id] = nil
        outbox[connection.id] = nil
        closed.update { $0.append(connection.id) }
    }

    let pending = Locked<[@Sendable () -> Void]>([])

    func loopTurnEnded() {
        turn += 1
        let due = answersAtTurnEnd
        answersAtTurnEnd.removeAll()
        for (response, body) in due { response.respond(status: 200, body: body, contentType: "text/plain") }
    }

    func loopWoken() {
        wakes.update { $0 += 1 }
        let jobs = pending.update { jobs -> [@Sendable () -> Void] in
            defer { jobs.removeAll() }
            return jobs
        }
        for job in jobs { job() }
    }
}

/// A server running on a background thread.
final class RunningServer: @unchecked Sendable {
    let server: LWSServer
    let delegate: TestDelegate
    private let finished = DispatchSemaphore(value: 0)
    let runReturned = Locked(false)

    init(_ options: LWSServerOptions = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)) throws {
        delegate = TestDelegate()
        let delegate = self.delegate
        server = try OpenSSLGate.creating(options.initialisesOpenSSL) { try LWSServer(options: options, delegate: delegate) }
        delegate.server = server
        let server = self.server
        let done = finished
        let flag = runReturned
        let thread = Thread {
            server.run()
            flag.set(true)
            done.signal()
        }
        thread.start()
    }

    var port: Int { server.port }

    /// Runs `body` on the loop thread soon (through a wake).
    func onLoop(_ body: @escaping @Sendable () -> Void) {
        delegate.pending.update { $0.append(body) }
        server.wake()
    }

    /// Requests a stop and waits (bounded) for `run()` to return; the seconds it took, or nil on timeout.
    @discardableResult
    func stop(timeout: Double = 3) -> Double? {
        let t0 = Date()
        server.requestStop()
        guard finished.wait(timeout: .now() + timeout) == .success else { return nil }
        return Date().timeIntervalSince(t0)
    }
}

// MARK: - A blocking loopback TCP client

enum ClientError: Error { case connect, send, timeout, closed, protocolError(String) }

final class TCPClient: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// `source`: the local address to connect from (every 127.0.0.x is loopback, each a distinct peer).
    /// `receiveBuffer`: SO_RCVBUF before connecting (a small window keeps the server's writes in its own queue).
    init(port: Int, timeout: Double = 3, source: String? = nil, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError.connect }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw ClientError.connect }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close(fd) here: a class whose init throws once every property is set is deinitialized, and a
        // second close could hit a number another thread has just reused (lws then fails on that socket).
        guard rc == 0 else { throw ClientError.connect }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// TCP segments carrying data this socket has received (Linux's `tcpi_data_segs_in`, which glibc's `tcp_info`
    /// leaves out: read at its offset in the kernel's struct, which only ever grows at its end).
    var dataSegmentsIn: UInt32 {
        var info = [UInt8](repeating: 0, count: 256)
        var len = socklen_t(info.count)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &len) == 0, len >= 156 else { return 0 }
        return info[152..<156].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }

    func send(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ClientError.send }
            off += n
        }
    }

    func send(_ s: String) throws { try send(Array(s.utf8)) }

    private var offset = 0
    private var available: Int { buffer.count - offset }

    /// Makes at least `n` unread bytes available.
    private func fill(_ n: Int) throws {
        if offset > 65536 {
            buffer.removeFirst(offset)
            offset = 0
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while available < n {
            let r = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if r == 0 { throw ClientError.closed }
            if r < 0 { throw errno == EAGAIN || errno == EWOULDBLOCK ? ClientError.timeout : ClientError.closed }
            buffer.append(contentsOf: chunk[0..<r])
        }
    }

    func read(_ n: Int) throws -> [UInt8] {
        try fill(n)
        let out = Array(buffer[offset..<(offset + n)])
        offset += n
        return out
    }

    func readUntil(_ marker: [UInt8]) throws -> [UInt8] {
        while true {
            if let r = find(marker) {
                let out = Array(buffer[offset..<r])
                offset = r + marker.count
                return out
            }
            try fill(available + 1)
        }
    }

    private func find(_ m: [UInt8]) -> Int? {
        guard available >= m.count else { return nil }
        var i = offset
        while i <= buffer.count - m.count {
            if buffer[i] == m[0] && buffer[i..<(i + m.count)].elementsEqual(m) { return i }
            i += 1
        }
        return nil
    }

    /// `true` when the peer closed the connection (EOF) within the receive timeout.
    func readsEOF() -> Bool {
        do {
            while true { try fill(available + 1) }
        } catch ClientError.closed {
            return true
        } catch {
            return false
        }
    }
}

struct HTTPReply {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
}

extension TCPClient {
    func readResponse(head: Bool = false) throws -> HTTPReply {
        let headBytes = try readUntil(Array("\r\n\r\n".utf8))
        let lines = String(decoding: headBytes, as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw ClientError.protocolError(lines[0]) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let c = line.firstIndex(of: ":") else { continue }
            headers[line[..<c].lowercased()] = line[line.index(after: c)...].trimmingCharacters(in: .whitespaces)
        }
        if status == 100 { return try readResponse(head: head) }
        let length = head ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        return HTTPReply(status: status, headers: headers, body: try read(length))
    }

    func request(_ method: String, _ path: String, headers: [String] = [], body: [UInt8]? = nil) throws -> HTTPReply {
        var req = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for h in headers { req += h + "\r\n" }
        if let body { req += "Content-Length: \(body.count)\r\n" }
        req += "\r\n"
        try send(Array(req.utf8) + (body ?? []))
        return try readResponse(head: method == "HEAD")
    }
}

// MARK: - A minimal WebSocket client (RFC 6455 framing, client masking)

struct WSFrame {
    var fin: Bool
    var opcode: UInt8
    var payload: [UInt8]
    var closeCode: UInt16? {
        opcode == 8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
    }
    var closeReason: String { opcode == 8 ? String(decoding: payload.dropFirst(2), as: UTF8.self) : "" }
}

final class WSClient: @unchecked Sendable {
    let tcp: TCPClient
    let handshake: HTTPReply

    init(port: Int, path: String = "/v1/stream", protocolHeader: Bool = true, extraHeaders: [String] = [],
         timeout: Double = 3, source: String? = nil, receiveBuffer: Int32? = nil) throws {
        tcp = try TCPClient(port: port, timeout: timeout, source: source, receiveBuffer: receiveBuffer)
        var req = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        req += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if protocolHeader { req += "Sec-WebSocket-Protocol: lanpush.v1\r\n" }
        for h in extraHeaders { req += h + "\r\n" }
        req += "\r\n"
        try tcp.send(req)
        handshake = try tcp.readResponse()
    }

    func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) throws {
        try tcp.send(Self.frame(opcode: opcode, payload, fin: fin))
    }

    /// A client frame (masked), to send alone or several in one write.
    static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        var f: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let n = payload.count
        if n < 126 {
            f.append(0x80 | UInt8(n))
        } else if n < 65536 {
            f.append(0x80 | 126)
            f += [UInt8(n >> 8), UInt8(n & 0xFF)]
        } else {
            f.append(0x80 | 127)
            for i in (0..<8).reversed() { f.append(UInt8((n >> (8 * i)) & 0xFF)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        f += mask
        for (i, b) in payload.enumerated() { f.append(b ^ mask[i & 3]) }
        return f
    }

    func sendText(_ s: String) throws { try sendFrame(opcode: 1, Array(s.utf8)) }

    func readFrame() throws -> WSFrame {
        let h = try tcp.read(2)
        var n = Int(h[1] & 0x7F)
        if n == 126 {
            let e = try tcp.read(2)
            n = Int(e[0]) << 8 | Int(e[1])
        } else if n == 127 {
            let e = try tcp.read(8)
            n = e.reduce(0) { $0 << 8 | Int($1) }
        }
        precondition(h[1] & 0x80 == 0, "server frames are never masked")
        return WSFrame(fin: h[0] & 0x80 != 0, opcode: h[0] & 0x0F, payload: try tcp.read(n))
    }

    /// Next data or close frame; answers pings when `answerPings`, otherwise ignores them.
    func readMessage(answerPings: Bool = true) throws -> WSFrame {
        while true {
            let f = try readFrame()
            if f.opcode == 9 {
                if answerPings { try sendFrame(opcode: 10, f.payload) }
                continue
            }
            if f.opcode == 10 { continue }
            return f
        }
    }
}
