import Histogram

#if canImport(Glibc)
import Glibc
#endif

/// glibc's ppoll (poll with a nanosecond timeout): Glibc's Swift module does not export it (it needs _GNU_SOURCE).
@_silgen_name("ppoll")
func ppollNanos(_ fds: UnsafeMutablePointer<pollfd>, _ n: nfds_t, _ timeout: UnsafePointer<timespec>?, _ sigmask: UnsafeRawPointer?) -> Int32

/// A minimal HTTP/1.1 client over plain sockets (keep-alive, Content-Length bodies, TCP_NODELAY).
struct HTTPConnection {
    let fd: Int32
    let port: Int
    private var input: [UInt8] = []

    init(port: Int) throws {
        self.port = port
        fd = try Sys.connectLoopback(port: port)
    }

    func close() { _ = Glibc.close(fd) }

    /// One request, blocking; returns status and body.
    mutating func request(_ bytes: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        try bytes.withUnsafeBytes { try Sys.writeAll(fd, $0) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let r = HTTPResponseParser.parse(input) {
                let body = Array(input[r.bodyStart..<(r.bodyStart + r.contentLength)])
                input.removeFirst(r.bodyStart + r.contentLength)
                return (r.status, body)
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw BenchError("HTTP connection closed (\(n))") }
            input.append(contentsOf: chunk[0..<n])
        }
    }
}

enum HTTPClient {
    static func get(port: Int, path: String, token: String? = nil) throws -> Int {
        var c = try HTTPConnection(port: port)
        defer { c.close() }
        var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        head += "\r\n"
        return try c.request(Array(head.utf8)).status
    }
}

/// Builds POST requests without Foundation on the hot path: a fixed head, the Content-Length, the body.
struct RequestBuilder {
    let head: [UInt8]

    init(path: String, token: String?) {
        var h = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        if let token { h += "Authorization: Bearer \(token)\r\n" }
        h += "Content-Length: "
        head = Array(h.utf8)
    }

    func request(body: [UInt8], into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: head)
        appendDecimal(UInt64(body.count), to: &out)
        out.append(contentsOf: [13, 10, 13, 10])
        out.append(contentsOf: body)
    }
}

@inline(__always)
func appendDecimal(_ v: UInt64, to out: inout [UInt8]) {
    if v == 0 {
        out.append(48)
        return
    }
    var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var n = 0
    var x = v
    withUnsafeMutableBytes(of: &digits) { d in
        while x > 0 {
            d[n] = UInt8(48 + x % 10)
            x /= 10
            n += 1
        }
        while n > 0 {
            n -= 1
            out.append(d[n])
        }
    }
}

enum HTTPResponseParser {
    struct Head {
        var status: Int
        var bodyStart: Int
        var contentLength: Int
        var close: Bool
    }

    /// A complete response at the start of `b` (head + whole body), or nil.
    static func parse(_ b: [UInt8]) -> Head? {
        b.withUnsafeBytes { parse($0) }
    }

    static func parse(_ b: UnsafeRawBufferPointer) -> Head? {
        guard let end = b.offset(after: "\r\n\r\n") else { return nil }
        guard end >= 12 else { return nil }
        let status = Int(b[9] - 48) * 100 + Int(b[10] - 48) * 10 + Int(b[11] - 48)
        var length = 0
        var close = false
        // Header lines, case-insensitive names.
        var i = 0
        while i < end {
            var j = i
            while j < end && b[j] != 10 { j += 1 }
            let line = UnsafeRawBufferPointer(rebasing: b[i..<j])
            if line.count > 15, lowerEquals(line, "content-length:") {
                var k = 15
                while k < line.count && line[k] == 32 { k += 1 }
                length = Int(line.decimal(at: k) ?? 0)
            } else if line.count > 11, lowerEquals(line, "connection:") {
                close = line.offset(after: "close") != nil
            }
            i = j + 1
        }
        guard b.count >= end + length else { return nil }
        return Head(status: status, bodyStart: end, contentLength: length, close: close)
    }

    private static func lowerEquals(_ line: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        let p = name.utf8Start
        for k in 0..<name.utf8CodeUnitCount {
            var c = line[k]
            if c >= 65 && c <= 90 { c += 32 }
            if c != p[k] { return false }
        }
        return true
    }
}

/// What one publisher run did.
struct PublishResult {
    var sent = 0
    var answered = 0
    var statusCounts: [Int: Int] = [:]
    /// Request → complete answer, ns (HTTP only: the ingest latency).
    var answerLatency = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    /// Requests due but not sent on time because every connection was busy (rate mode).
    var lateStarts = 0
    var startNanos: UInt64 = 0
    var endNanos: UInt64 = 0
    /// Requests sent and answered inside the measurement window.
    var sentInWindow = 0
    var answeredInWindow = 0

    var seconds: Double { Double(endNanos - startNanos) / 1e9 }
}

enum PublishMode {
    /// A fixed rate (updates per second).
    case rate(Double)
    /// As fast as the server answers.
    case max
}

/// Makes the body of update number `n`, embedding the send time `stamp`.
typealias BodyMaker = (_ n: Int, _ stamp: UInt64, _ out: inout [UInt8]) -> Void

/// HTTP keep-alive load over `connections` sockets from one thread with poll(): each connection has at most one
/// request in flight (lws 4.1 does not serve pipelined POSTs).
final class HTTPLoad {
    struct Conn {
        var fd: Int32
        var busy = false
        var sentAt: UInt64 = 0
        var input: [UInt8] = []
    }

    let port: Int
    let builder: RequestBuilder
    var conns: [Conn] = []

    init(port: Int, path: String, token: String?, connections: Int) throws {
        self.port = port
        builder = RequestBuilder(path: path, token: token)
        for _ in 0..<max(1, connections) { conns.append(Conn(fd: try Sys.connectLoopback(port: port, nonBlocking: true))) }
    }

    func close() {
        for c in conns { _ = Glibc.close(c.fd) }
        conns.removeAll()
    }

    /// Runs for `duration` seconds from `start` (ns); counts into the window [windowStart, windowEnd).
    /// `limit`: stop after that many updates (nil: until the duration ends).
    func run(mode: PublishMode, start: UInt64, duration: Double, window: (UInt64, UInt64), limit: Int? = nil,
             firstIndex: Int = 0, body: BodyMaker) -> PublishResult {
        var pace = Pacing(mode: mode, start: start, duration: duration, window: window, limit: limit, firstIndex: firstIndex)
        var result = pace.newResult()
        var n = firstIndex
        var req: [UInt8] = []
        var bodyBuf: [UInt8] = []
        req.reserveCapacity(1024)
        bodyBuf.reserveCapacity(1024)
        var fds = conns.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var readBuf = [UInt8](repeating: 0, count: 65536)
        var inFlight = 0
        var idle = Array((0..<conns.count).reversed())
        sleepUntil(start)

        func send(_ i: Int, now: UInt64) {
            bodyBuf.removeAll(keepingCapacity: true)
            body(n, now, &bodyBuf)
            builder.request(body: bodyBuf, into: &req)
            let ok = req.withUnsafeBytes { raw -> Bool in
                var off = 0
                while off < raw.count {
                    let w = Glibc.send(conns[i].fd, raw.baseAddress! + off, raw.count - off, Int32(MSG_NOSIGNAL))
                    if w > 0 { off += w; continue }
                    if w < 0 && (errno == EAGAIN || errno == EINTR) {
                        var p = pollfd(fd: conns[i].fd, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&p, 1, 100)
                        continue
                    }
                    return false
                }
                return true
            }
            guard ok else { return }
            conns[i].busy = true
            conns[i].sentAt = now
            inFlight += 1
            pace.count(sentAt: now, into: &result)
            n += 1
        }

        var stopSending = false
        while true {
            var now = nowNanos()
            if pace.isOver(now: now, n: n) { stopSending = true }
            if stopSending && inFlight == 0 { break }
            if !stopSending {
                switch mode {
                case .max:
                    while let i = idle.popLast() {
                        send(i, now: now)
                        if pace.limitReached(n) { break }
                    }
                case .rate:
                    while pace.nextDue <= now, let i = idle.popLast() {
                        if now - pace.nextDue > 2_000_000 { result.lateStarts += 1 }
                        send(i, now: now)
                        pace.nextDue += pace.interval
                        now = nowNanos()
                        if pace.limitReached(n) { break }
                    }
                }
            }
            // Wait for answers (or the next due time).
            var timeout = timespec(tv_sec: 0, tv_nsec: 100_000_000)
            if case .rate = mode, !stopSending, !idle.isEmpty {
                let wait = pace.nextDue > now ? pace.nextDue - now : 0
                timeout = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
            }
            if stopSending {
                // Drain: give the last answers up to 10 s.
                if nowNanos() > pace.end + 10_000_000_000 { break }
            }
            let rc = ppollNanos(&fds, nfds_t(fds.count), &timeout, nil)
            if rc <= 0 { continue }
            for i in fds.indices where fds[i].revents != 0 {
                fds[i].revents = 0
                let got = readBuf.withUnsafeMutableBytes { recv(conns[i].fd, $0.baseAddress, $0.count, 0) }
                if got <= 0 {
                    if got < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                    // The server closed: reconnect (an answer in flight is lost).
                    reconnect(i, &fds, &inFlight, &idle)
                    continue
                }
                conns[i].input.append(contentsOf: readBuf[0..<got])
                while let head = HTTPResponseParser.parse(conns[i].input) {
                    let t = nowNanos()
                    conns[i].input.removeFirst(head.bodyStart + head.contentLength)
                    if conns[i].busy {
                        conns[i].busy = false
                        inFlight -= 1
                        result.answered += 1
                        result.statusCounts[head.status, default: 0] += 1
                        _ = result.answerLatency.record(t - conns[i].sentAt)
                        if pace.inWindow(conns[i].sentAt) { result.answeredInWindow += 1 }
                    }
                    if head.close {
                        reconnect(i, &fds, &inFlight, &idle)
                        break
                    }
                    idle.append(i)
                }
            }
        }
        result.endNanos = min(nowNanos(), pace.end)
        return result
    }

    private func reconnect(_ i: Int, _ fds: inout [pollfd], _ inFlight: inout Int, _ idle: inout [Int]) {
        _ = Glibc.close(conns[i].fd)
        if conns[i].busy { inFlight -= 1 }
        conns[i] = Conn(fd: (try? Sys.connectLoopback(port: port, nonBlocking: true)) ?? -1)
        fds[i].fd = conns[i].fd
        if conns[i].fd >= 0 { idle.append(i) }
    }
}

/// The MQTT publisher: one plain TCP connection, QoS 0, retained, a topic per (device, tag).
final class MQTTPublisher {
    let fd: Int32

    init(port: Int) throws {
        fd = try Sys.connectLoopback(port: port)
        let connect = MQTT.connect(clientId: "bench-pub-\(Sys.token(6))", keepAlive: 0)
        try connect.withUnsafeBytes { try Sys.writeAll(fd, $0) }
        var ack = [UInt8](repeating: 0, count: 4)
        var got = 0
        while got < 4 {
            let n = ack.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, 4 - got, 0) }
            guard n > 0 else { throw BenchError("mosquitto closed the publisher connection") }
            got += n
        }
        guard ack[0] == 0x20, ack[3] == 0 else { throw BenchError("CONNACK refused: \(ack)") }
    }

    func close() { _ = Glibc.close(fd) }

    /// Reads and drops what mosquitto sent (QoS 1 PUBACKs), without blocking.
    private func dropInput() {
        var chunk = [UInt8](repeating: 0, count: 16384)
        while chunk.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
    }

    /// Publishes update `n` (topic and payload from `make`) at a fixed rate or as fast as the socket takes,
    /// in batches of `batch` packets per write in max mode.
    /// `qos` 1: not retained, each PUBLISH with a packet id; mosquitto's PUBACKs are read and dropped.
    func run(mode: PublishMode, start: UInt64, duration: Double, window: (UInt64, UInt64), limit: Int? = nil,
             firstIndex: Int = 0, batch: Int = 32, qos: UInt8 = 0,
             make: (_ n: Int, _ stamp: UInt64, _ topic: inout [UInt8], _ payload: inout [UInt8]) -> Void) -> PublishResult {
        var result = PublishResult()
        result.startNanos = start
        let end = start + UInt64(duration * 1e9)
        var topic: [UInt8] = []
        var payload: [UInt8] = []
        var out: [UInt8] = []
        out.reserveCapacity(batch * 256)
        var n = firstIndex
        sleepUntil(start)
        func add(_ now: UInt64) {
            topic.removeAll(keepingCapacity: true)
            payload.removeAll(keepingCapacity: true)
            make(n, now, &topic, &payload)
            let id = UInt16(truncatingIfNeeded: n % 65535 + 1)
            payload.withUnsafeBytes { MQTT.publish(topic: topic, payload: $0, retain: qos == 0, qos: qos, packetId: id, into: &out) }
            n += 1
            result.sent += 1
            if now >= window.0 && now < window.1 { result.sentInWindow += 1 }
        }
        switch mode {
        case .max:
            while true {
                let now = nowNanos()
                if now >= end { break }
                if let limit, n - firstIndex >= limit { break }
                out.removeAll(keepingCapacity: true)
                for _ in 0..<batch {
                    add(now)
                    if let limit, n - firstIndex >= limit { break }
                }
                do { try out.withUnsafeBytes { try Sys.writeAll(fd, $0) } } catch { break }
            }
        case .rate(let r):
            let interval = UInt64(1e9 / r)
            var due = start
            while true {
                sleepUntil(due)
                let now = nowNanos()
                if now >= end { break }
                if let limit, n - firstIndex >= limit { break }
                out.removeAll(keepingCapacity: true)
                // Catch up (several due) in one write.
                while due <= now {
                    add(now)
                    due += interval
                }
                do { try out.withUnsafeBytes { try Sys.writeAll(fd, $0) } } catch { break }
                if qos > 0 { dropInput() }
            }
        }
        result.answered = result.sent
        result.answeredInWindow = result.sentInWindow
        result.endNanos = nowNanos()  // a blocked write may end after `end`: rates use the real span
        return result
    }
}
