import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LanpushLWS

/// Connections that never finish their request headers must not lock anyone else out.
@Suite("LWSServer admission", .timeLimit(.minutes(2)), .serialized)
struct AdmissionTests {
    /// Opens `count` connections from `source` that send nothing; the ones the server refused at accept are in
    /// the list too (they read EOF at once).
    private func idleConnections(_ count: Int, port: Int, source: String, timeout: Double) throws -> [TCPClient] {
        try (0..<count).map { _ in try TCPClient(port: port, timeout: timeout, source: source) }
    }

    @Test func idleConnectionsFromOneAddressDoNotLockOthersOut() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.headerTimeout = 3
        let s = try RunningServer(o)
        defer { s.stop() }
        // More idle connections than the old 64-table pool and than the per-address cap (256).
        let idle = try idleConnections(300, port: s.port, source: "127.0.0.2", timeout: 12)
        usleep(300_000)  // let the loop accept them all

        let t0 = Date()
        let c = try TCPClient(port: s.port, timeout: 10)
        let r = try c.request("GET", "/hello")
        #expect(r.status == 200)
        let ws = try WSClient(port: s.port, timeout: 10)
        #expect(ws.handshake.status == 101)
        try ws.sendText("still here")
        #expect(try ws.readMessage().payload == Array("still here".utf8))
        // Generous for a loaded 2-core machine; before the fix these waited ~5 s and were reset.
        #expect(Date().timeIntervalSince(t0) < 2.5)

        // Every idle connection is answered 408 and closed at the header timeout (the ones past the per-address cap
        // were closed at accept), none is left holding a table.
        let closedBy = Date().addingTimeInterval(Double(o.headerTimeout) + 6)
        var answered = 0
        var closed = 0
        for conn in idle {
            if let r = try? conn.readResponse() {
                #expect(r.status == 408)
                answered += 1
            }
            if conn.readsEOF() { closed += 1 }
        }
        #expect(closed == idle.count)
        #expect(answered == o.pendingPerAddress)
        #expect(Date() < closedBy)
    }

    @Test func connectionsPastThePerAddressCapAreRefusedAtAccept() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.pendingPerAddress = 8
        o.headerTimeout = 30  // nothing here may depend on the timeout
        let s = try RunningServer(o)
        defer { s.stop() }

        var held = try idleConnections(8, port: s.port, source: "127.0.0.3", timeout: 2)
        usleep(200_000)
        // The ninth from the same address is closed before anything is read...
        let refused = try TCPClient(port: s.port, timeout: 2, source: "127.0.0.3")
        #expect(refused.readsEOF())
        // ...the held ones are still open...
        for conn in held.prefix(2) { #expect(!conn.readsEOF(), "an admitted connection was closed") }
        // ...and another address is not affected, nor is the same address once it sends real requests.
        let other = try TCPClient(port: s.port, timeout: 5, source: "127.0.0.4")
        #expect(try other.request("GET", "/hello").status == 200)

        // A connection that completed its headers no longer counts: one request frees a place.
        #expect(try held[0].request("GET", "/hello").status == 200)
        let next = try TCPClient(port: s.port, timeout: 5, source: "127.0.0.3")
        #expect(try next.request("GET", "/hello").status == 200)

        // Closing pending connections frees their places as well.
        held.removeLast(4)
        usleep(300_000)
        let more = try idleConnections(3, port: s.port, source: "127.0.0.3", timeout: 1)
        usleep(200_000)
        for conn in more { #expect(!conn.readsEOF(), "a place freed by a close was not given back") }
    }

    /// Idle keep-alive connections (a request answered, the socket held open) count per address too: an address
    /// cannot hold more than `connectionsPerAddress` open; WebSockets leave the count once upgraded.
    @Test func idleKeepAliveConnectionsAreCountedPerAddress() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.connectionsPerAddress = 6
        o.keepAliveTimeout = 60
        let s = try RunningServer(o)
        defer { s.stop() }
        var idle: [TCPClient] = []
        for _ in 0..<6 {
            let c = try TCPClient(port: s.port, timeout: 5, source: "127.0.0.6")
            #expect(try c.request("GET", "/hello").status == 200)
            idle.append(c)
        }
        usleep(100_000)
        let refused = try TCPClient(port: s.port, timeout: 2, source: "127.0.0.6")
        #expect(refused.readsEOF())
        #expect(try TCPClient(port: s.port, timeout: 5, source: "127.0.0.7").request("GET", "/hello").status == 200)
        // One closed: its place is given back.
        idle.removeLast()
        usleep(300_000)
        let again = try TCPClient(port: s.port, timeout: 5, source: "127.0.0.6")
        #expect(try again.request("GET", "/hello").status == 200)
    }

    @Test func aBurstOfHandshakesFromOneAddressIsAdmitted() throws {
        // 100 tablets behind one NAT reconnecting at once: every handshake is sent before any answer is read.
        let s = try RunningServer()
        defer { s.stop() }
        let conns = try (0..<100).map { _ in try TCPClient(port: s.port, timeout: 10, source: "127.0.0.5") }
        let handshake = "GET /v1/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        for c in conns { try c.send(handshake) }
        for c in conns { #expect(try c.readResponse().status == 101) }
    }
}
