import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LanpushLWS

@Suite("WebSocket client", .timeLimit(.minutes(1)))
struct ClientTests {
    // MARK: standalone loop

    @Test func standaloneClientExchangesTextAndSeesTheServersCloseCode() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try RunningClientLoop(start: false)
        let rec = RecordingClient(sendOnOpen: [#"{"type":"hello"}"#])
        // Unowned: the client keeps its handler, and a handler holding the client would never let either go.
        rec.onText = { [unowned rec] conn, text in
            if text == #"{"type":"hello"}"# { rec.queue(conn, "close-me") }
        }
        // Before run(): the creating thread may use the loop.
        let conn = try c.loop.connectWebSocket(
            url: "ws://127.0.0.1:\(s.port)/v1/stream?device=cli", subprotocol: "lanpush.v1",
            headers: [("Authorization", "Bearer tok"), ("X-Request-Id", "r1")], delegate: rec)
        #expect(conn.isConnecting)
        #expect(conn.url.path == "/v1/stream?device=cli")
        c.start()
        defer { c.stop() }

        #expect(waitUntil(3) { rec.opened.get() })
        #expect(rec.subprotocol.get() == "lanpush.v1")
        #expect(rec.noDelay.get() == true)
        #expect(waitUntil(3) { rec.closed.get() != nil })
        #expect(rec.texts.get() == [#"{"type":"hello"}"#])
        #expect(rec.closed.get()?.code == 4002)
        #expect(rec.closed.get()?.reason == "ack timeout")
        #expect(rec.terminalCalls.get() == 1)
        // What the server saw of the handshake.
        let req = s.delegate.openedRequests.get().first
        #expect(req?.path == "/v1/stream")
        #expect(req?.query["device"] == "cli")
        #expect(req?.header("authorization") == "Bearer tok")
        #expect(req?.header("sec-websocket-protocol") == "lanpush.v1")
        #expect(req?.remoteAddress == "127.0.0.1")
        #expect(req?.header("host") == "127.0.0.1:\(s.port)")
        #expect(req?.header("x-request-id") == nil)  // not one of the captured names (extraHeaderNames)
        #expect(s.delegate.texts.get().map { String(decoding: $0, as: UTF8.self) } == [#"{"type":"hello"}"#, "close-me"])
        #expect(waitUntil(2) { s.delegate.closed.get().count == 1 })
    }

    @Test func withoutSubprotocolAndWithBigAndBurstMessages() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try RunningClientLoop()
        defer { c.stop() }
        let big = String(repeating: "z", count: 40_000)  // beyond both rx buffers, within the server's 64 KiB
        let rec = RecordingClient(sendOnOpen: [big, "burst"])
        _ = c.sync { try? c.loop.connectWebSocket(url: "http://127.0.0.1:\(s.port)/v1/stream", delegate: rec) }
        #expect(waitUntil(5) { rec.texts.get().count == 201 })
        #expect(rec.subprotocol.get() == nil)
        let texts = rec.texts.get()
        #expect(texts.first?.count == big.count)
        #expect(Array(texts.dropFirst()).count == 200 && texts.last == "m199")
        #expect(s.delegate.openedRequests.get().first?.header("sec-websocket-protocol") == nil)
    }

    @Test func clientCloseReachesTheServer() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try RunningClientLoop()
        defer { c.stop() }
        let rec = RecordingClient()
        rec.onOpen = { conn in conn.close(code: 4100, reason: "bye") }
        _ = c.sync { try? c.loop.connectWebSocket(url: "ws://127.0.0.1:\(s.port)/v1/stream", delegate: rec) }
        #expect(waitUntil(3) { rec.closed.get() != nil })
        #expect(waitUntil(2) { s.delegate.peerCloseCodes.get() == [4100] })
        // This side closed first: the server's echo of the close frame is not reported as the peer's code.
        #expect(rec.closed.get()?.code == nil)
        #expect(rec.terminalCalls.get() == 1)
        #expect(c.sync { c.loop.connectionCount } == 0)
    }

    /// Any loop on either side: text both ways and close codes both ways. Each must actually be in use here
    /// (Debian's lws ships both plugins); poll is the fallback when they are missing.
    @Test(arguments: [
        (LWSEventLoopKind.libev, LWSEventLoopKind.libev), (.libev, .libuv), (.libuv, .libev), (.poll, .libev),
        (.libuv, .poll), (.poll, .libuv), (.libuv, .libuv),
    ])
    func eventLoopsInterwork(server serverLoop: LWSEventLoopKind, client clientLoop: LWSEventLoopKind) throws {
        var so = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        so.eventLoop = serverLoop
        let s = try RunningServer(so)
        defer { s.stop() }
        #expect(s.server.eventLoop == serverLoop)
        var co = WSClientOptions()
        co.eventLoop = clientLoop
        let c = try RunningClientLoop(co)
        defer { c.stop() }
        #expect(c.loop.eventLoop == clientLoop)
        let rec = RecordingClient(sendOnOpen: [#"{"type":"hello"}"#])
        rec.onText = { conn, text in
            if text == #"{"type":"hello"}"# { conn.close(code: 4200, reason: "done") }
        }
        _ = c.sync { try? c.loop.connectWebSocket(url: "ws://127.0.0.1:\(s.port)/v1/stream", delegate: rec) }
        #expect(waitUntil(3) { rec.closed.get() != nil })
        #expect(waitUntil(2) { s.delegate.peerCloseCodes.get() == [4200] })
        #expect(rec.texts.get() == [#"{"type":"hello"}"#])
    }

    @Test func clientAnswersTheServersPings() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.pingInterval = 1
        o.pingTimeout = 1
        let s = try RunningServer(o)
        defer { s.stop() }
        let c = try RunningClientLoop()
        defer { c.stop() }
        let rec = RecordingClient()
        _ = c.sync { try? c.loop.connectWebSocket(url: "ws://127.0.0.1:\(s.port)/v1/stream", delegate: rec) }
        #expect(waitUntil(3) { rec.opened.get() })
        Thread.sleep(forTimeInterval: 3.5)  // a silent peer is gone after ~2-3 s
        #expect(!rec.isDone)
        #expect(s.delegate.closed.get().isEmpty)
    }

    @Test func refusedConnectionReportsFailureFromTheLoopNotFromConnect() throws {
        let c = try RunningClientLoop()
        defer { c.stop() }
        let rec = RecordingClient()
        let port = unusedPort()
        let failedInsideConnect = c.sync { () -> Bool in
            _ = try? c.loop.connectWebSocket(url: "ws://127.0.0.1:\(port)/", delegate: rec)
            return rec.isDone
        }
        #expect(failedInsideConnect == false)
        #expect(waitUntil(3) { rec.failed.get() != nil })
        if case .connectFailed(let reason, let status) = rec.failed.get() {
            #expect(!reason.isEmpty)
            #expect(status == nil)
        } else {
            Issue.record("expected connectFailed, got \(String(describing: rec.failed.get()))")
        }
        #expect(rec.opened.get() == false)
        #expect(rec.terminalCalls.get() == 1)
    }

    @Test func nonUpgradeAnswerReportsTheHTTPStatus() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try RunningClientLoop()
        defer { c.stop() }
        let rec = RecordingClient()
        _ = c.sync { try? c.loop.connectWebSocket(url: "ws://127.0.0.1:\(s.port)/v1/other", delegate: rec) }
        #expect(waitUntil(3) { rec.failed.get() != nil })
        guard case .connectFailed(_, let status) = rec.failed.get() else {
            Issue.record("expected connectFailed, got \(String(describing: rec.failed.get()))")
            return
        }
        #expect(status == 404)
    }

    @Test func closeWhileConnectingCancelsAndHandshakeTimesOut() throws {
        let silent = SilentListener()
        var o = WSClientOptions()
        o.connectTimeout = 1
        let c = try RunningClientLoop(o)
        defer { c.stop() }
        let cancelled = RecordingClient()
        let timedOut = RecordingClient()
        let t0 = Date()
        _ = c.sync {
            let conn = try? c.loop.connectWebSocket(url: "ws://127.0.0.1:\(silent.port)/", delegate: cancelled)
            _ = try? c.loop.connectWebSocket(url: "ws://127.0.0.1:\(silent.port)/", delegate: timedOut)
            c.loop.schedule(after: 0.1) { conn?.close() }
        }
        #expect(waitUntil(2) { cancelled.failed.get() != nil })
        #expect(cancelled.failed.get() == .cancelled)
        #expect(waitUntil(4) { timedOut.failed.get() != nil })
        let elapsed = Date().timeIntervalSince(t0)
        #expect(elapsed < 3.5)
        if case .connectFailed = timedOut.failed.get() {} else {
            Issue.record("expected connectFailed, got \(String(describing: timedOut.failed.get()))")
        }
        #expect(cancelled.terminalCalls.get() == 1 && timedOut.terminalCalls.get() == 1)
    }

    @Test func invalidURLsThrow() throws {
        let c = try RunningClientLoop(start: false)
        let rec = RecordingClient()
        for bad in ["127.0.0.1:80/x", "ftp://host/", "ws://", "ws://host:0/", "ws://host:99999/", "ws://[::1/"] {
            #expect(throws: WSClientError.self) { try c.loop.connectWebSocket(url: bad, delegate: rec) }
        }
        #expect(throws: WSClientError.self) {
            try c.loop.connectWebSocket(url: "ws://127.0.0.1:1/", headers: [("X-Evil", "a\r\nb")], delegate: rec)
        }
        let u = try WebSocketURL("wss://[::1]:8443/api/websocket?x=1#frag")
        #expect(u.secure && u.host == "::1" && u.port == 8443 && u.path == "/api/websocket?x=1")
        #expect(u.hostHeader == "[::1]:8443")
        let d = try WebSocketURL("https://ha.example")
        #expect(d.secure && d.port == 443 && d.path == "/" && d.hostHeader == "ha.example")
        #expect(try WebSocketURL("ws://h?q=1").path == "/?q=1")
        c.start()
        #expect(c.stop() != nil)
    }

    @Test func standaloneLoopStopsPromptlyAndClosesWith1001() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try RunningClientLoop()
        let rec = RecordingClient()
        _ = c.sync { try? c.loop.connectWebSocket(url: "ws://127.0.0.1:\(s.port)/v1/stream", delegate: rec) }
        #expect(waitUntil(3) { rec.opened.get() })
        let elapsed = c.stop(timeout: 3)
        #expect(elapsed != nil)
        #expect((elapsed ?? 9) < 1)
        #expect(rec.closed.get() != nil)
        #expect(rec.terminalCalls.get() == 1)
        #expect(waitUntil(2) { s.delegate.peerCloseCodes.get() == [1001] })
        // After the stop: no new connections.
        #expect(throws: WSClientError.notRunning) {
            try c.loop.connectWebSocket(url: "ws://127.0.0.1:\(s.port)/v1/stream", delegate: RecordingClient())
        }
    }

    @Test func idleLoopStopsAtOnceAndRunsTimersAndWakes() throws {
        let c = try RunningClientLoop()
        let fired = Locked<[Int]>([])
        _ = c.sync {
            c.loop.schedule(after: 0.05) { fired.update { $0.append(2) } }
            c.loop.schedule(after: 0.01) { fired.update { $0.append(1) } }
            let x = c.loop.schedule(after: 0.02) { fired.update { $0.append(99) } }
            x.cancel()
        }
        #expect(waitUntil(2) { fired.get() == [1, 2] })
        #expect(c.wakes.get() >= 1)
        // Stop from a thread that is neither the loop nor the test's.
        let t0 = Date()
        Thread { c.loop.requestStop() }.start()
        #expect(c.waitForRun(timeout: 2))
        #expect(Date().timeIntervalSince(t0) < 0.5)
    }

    @Test func stopRequestedBeforeRunReturnsImmediately() throws {
        let c = try RunningClientLoop(start: false)
        c.loop.requestStop()
        c.start()
        #expect(c.waitForRun(timeout: 2))
    }

    // MARK: on a server's loop

    @Test func clientOnTheServersLoop() throws {
        let remote = try RunningServer()
        defer { remote.stop() }
        let host = try RunningHost()
        let rec = RecordingClient(sendOnOpen: ["ping-from-host"])
        rec.onText = { [unowned rec] conn, text in
            if text == "ping-from-host" { rec.queue(conn, "close-me") }
        }
        // Before run(), on the creating thread.
        try host.server.connectWebSocket(
            url: "ws://127.0.0.1:\(remote.port)/v1/stream", subprotocol: "lanpush.v1",
            headers: [("Authorization", "Bearer ha-token")], delegate: rec)
        host.start()
        #expect(waitUntil(3) { rec.closed.get() != nil })
        #expect(rec.opened.get())
        #expect(rec.subprotocol.get() == "lanpush.v1")
        #expect(rec.texts.get() == ["ping-from-host"])
        #expect(rec.closed.get()?.code == 4002)
        #expect(remote.delegate.openedRequests.get().first?.header("authorization") == "Bearer ha-token")

        // The host still serves its own HTTP while it has client connections.
        let http = try TCPClient(port: host.server.port)
        #expect(try http.request("GET", "/anything").status == 404)

        // A second connection from the loop; then the host's stop closes it with 1001.
        let rec2 = RecordingClient()
        host.onLoop { _ = try? host.server.connectWebSocket(url: "ws://127.0.0.1:\(remote.port)/v1/stream", delegate: rec2) }
        #expect(waitUntil(3) { rec2.opened.get() })
        let elapsed = host.stop()
        #expect(elapsed != nil)
        #expect((elapsed ?? 9) < 1)
        #expect(rec2.terminalCalls.get() == 1)
        #expect(waitUntil(2) { remote.delegate.peerCloseCodes.get().contains(1001) })
    }

    @Test func serverRefusesUpgradesNamingTheClientProtocol() throws {
        let host = try RunningHost()
        host.start()
        defer { host.stop() }
        let rec = RecordingClient()
        host.onLoop {
            // Make the host create its client vhost: the connection itself fails (nothing listens).
            _ = try? host.server.connectWebSocket(url: "ws://127.0.0.1:\(unusedPort())/", delegate: rec)
        }
        #expect(waitUntil(3) { rec.failed.get() != nil })
        // lws drops such an upgrade (the protocol is not on the listening vhost) or refuses it.
        let ws = try? WSClient(port: host.server.port, protocolHeader: false, extraHeaders: [
            "Sec-WebSocket-Protocol: \(WSClientEngine.protocolName)"
        ])
        #expect(ws == nil || ws?.handshake.status != 101)
    }

    // MARK: wss

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func wssVerifiesCertificates() throws {
        let tls = try TLSTestServer()
        defer { tls.stop() }
        // The self-signed certificate is not in the system store: the handshake must fail.
        do {
            let c = try RunningClientLoop()
            defer { c.stop() }
            let rec = RecordingClient()
            #expect(OpenSSLGate.handshaking {
                _ = c.sync { try? c.loop.connectWebSocket(url: "wss://localhost:\(tls.port)/", delegate: rec) }
                return waitUntil(5) { rec.failed.get() != nil }
            })
            if case .connectFailed(_, let status) = rec.failed.get() {
                #expect(status == nil)  // no HTTP answer: TLS failed first
            } else {
                Issue.record("expected connectFailed, got \(String(describing: rec.failed.get()))")
            }
        }
        // Trusting it through caFile: TLS completes and the (non-WebSocket) server answers HTTP 200.
        // A fresh s_server for each case: after a refused handshake it does not always serve the next one.
        do {
            let tls = try TLSTestServer()
            defer { tls.stop() }
            var o = WSClientOptions()
            o.caFile = tls.certPath
            let c = try RunningClientLoop(o)
            defer { c.stop() }
            let rec = RecordingClient()
            #expect(OpenSSLGate.handshaking {
                _ = c.sync { try? c.loop.connectWebSocket(url: "wss://localhost:\(tls.port)/", delegate: rec) }
                return waitUntil(5) { rec.failed.get() != nil }
            })
            guard case .connectFailed(_, let status) = rec.failed.get() else {
                Issue.record("expected connectFailed, got \(String(describing: rec.failed.get()))")
                return
            }
            #expect(status == 200, "\(String(describing: rec.failed.get()))")
        }
        // allowInsecureTLS skips verification.
        do {
            let tls = try TLSTestServer()
            defer { tls.stop() }
            let c = try RunningClientLoop()
            defer { c.stop() }
            let rec = RecordingClient()
            #expect(OpenSSLGate.handshaking {
                _ = c.sync {
                    try? c.loop.connectWebSocket(url: "wss://localhost:\(tls.port)/", allowInsecureTLS: true, delegate: rec)
                }
                return waitUntil(5) { rec.failed.get() != nil }
            })
            guard case .connectFailed(_, let status) = rec.failed.get() else { return }
            #expect(status == 200)
        }
    }

    /// A server started without TLS of its own and without `tlsClients` never initialises OpenSSL: `wss://` from
    /// its loop is refused at once with a reason, `ws://` still connects; with `tlsClients` the same `wss://` gets
    /// through TLS (the test server's HTTP 200 comes back).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func wssFromTheServersLoopNeedsTLSClients() throws {
        let remote = try RunningServer()
        defer { remote.stop() }
        let tls = try TLSTestServer()
        defer { tls.stop() }

        let plain = try RunningHost(tlsClients: false)
        plain.start()
        let refused = Locked<WSClientError?>(nil)
        let rec = RecordingClient()
        plain.onLoop {
            do {
                _ = try plain.server.connectWebSocket(url: "wss://localhost:\(tls.port)/", allowInsecureTLS: true, delegate: rec)
            } catch {
                refused.set(error as? WSClientError)
            }
            _ = try? plain.server.connectWebSocket(url: "ws://127.0.0.1:\(remote.port)/v1/stream", delegate: rec)
        }
        #expect(waitUntil(3) { rec.opened.get() })
        guard case .setupFailed(let why)? = refused.get() else {
            Issue.record("expected setupFailed, got \(String(describing: refused.get()))")
            plain.stop()
            return
        }
        #expect(why.contains("TLS"))
        plain.stop()

        let withTLS = try RunningHost(tlsClients: true)
        withTLS.start()
        defer { withTLS.stop() }
        let rec2 = RecordingClient()
        #expect(OpenSSLGate.handshaking {
            withTLS.onLoop {
                _ = try? withTLS.server.connectWebSocket(url: "wss://localhost:\(tls.port)/", allowInsecureTLS: true, delegate: rec2)
            }
            return waitUntil(5) { rec2.failed.get() != nil }
        })
        guard case .connectFailed(_, let status) = rec2.failed.get() else {
            Issue.record("expected connectFailed, got \(String(describing: rec2.failed.get()))")
            return
        }
        #expect(status == 200)
    }
}

/// `openssl s_server -www` with a fresh self-signed certificate for CN/SAN localhost: TLS only, answers any
/// request with an HTTP 200 page (enough to tell "TLS verified" from "TLS refused").
final class TLSTestServer {
    let dir: String
    let certPath: String
    let port: Int
    private let process: Process

    init() throws {
        dir = NSTemporaryDirectory() + "lanpush-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        certPath = dir + "/cert.pem"
        let keyPath = dir + "/key.pem"
        let gen = Process()
        gen.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        gen.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyPath, "-out", certPath, "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
        ]
        gen.standardOutput = FileHandle.nullDevice
        gen.standardError = FileHandle.nullDevice
        try gen.run()
        gen.waitUntilExit()
        // The port is picked before s_server binds it, so a parallel test may take it first: then try another.
        var started: (Int, Process)?
        for _ in 0..<5 {
            let port = unusedPort()
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            p.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certPath, "-key", keyPath, "-www", "-quiet"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            p.standardInput = FileHandle.nullDevice
            try p.run()
            // Wait until it listens — read from /proc, not by connecting: s_server serves one connection at a
            // time and after a probe that closes without a TLS handshake it does not always serve the next one.
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline && p.isRunning && !Self.isListening(port: port) { usleep(20_000) }
            if p.isRunning && Self.isListening(port: port) {
                started = (port, p)
                break
            }
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            p.waitUntilExit()
        }
        guard let (port, process) = started else { throw ClientError.connect }
        self.port = port
        self.process = process
    }

    /// A socket in LISTEN state on 127.0.0.1:`port` (/proc/net/tcp: local address `0100007F:PPPP`, state `0A`).
    private static func isListening(port: Int) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return false }
        let local = String(format: "0100007F:%04X", port)
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1] == local && fields[3] == "0A"
        }
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)  // s_server does not exit on SIGTERM
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: dir)
    }
}
