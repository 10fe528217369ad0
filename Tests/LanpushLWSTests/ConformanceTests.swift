import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LanpushLWS

/// RFC 6455 / RFC 9112 edges: what the adapter answers, and what lws 4.1.6 does where the adapter has no hook
/// (pinned, so a change of libwebsockets is noticed; docs/PROTOCOL.md, "HTTP limits of libwebsockets 4.1.6").
@Suite("LWSServer conformance", .timeLimit(.minutes(2)))
struct ConformanceTests {
    private func upgrade(version: String?) -> String {
        var req = "GET /v1/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        req += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        if let version { req += "Sec-WebSocket-Version: \(version)\r\n" }
        return req + "\r\n"
    }

    @Test(arguments: ["8", "12", "14", "", "abc"])
    func otherWebSocketVersionsGet426(_ version: String) throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try TCPClient(port: s.port)
        try c.send(upgrade(version: version))
        let r = try c.readResponse()
        #expect(r.status == 426)
        #expect(r.headers["sec-websocket-version"] == "13")
        #expect(r.headers["content-type"] == "application/json")
        #expect(r.json["rule"] as? String == "websocket_version")
        #expect(r.json["field"] as? String == "sec-websocket-version")
        #expect(r.json["message"] is String)
        #expect(s.delegate.opened.get().isEmpty)
    }

    /// lws asks about the upgrade before it has read the request's HTTP version; its own status line there would
    /// say HTTP/1.0, which WebSocket clients do not accept as an answer. The refusal is HTTP/1.1 and closes.
    @Test func aRefusedHandshakeIsAnHTTP11AnswerThatCloses() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try TCPClient(port: s.port)
        try c.send(upgrade(version: "8"))
        let head = String(decoding: try c.readUntil(Array("\r\n\r\n".utf8)), as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"), "\(head)")
        #expect(head.lowercased().contains("connection: close"))
        let length = head.lowercased().components(separatedBy: "content-length: ").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
        #expect(try c.read(length).count == length)
        #expect(c.readsEOF())
    }

    @Test func aMissingWebSocketVersionGets426() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try TCPClient(port: s.port)
        try c.send(upgrade(version: nil))
        let r = try c.readResponse()
        #expect(r.status == 426)
        #expect(r.headers["sec-websocket-version"] == "13")
    }

    @Test(arguments: ["User-Agent", "Authorization", "Host"])
    func aNULInAHeaderValueIs400JSON(_ name: String) throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try TCPClient(port: s.port)
        try c.send("GET /hello HTTP/1.1\r\n\(name == "Host" ? "" : "Host: x\r\n")\(name): a\u{0}b\r\n\r\n")
        let r = try c.readResponse()
        #expect(r.status == 400)
        #expect(r.headers["content-type"] == "application/json")
        #expect(r.json["rule"] as? String == "header_value")
        #expect(r.json["field"] as? String == name.lowercased())

        let ws = try TCPClient(port: s.port)
        try ws.send(
            "GET /v1/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: a\u{0}b\r\n\r\n")
        let u = try ws.readResponse()
        #expect(u.status == 400)
        #expect(u.json["field"] as? String == "origin")
        #expect(s.delegate.opened.get().isEmpty)
    }

    /// lws 4.1.6 parses a header line without a colon, folded onto the next line (obs-fold) or with an empty name
    /// as part of a header that never ends (as it does for a header named exactly `X-A`, a fault of its name
    /// table): no callback runs. The adapter answers 400 when the header timeout passes, then closes.
    @Test(arguments: ["no colon", "obs-fold", "empty name", "X-A"])
    func malformedHeaderLinesGet400AtTheHeaderTimeout(_ kind: String) throws {
        let lines = [
            "no colon": "X-No-Colon\r\n", "obs-fold": "X-Fold: a\r\n  b\r\n", "empty name": ": empty-name\r\n",
            "X-A": "X-A: b\r\n",
        ]
        let line = lines[kind]!
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.headerTimeout = 2
        let s = try RunningServer(o)
        defer { s.stop() }
        let c = try TCPClient(port: s.port, timeout: 8)
        let t0 = Date()
        try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n" + line + "\r\n")
        let r = try c.readResponse()
        let waited = Date().timeIntervalSince(t0)
        #expect(r.status == 400)
        #expect(r.headers["content-type"] == "application/json")
        #expect(r.headers["connection"] == "close")
        #expect(r.json["rule"] as? String == "header_timeout")
        #expect(r.json["field"] as? String == "headers")
        #expect(waited > 1.5 && waited < 5, "answered after \(waited) s")
        #expect(c.readsEOF())
    }

    @Test func aConnectionThatSendsNothingGets408AtTheHeaderTimeout() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.headerTimeout = 1
        let s = try RunningServer(o)
        defer { s.stop() }
        let c = try TCPClient(port: s.port, timeout: 6)
        let r = try c.readResponse()
        #expect(r.status == 408)
        #expect(r.json["rule"] as? String == "header_timeout")
        #expect(c.readsEOF())
        // A connection that completed a request is not answered 408 later: lws's keep-alive timeout applies.
        let k = try TCPClient(port: s.port, timeout: 2.5)
        #expect(try k.request("GET", "/hello").status == 200)
        #expect(!k.readsEOF())
    }

    /// lws 4.1.6 answers these itself, with its HTML 403 page, before any callback.
    @Test(arguments: [
        "\u{16}\u{3}\u{1} garbage\r\n\r\n", "TRACE / HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: foo\r\nConnection: upgrade\r\n\r\n",
    ])
    func lwsAnswersGarbageWithItsHTML403(_ request: String) throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try TCPClient(port: s.port)
        try c.send(request)
        let r = try c.readResponse()
        #expect(r.status == 403)
        #expect(r.headers["content-type"] == "text/html")
    }

    /// RFC 6455 section 5.1 wants an unmasked client frame to close the connection (1002). lws 4.1.6 reads the mask bit
    /// and unmasks only masked frames; it never refuses an unmasked one and tells no callback, so the message is
    /// delivered like any other.
    @Test func lwsDeliversAnUnmaskedClientFrame() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        let payload = Array("unmasked".utf8)
        try ws.tcp.send([0x81, UInt8(payload.count)] + payload)
        let f = try ws.readMessage()
        #expect(f.opcode == 1)
        #expect(f.payload == payload)
    }
}
