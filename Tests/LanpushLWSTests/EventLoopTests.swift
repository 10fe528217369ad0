import Foundation
import Testing

@testable import LanpushLWS

/// Timers on each event loop, where lws 4.1's own timer handling differs: its libev glue keeps a timer armed for
/// the earliest deadline it knew of and ignores an earlier one set while it runs.
@Suite("event loops")
struct EventLoopTests {
    private func server(_ kind: LWSEventLoopKind, keepAlive: Int = 30) throws -> RunningServer {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.eventLoop = kind
        o.keepAliveTimeout = keepAlive
        let s = try RunningServer(o)
        #expect(s.server.eventLoop == kind)
        return s
    }

    /// A timer scheduled while a later one is armed runs at its own time, with no I/O meanwhile to wake the loop.
    @Test(arguments: [LWSEventLoopKind.libev, .libuv, .poll])
    func anEarlierTimerRunsOnTimeWhileALaterOneIsArmed(_ kind: LWSEventLoopKind) throws {
        let s = try server(kind)
        defer { s.stop() }
        let server = s.server
        let later = Locked(false)
        s.onLoop { server.schedule(after: 30) { later.set(true) } }
        // Long enough for the loop to have gone back to sleep until the 30 s timer (or lws's own next one).
        Thread.sleep(forTimeInterval: 0.3)
        let scheduledAt = Locked<Date?>(nil)
        let ranAt = Locked<Date?>(nil)
        s.onLoop {
            scheduledAt.set(Date())
            server.schedule(after: 0.2) { ranAt.set(Date()) }
        }
        #expect(waitUntil(3) { ranAt.get() != nil })
        let waited = try #require(ranAt.get()).timeIntervalSince(try #require(scheduledAt.get()))
        #expect(waited > 0.15 && waited < 0.6, "ran after \(waited) s")
        #expect(!later.get())
    }

    /// lws's own timeouts (here its keep-alive timeout) still run on each loop, with one of the adapter's timers
    /// armed far later and nothing else happening (on libev lws arms its timer after I/O, and the adapter nudges it
    /// at least once a second besides).
    @Test(arguments: [LWSEventLoopKind.libev, .libuv])
    func anIdleKeepAliveConnectionIsClosedAtTheKeepAliveTimeout(_ kind: LWSEventLoopKind) throws {
        let s = try server(kind, keepAlive: 1)
        defer { s.stop() }
        let server = s.server
        s.onLoop { server.schedule(after: 30) {} }
        let c = try TCPClient(port: s.port, timeout: 8)
        #expect(try c.request("GET", "/hello").status == 200)
        let t0 = Date()
        #expect(c.readsEOF())
        let waited = Date().timeIntervalSince(t0)
        #expect(waited > 0.5 && waited < 3.5, "closed after \(waited) s")
    }
}

