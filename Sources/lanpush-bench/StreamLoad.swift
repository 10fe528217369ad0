import Histogram
import LanpushCore

#if canImport(Glibc)
import Glibc
#endif

/// The publisher stream (docs/PROTOCOL.md, "Publishers") from one plain socket: a WebSocket handshake, `auth` as a
/// publisher, then `push` frames pipelined up to the gateway's window, counted as the gateway's cumulative
/// `accepted` frames come back. Masked frames with an all-zero key (legal; the payload goes out as it is).
final class StreamPublisher {
    let fd: Int32
    /// Unaccepted items the gateway allows (its `auth_ok`).
    private(set) var window = 1024
    private var input: [UInt8] = []

    init(port: Int, token: String) throws {
        fd = try Sys.connectLoopback(port: port)
        let handshake = "GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: \(PublisherStream.subprotocol), \(ProtocolVersion.v1.rawValue)\r\n\r\n"
        try Array(handshake.utf8).withUnsafeBytes { try Sys.writeAll(fd, $0) }
        while input.withUnsafeBytes({ $0.offset(after: "\r\n\r\n") }) == nil { try fill() }
        let end = input.withUnsafeBytes { $0.offset(after: "\r\n\r\n") }!
        guard input.starts(with: Array("HTTP/1.1 101".utf8)) else {
            throw BenchError("stream handshake refused: \(String(decoding: input.prefix(end), as: UTF8.self))")
        }
        input.removeFirst(end)
        _ = try nextText()  // auth_required
        var auth: [UInt8] = []
        Self.frame(Array("{\"role\":\"publisher\",\"token\":\"\(token)\",\"type\":\"auth\"}".utf8), into: &auth)
        try auth.withUnsafeBytes { try Sys.writeAll(fd, $0) }
        let ok = try nextText()
        guard ok.withUnsafeBytes({ $0.offset(after: "\"auth_ok\"") }) != nil else {
            throw BenchError("publisher auth refused: \(String(decoding: ok, as: UTF8.self))")
        }
        if let w = ok.withUnsafeBytes({ raw in raw.offset(after: "\"window\":").flatMap { raw.decimal(at: $0) } }) {
            window = Int(w)
        }
        var flags = fcntl(fd, F_GETFL)
        flags |= O_NONBLOCK
        _ = fcntl(fd, F_SETFL, flags)
    }

    func close() { _ = Glibc.close(fd) }

    /// One client frame (text, FIN, mask key 0) around `payload`.
    static func frame(_ payload: [UInt8], into out: inout [UInt8]) {
        out.append(0x81)
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            out.append(0x80 | 126)
            out.append(UInt8(payload.count >> 8))
            out.append(UInt8(payload.count & 0xFF))
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        out.append(contentsOf: [0, 0, 0, 0])
        out.append(contentsOf: payload)
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
        guard n > 0 else { throw BenchError("stream closed by the gateway") }
        input.append(contentsOf: chunk[0..<n])
    }

    /// The next complete server frame's payload from `input`, if one is there (control frames skipped).
    private func takeFrame() -> [UInt8]? {
        while input.count >= 2 {
            let opcode = input[0] & 0x0F
            var len = Int(input[1] & 0x7F)
            var at = 2
            if len == 126 {
                guard input.count >= 4 else { return nil }
                len = Int(input[2]) << 8 | Int(input[3])
                at = 4
            } else if len == 127 {
                guard input.count >= 10 else { return nil }
                len = (2..<10).reduce(0) { $0 << 8 | Int(input[$1]) }
                at = 10
            }
            guard input.count >= at + len else { return nil }
            let payload = Array(input[at..<(at + len)])
            input.removeFirst(at + len)
            if opcode == 1 { return payload }
            if opcode == 8 { return Array("{\"type\":\"closed\"}".utf8) }
            // PING (9): answer with the same payload, as every client must.
            if opcode == 9 {
                var pong: [UInt8] = [0x8A, 0x80 | UInt8(payload.count), 0, 0, 0, 0]
                pong.append(contentsOf: payload)
                _ = pong.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
        return nil
    }

    private func nextText() throws -> [UInt8] {
        while true {
            if let f = takeFrame() { return f }
            try fill()
        }
    }

    /// Pushes update `n` (`body` writes the `POST /v1/push` body) for `duration` seconds from `start`, at a rate or as
    /// fast as the window allows. `answered` counts accepted items; `answerLatency` is send → the accept that covered
    /// it.
    func run(mode: PublishMode, start: UInt64, duration: Double, window measured: (UInt64, UInt64), limit: Int? = nil,
             firstIndex: Int = 0, body: BodyMaker) -> PublishResult {
        var pace = Pacing(mode: mode, start: start, duration: duration, window: measured, limit: limit, firstIndex: firstIndex)
        var result = pace.newResult()
        var n = firstIndex
        var sent: UInt64 = 0
        var through: UInt64 = 0
        let ring = max(1, window) * 2
        var sentAt = [UInt64](repeating: 0, count: ring)
        var out: [UInt8] = []
        out.reserveCapacity(64 * 1024)
        var pending = 0  // bytes of `out` not yet written
        var bodyBuf: [UInt8] = []
        var payload: [UInt8] = []
        sleepUntil(start)

        func add(_ now: UInt64) {
            bodyBuf.removeAll(keepingCapacity: true)
            body(n, now, &bodyBuf)
            payload.removeAll(keepingCapacity: true)
            payload.append(contentsOf: #"{"type":"push","#.utf8)
            payload.append(contentsOf: bodyBuf.dropFirst())
            Self.frame(payload, into: &out)
            sent += 1
            sentAt[Int(sent % UInt64(ring))] = now
            n += 1
            pace.count(sentAt: now, into: &result)
        }

        var stopSending = false
        while true {
            var now = nowNanos()
            if pace.isOver(now: now, n: n) { stopSending = true }
            if stopSending && through == sent { break }
            if stopSending && now > pace.end + 10_000_000_000 { break }
            if !stopSending && pending == 0 {
                out.removeAll(keepingCapacity: true)
                switch mode {
                case .max:
                    while sent - through < UInt64(window) && out.count < 32 * 1024 {
                        add(now)
                        if pace.limitReached(n) { break }
                    }
                case .rate:
                    while pace.nextDue <= now && sent - through < UInt64(window) {
                        if now - pace.nextDue > 2_000_000 { result.lateStarts += 1 }
                        add(now)
                        pace.nextDue += pace.interval
                        now = nowNanos()
                        if pace.limitReached(n) { break }
                    }
                }
                pending = out.count
            }
            if pending > 0 {
                let w = out.withUnsafeBytes { send(fd, $0.baseAddress! + (out.count - pending), pending, Int32(MSG_NOSIGNAL)) }
                if w > 0 { pending -= w } else if w < 0 && errno != EAGAIN && errno != EINTR { break }
            }
            var p = pollfd(fd: fd, events: Int16(POLLIN) | (pending > 0 ? Int16(POLLOUT) : 0), revents: 0)
            var timeout = timespec(tv_sec: 0, tv_nsec: 100_000_000)
            if case .rate = mode, !stopSending, pending == 0 {
                let wait = pace.nextDue > now ? pace.nextDue - now : 0
                timeout = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
            }
            if case .max = mode, !stopSending, pending == 0, sent - through < UInt64(window) {
                timeout = timespec(tv_sec: 0, tv_nsec: 0)
            }
            guard ppollNanos(&p, 1, &timeout, nil) > 0, p.revents & Int16(POLLIN) != 0 else { continue }
            do { try fill() } catch { break }
            let t = nowNanos()
            while let f = takeFrame() {
                f.withUnsafeBytes { b in
                    if b.offset(after: "\"accepted\"") != nil, let at = b.offset(after: "\"through\":"), let v = b.decimal(at: at) {
                        while through < v {
                            through += 1
                            let s = sentAt[Int(through % UInt64(ring))]
                            _ = result.answerLatency.record(t >= s ? t - s : 0)
                            result.answered += 1
                            if pace.inWindow(s) { result.answeredInWindow += 1 }
                        }
                    } else if b.offset(after: "\"rejected\"") != nil {
                        result.statusCounts[400, default: 0] += 1
                    } else if b.offset(after: "\"closed\"") != nil || b.offset(after: "\"error\"") != nil {
                        result.statusCounts[500, default: 0] += 1
                        stopSending = true
                        through = sent
                    }
                }
            }
        }
        result.statusCounts[202, default: 0] += result.answered
        result.endNanos = min(nowNanos(), pace.end)
        return result
    }
}
