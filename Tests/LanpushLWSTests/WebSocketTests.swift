import Foundation
import Testing

@testable import LanpushLWS

@Suite("LWSServer WebSocket", .timeLimit(.minutes(1)))
struct WebSocketTests {
    @Test func handshakeAndEchoWithProtocolHeader() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port, extraHeaders: ["Authorization: Bearer tok"])
        #expect(ws.handshake.status == 101)
        #expect(ws.handshake.headers["sec-websocket-protocol"] == "lanpush.v1")
        #expect(ws.handshake.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(ws.handshake.headers["sec-websocket-extensions"] == nil)
        try ws.sendText(#"{"type":"hello"}"#)
        let f = try ws.readMessage()
        #expect(f.opcode == 1)
        #expect(String(decoding: f.payload, as: UTF8.self) == #"{"type":"hello"}"#)
        let req = s.delegate.openedRequests.get().first
        #expect(req?.path == "/v1/stream")
        #expect(req?.header("authorization") == "Bearer tok")
        #expect(req?.remoteAddress == "127.0.0.1")
    }

    @Test func handshakeWithoutProtocolHeaderBindsToo() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port, path: "/v1/stream?device=tablet", protocolHeader: false)
        #expect(ws.handshake.status == 101)
        try ws.sendText("x")
        #expect(try ws.readMessage().payload == Array("x".utf8))
        #expect(s.delegate.openedRequests.get().first?.query["device"] == "tablet")
    }

    @Test func acceptedSocketsHaveTCPNoDelay() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        #expect(ws.handshake.status == 101)
        #expect(waitUntil(2) { !s.delegate.noDelay.get().isEmpty })
        #expect(s.delegate.noDelay.get() == [true])
    }

    @Test func upgradeOnOtherPathIsRefusedWithJSON() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port, path: "/v1/other")
        #expect(ws.handshake.status == 404)
        #expect(ws.handshake.headers["content-type"] == "application/json")
        #expect(ws.handshake.json["rule"] as? String == "not_found")
        #expect(s.delegate.opened.get().isEmpty)
    }

    @Test func fragmentedAndLargeMessagesAreReassembled() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        try ws.sendFrame(opcode: 1, Array("hel".utf8), fin: false)
        try ws.sendFrame(opcode: 0, Array("lo ".utf8), fin: false)
        try ws.sendFrame(opcode: 0, Array("world".utf8), fin: true)
        #expect(String(decoding: try ws.readMessage().payload, as: UTF8.self) == "hello world")
        // bigger than the 4 KiB rx buffer, arrives in pieces
        let big = [UInt8](repeating: UInt8(ascii: "z"), count: 40_000)
        try ws.sendFrame(opcode: 1, big)
        let back = try ws.readMessage()
        #expect(back.payload == big)
        #expect(s.delegate.texts.get().count == 2)
    }

    @Test func tooLargeMessageClosesWith1009() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.maxBodyBytes = 1000
        let s = try RunningServer(o)
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        try ws.sendFrame(opcode: 1, [UInt8](repeating: 0x61, count: 600), fin: false)
        try ws.sendFrame(opcode: 0, [UInt8](repeating: 0x61, count: 600), fin: true)
        let f = try ws.readMessage()
        #expect(f.opcode == 8)
        #expect(f.closeCode == 1009)
        try ws.sendFrame(opcode: 8, f.payload)  // the server waits for the answer to its close frame
        #expect(waitUntil(2) { s.delegate.closed.get().count == 1 })
    }

    @Test func burstOfFramesWithChokeLoop() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        try ws.sendText("burst")
        for i in 0..<200 {
            let f = try ws.readMessage()
            #expect(String(decoding: f.payload, as: UTF8.self) == "m\(i)")
        }
    }

    @Test func framesOfOneTurnGoOutInOneSend() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        let before = ws.tcp.dataSegmentsIn
        #expect(before > 0)  // the handshake's answer: the count is read where it is
        try ws.sendText("burst")
        for i in 0..<200 {
            #expect(String(decoding: try ws.readMessage().payload, as: UTF8.self) == "m\(i)")
        }
        // The 200 frames (1.2 KB) of one turn: one send, one segment on loopback; a send per frame made ~200.
        #expect(ws.tcp.dataSegmentsIn - before <= 2)
    }

    /// Frame lengths around each header form's bounds, written in one turn: those that fit go out in one batch, the
    /// rest alone in order; each must arrive whole with its own length and bytes.
    @Test(arguments: [64 * 1024, 256 * 1024])
    func framesOfEveryHeaderFormKeepTheirOrderAndBytes(txPacketSize: Int) throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.txPacketSize = txPacketSize
        o.maxBodyBytes = 1 << 20
        let s = try RunningServer(o)
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        let sizes = [0, 1, 125, 126, 127, 1000, 65_535, 65_536, 3, 70_000, 200_000, 125, 0]
        try ws.sendText("sizes:" + sizes.map(String.init).joined(separator: ","))
        for n in sizes {
            let f = try ws.readMessage()
            #expect(f.fin && f.opcode == 1)
            #expect(f.payload.count == n)
            #expect(f.payload == (0..<n).map { UInt8($0 % 251) })
        }
    }

    /// lws reads a WebSocket at most its receive buffer a turn: on a subprotocol with a buffer of its own a burst of
    /// small messages is read at once, on the others ~500 bytes a turn.
    @Test func aSubprotocolWithItsOwnReceiveBufferReadsABurstInOneTurn() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.webSocketProtocols = ["lanpush.v1", "lanpush.publisher"]
        o.receiveBuffers = ["lanpush.publisher": 16 * 1024]
        let s = try RunningServer(o)
        defer { s.stop() }
        for name in ["lanpush.publisher", "lanpush.v1"] {
            let ws = try WSClient(port: s.port, protocolHeader: false, extraHeaders: ["Sec-WebSocket-Protocol: \(name)"])
            #expect(ws.handshake.headers["sec-websocket-protocol"] == name)
            // 40 masked frames of 106 bytes (4.2 KB) in one send: all in the server's socket before it reads.
            let frame = WSClient.frame(opcode: 1, Array(("ack" + String(repeating: "x", count: 100)).utf8))
            try ws.tcp.send(Array([[UInt8]](repeating: frame, count: 40).joined()))
            #expect(waitUntil(2) { s.delegate.textTurns.get().filter { $0.subprotocol == name }.count == 40 })
        }
        let turns = s.delegate.textTurns.get()
        #expect(Set(turns.filter { $0.subprotocol == "lanpush.publisher" }.map(\.turn)).count == 1)
        #expect(Set(turns.filter { $0.subprotocol == "lanpush.v1" }.map(\.turn)).count >= 8)
    }

    @Test func receiveBuffersMustNameAServedSubprotocol() {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.receiveBuffers = ["lanpush.other": 16 * 1024]
        #expect(throws: LWSServerError.self) { try o.validate() }
        o.webSocketProtocols = ["lanpush.v1", "lanpush.other"]
        o.receiveBuffers = ["lanpush.other": 64]
        #expect(throws: LWSServerError.self) { try o.validate() }
        o.receiveBuffers = ["lanpush.other": 16 * 1024]
        #expect(throws: Never.self) { try o.validate() }
    }

    @Test func serverCloseCarriesCodeAndReason() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        try ws.sendText("close-me")
        let f = try ws.readMessage()
        #expect(f.opcode == 8)
        #expect(f.closeCode == 4002)
        #expect(f.closeReason == "ack timeout")
        try ws.sendFrame(opcode: 8, [0x0F, 0xA2])
        #expect(waitUntil(2) { s.delegate.closed.get().count == 1 })
    }

    @Test func peerCloseReportsClosed() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        #expect(waitUntil(2) { s.delegate.opened.get().count == 1 })
        try ws.sendFrame(opcode: 8, [0x03, 0xE8])
        let echo = try ws.readMessage()
        #expect(echo.opcode == 8)
        #expect(waitUntil(2) { s.delegate.closed.get() == s.delegate.opened.get() })
        #expect(s.delegate.peerCloseCodes.get() == [1000])
    }

    /// Flow control: while a connection's input is paused nothing it sends is delivered; after the resume all of it
    /// is, in order (what lws had read already and what waited in the socket).
    @Test func pausedInputWaitsAndArrivesInOrderAfterTheResume() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port)
        try ws.sendText("pause:0.6")
        #expect(waitUntil(2) { s.delegate.texts.get().count == 1 })
        for i in 0..<20 { try ws.sendText("m\(i)") }
        Thread.sleep(forTimeInterval: 0.3)
        #expect(s.delegate.texts.get().count == 1, "delivered while paused")
        #expect(waitUntil(3) { s.delegate.texts.get().count == 21 })
        #expect(s.delegate.texts.get().dropFirst().map { String(decoding: $0, as: UTF8.self) } == (0..<20).map { "m\($0)" })
    }

    @Test func silentPeerIsClosedAfterPingTimeout() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.pingInterval = 1
        o.pingTimeout = 1
        let s = try RunningServer(o)
        defer { s.stop() }
        let silent = try WSClient(port: s.port, timeout: 5)
        let lively = try WSClient(port: s.port, timeout: 5)
        #expect(waitUntil(2) { s.delegate.opened.get().count == 2 })
        let silentID = s.delegate.opened.get()[0]
        // The lively client answers every ping in the background.
        let livelyDone = Locked(false)
        let t = Thread {
            while !livelyDone.get() { _ = try? lively.readMessage(answerPings: true) }
        }
        t.start()
        let t0 = Date()
        // The silent one sees a ping but never answers, then the connection goes.
        var sawPing = false
        var sawEOF = false
        while Date().timeIntervalSince(t0) < 4.5 {
            guard let f = try? silent.readFrame() else {
                sawEOF = true
                break
            }
            if f.opcode == 9 { sawPing = true }
        }
        let elapsed = Date().timeIntervalSince(t0)
        if ProcessInfo.processInfo.environment["LWS_VERBOSE"] != nil { print("silent peer closed after \(elapsed) s") }
        #expect(sawPing)
        #expect(sawEOF)
        #expect(elapsed < 3.8)
        #expect(waitUntil(1) { s.delegate.closed.get().contains(silentID) })
        #expect(s.delegate.closed.get() == [silentID])  // the ponging client is still there
        livelyDone.set(true)
    }

    /// A close asked for while the socket is choked (the peer has not been reading) still reaches the peer, after
    /// the data already written (the adapter writes close frames itself; see WriteBuffer.writeClose).
    @Test func closeOfAChokedConnectionArrivesAfterItsData() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port, timeout: 10)
        try ws.sendText("bench:300000")  // ~22 MB: far more than the socket buffers hold
        Thread.sleep(forTimeInterval: 0.5)  // the server writes until it is choked
        try ws.sendText("close-me")
        var frames = 0
        while true {
            let f = try ws.readMessage()
            if f.opcode == 8 {
                #expect(f.closeCode == 4002)
                break
            }
            frames += 1
        }
        #expect(frames > 1000)
    }

    @Test func requestStopSends1001AndRunReturnsQuickly() throws {
        let s = try RunningServer()
        let ws = try WSClient(port: s.port)
        let ws2 = try WSClient(port: s.port)
        #expect(waitUntil(2) { s.delegate.opened.get().count == 2 })
        // ws2 answers the close, ws never does: run() must still return promptly.
        let replied = Locked<UInt16?>(nil)
        let t = Thread {
            if let f = try? ws2.readMessage(), f.opcode == 8 {
                replied.set(f.closeCode)
                try? ws2.sendFrame(opcode: 8, f.payload)
            }
        }
        t.start()
        let elapsed = s.stop(timeout: 3)
        #expect(elapsed != nil)
        #expect((elapsed ?? 9) < 2)
        let f = try ws.readMessage()
        #expect(f.opcode == 8)
        #expect(f.closeCode == 1001)
        #expect(f.closeReason == "shutdown")
        #expect(waitUntil(1) { replied.get() == 1001 })
        #expect(s.delegate.closed.get().count == 2)  // every session got wsClosed
        #expect(ws.tcp.readsEOF())
    }

    @Test func newConnectionsAreRefusedAfterStop() throws {
        let s = try RunningServer()
        let port = s.port
        #expect(s.stop(timeout: 2) != nil)
        #expect(throws: (any Error).self) {
            let c = try TCPClient(port: port, timeout: 0.5)
            _ = try c.request("GET", "/hello")
        }
    }
}
