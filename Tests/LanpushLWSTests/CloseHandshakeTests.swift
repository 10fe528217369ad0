import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LanpushLWS

/// A server-side close must reach a client that is still sending: closing the socket with unread input makes the
/// kernel answer with a reset, and a reset can destroy the close frame before the client reads it.
@Suite("LWSServer close handshake", .timeLimit(.minutes(2)))
struct CloseHandshakeTests {
    /// One masked text frame, as a client sends it.
    private func frame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        var f: [UInt8] = [0x81, 0x80 | UInt8(payload.count)]
        let mask: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]
        f += mask
        for (i, b) in payload.enumerated() { f.append(b ^ mask[i & 3]) }
        return f
    }

    @Test func theCloseCodeArrivesWhileTheClientFloodsAcks() throws {
        let s = try RunningServer()
        defer { s.stop() }
        // The close is asked for by the first message; ~100 KB of acks the server has not read follow it.
        var burst = frame("close-me")
        for i in 0..<2000 { burst += frame(#"ack{"type":"ack","seq":\#(i)}"#) }
        var codes: [UInt16?] = []
        for _ in 0..<50 {
            // A small receive window: the frames the server sends first, and its close frame behind them, wait in
            // the server's socket until the client reads. A reset would drop them there.
            let ws = try WSClient(port: s.port, timeout: 5, receiveBuffer: 4096)
            try ws.sendText("bench:1000")
            usleep(20_000)
            try? ws.tcp.send(burst)  // a reset may already break the send: the read below tells
            var code: UInt16?
            while let f = try? ws.readMessage() {
                if f.opcode == 8 {
                    code = f.closeCode
                    #expect(f.closeReason == "ack timeout")
                    try? ws.sendFrame(opcode: 8, f.payload)
                    break
                }
            }
            codes.append(code)
        }
        #expect(codes.allSatisfy { $0 == 4002 }, "close codes seen: \(codes)")
    }

    @Test func aPeerThatNeverAnswersIsClosedAfterTheCloseHandshakeTimeout() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.closeHandshakeTimeout = 1
        let s = try RunningServer(o)
        defer { s.stop() }
        let ws = try WSClient(port: s.port, timeout: 6)
        try ws.sendText("close-me")
        let t0 = Date()
        let f = try ws.readMessage()
        #expect(f.closeCode == 4002)
        // Still open while the server waits for our close frame; what we send meanwhile is dropped.
        try ws.sendText("ignored after the close")
        #expect(ws.tcp.readsEOF())
        let waited = Date().timeIntervalSince(t0)
        #expect(waited > 0.5 && waited < 4, "closed after \(waited) s")
        #expect(waitUntil(2) { s.delegate.closed.get().count == 1 })
        #expect(!s.delegate.texts.get().contains(Array("ignored after the close".utf8)))
    }

    @Test func theClientsCloseFrameEndsTheWaitAtOnce() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let ws = try WSClient(port: s.port, timeout: 5)
        try ws.sendText("close-me")
        let f = try ws.readMessage()
        #expect(f.closeCode == 4002)
        let t0 = Date()
        try ws.sendFrame(opcode: 8, f.payload)
        #expect(ws.tcp.readsEOF())
        #expect(Date().timeIntervalSince(t0) < 1, "the server did not close on our close frame")
        #expect(waitUntil(2) { s.delegate.closed.get().count == 1 })
        // The answer to the server's own close is not a close by the peer.
        #expect(s.delegate.peerCloseCodes.get().isEmpty)
    }
}
