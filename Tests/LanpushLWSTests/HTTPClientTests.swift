import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LanpushLWS

/// The outgoing HTTP client (``HTTPClientLoop``) against the in-process server and against raw sockets that answer
/// the way some servers do (no length, chunked, too long, never).
@Suite("HTTP client", .timeLimit(.minutes(1)))
struct HTTPClientTests {
    /// Sends `request` and waits for its outcome (`nil`: none within `timeout`).
    func exchange(_ request: HTTPClientLoop.Request, timeout: Double = 10) -> HTTPClientLoop.Outcome? {
        let outcome = Locked<[HTTPClientLoop.Outcome]>([])
        HTTPClientLoop.shared.send(request) { o in outcome.update { $0.append(o) } }
        _ = waitUntil(timeout) { !outcome.get().isEmpty }
        // Exactly once: a second completion would show up here.
        usleep(50_000)
        let all = outcome.get()
        #expect(all.count <= 1, "completion ran \(all.count) times")
        return all.first
    }

    func json(_ outcome: HTTPClientLoop.Outcome?) -> [String: Any]? {
        guard case .answer(_, let body)? = outcome else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    @Test func postSendsItsHeadersAndBodyAndReadsTheAnswer() throws {
        var options = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        options.extraHeaderNames = ["x-request-id"]
        let s = try RunningServer(options)
        defer { s.stop() }
        let body = Array(#"{"push_token":"tok","data":{"tag":"washer"}}"#.utf8)
        let outcome = exchange(HTTPClientLoop.Request(
            method: "POST", url: "http://127.0.0.1:\(s.port)/info?x=1",
            headers: [("Authorization", "Bearer abc"), ("Content-Type", "application/json"), ("X-Request-Id", "r-7")],
            body: body))
        guard case .answer(let status, _)? = outcome else { Issue.record("no answer: \(String(describing: outcome))"); return }
        #expect(status == 200)
        let info = json(outcome)
        #expect(info?["method"] as? String == "POST")
        #expect(info?["path"] as? String == "/info")
        #expect(info?["rawQuery"] as? String == "x=1")
        #expect(info?["bodyLength"] as? Int == body.count)
        let headers = info?["headers"] as? [String: String]
        #expect(headers?["authorization"] == "Bearer abc")
        #expect(headers?["content-type"] == "application/json")
        #expect(headers?["content-length"] == String(body.count))
        #expect(headers?["x-request-id"] == "r-7")
        #expect(headers?["host"] == "127.0.0.1:\(s.port)")
    }

    @Test func theBodyArrivesWhole() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let body = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let outcome = exchange(HTTPClientLoop.Request(method: "POST", url: "http://127.0.0.1:\(s.port)/echo", body: body))
        #expect(outcome == .answer(status: 200, body: body))
    }

    @Test func anErrorStatusIsAnAnswerWithItsBody() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let outcome = exchange(HTTPClientLoop.Request(method: "GET", url: "http://127.0.0.1:\(s.port)/nowhere"))
        #expect(outcome == .answer(status: 404, body: Array(#"{"message":"not found"}"#.utf8)))
    }

    @Test func aRefusedConnectionFails() throws {
        let port = try closedPort()
        let outcome = exchange(HTTPClientLoop.Request(method: "GET", url: "http://127.0.0.1:\(port)/"))
        #expect(outcome == .failed("could not connect"))
    }

    @Test func aURLThatIsNotHTTPIsRefused() {
        #expect(exchange(HTTPClientLoop.Request(method: "GET", url: "ftp://127.0.0.1/")) == .invalidURL("ftp://127.0.0.1/"))
        #expect(exchange(HTTPClientLoop.Request(method: "GET", url: "nonsense")) == .invalidURL("nonsense"))
    }

    @Test func aCancelledRequestNeverCompletes() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let outcome = Locked<[HTTPClientLoop.Outcome]>([])
        let ticket = HTTPClientLoop.shared.send(HTTPClientLoop.Request(method: "GET", url: "http://127.0.0.1:\(s.port)/delay?ms=400")) {
            o in outcome.update { $0.append(o) }
        }
        usleep(100_000)
        HTTPClientLoop.shared.cancel(ticket)
        usleep(800_000)
        #expect(outcome.get().isEmpty)
        // The client goes on serving.
        #expect(exchange(HTTPClientLoop.Request(method: "GET", url: "http://127.0.0.1:\(s.port)/hello")) != nil)
    }

    @Test func aRequestCancelledAtOnceNeverCompletes() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let outcome = Locked<[HTTPClientLoop.Outcome]>([])
        for _ in 0..<20 {
            // Cancelled while its host name is still being resolved, or just after it reached the client's thread.
            // The answer comes 300 ms late: "at once" must not depend on this thread being scheduled before the
            // client's (an immediate answer beat the cancel when a busy machine preempted the test between the two).
            let url = "http://localhost:\(s.port)/delay?ms=300"
            let ticket = HTTPClientLoop.shared.send(HTTPClientLoop.Request(method: "GET", url: url)) {
                o in outcome.update { $0.append(o) }
            }
            HTTPClientLoop.shared.cancel(ticket)
        }
        usleep(900_000)
        #expect(outcome.get().isEmpty)
    }

    @Test func answersFramedEveryWayArriveWhole() throws {
        let closeDelimited = try RawServer(answer: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nuntil the end")
        #expect(exchange(HTTPClientLoop.Request(method: "GET", url: "http://127.0.0.1:\(closeDelimited.port)/"))
            == .answer(status: 200, body: Array("until the end".utf8)))
        let chunked = try RawServer(
            answer: "HTTP/1.1 429 Too Many Requests\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\n\r\n")
        #expect(exchange(HTTPClientLoop.Request(method: "POST", url: "http://127.0.0.1:\(chunked.port)/", body: Array("{}".utf8)))
            == .answer(status: 429, body: Array(#"{"a": 1}"#.utf8)))
    }

    @Test func anAnswerCutShortIsAFailureNotAnAnswer() throws {
        let cut = try RawServer(answer: "HTTP/1.1 201 Created\r\nContent-Length: 100\r\n\r\n{\"messageId\":")
        guard case .failed? = exchange(HTTPClientLoop.Request(method: "GET", url: "http://127.0.0.1:\(cut.port)/")) else {
            Issue.record("a body shorter than its Content-Length was taken as the answer")
            return
        }
    }

    @Test func anAnswerLargerThanTheLimitFails() throws {
        let huge = String(repeating: "x", count: HTTPClientLoop.maxAnswerBytes + 10)
        let big = try RawServer(answer: "HTTP/1.1 200 OK\r\nContent-Length: \(huge.utf8.count)\r\n\r\n" + huge)
        let outcome = exchange(HTTPClientLoop.Request(method: "GET", url: "http://127.0.0.1:\(big.port)/"))
        #expect(outcome == .failed("answer larger than \(HTTPClientLoop.maxAnswerBytes) bytes"))
    }

    @Test func aHeaderWithALineBreakIsRefused() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let outcome = exchange(HTTPClientLoop.Request(
            method: "GET", url: "http://127.0.0.1:\(s.port)/hello", headers: [("X-Evil", "a\r\nInjected: yes")]))
        #expect(outcome == .failed("bad header 'X-Evil'"))
    }

    /// A port nothing listens on (bound, then closed).
    func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard bound else { throw ClientError.connect }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}

/// One connection's worth of a server that reads the request head (and a short body), writes `answer` as given
/// and closes: the answers an lws server would never write.
final class RawServer: @unchecked Sendable {
    let port: Int
    private let fd: Int32

    init(answer: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        guard ok else {
            close(fd)
            throw ClientError.connect
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
        let listener = fd
        let bytes = Array(answer.utf8)
        Thread.detachNewThread {
            let conn = accept(listener, nil, nil)
            guard conn >= 0 else { return }
            var head: [UInt8] = []
            var buf = [UInt8](repeating: 0, count: 4096)
            while !head.ends(with: Array("\r\n\r\n".utf8)) {
                let n = recv(conn, &buf, 1, 0)
                if n <= 0 { break }
                head.append(buf[0])
            }
            // A short body, if any, is in the socket already; read what is there without waiting.
            _ = recv(conn, &buf, buf.count, Int32(MSG_DONTWAIT))
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { send(conn, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                sent += n
            }
            close(conn)
        }
    }

    deinit { close(fd) }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
