import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LanpushLWS

/// lws 4.1 on libuv closes the read end of its cancel pipe twice when a context is destroyed; a descriptor another
/// thread opens between the two closes must not be the one the second close takes.
@Suite("lws's cancel pipe at teardown")
struct PipeCloseGuardTests {
    @Test func aDescriptorOpenedBetweenLwsTwoClosesOfItsPipeSurvives() throws {
        var o = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        o.eventLoop = .libuv
        let s = try RunningServer(o)
        // Open a WebSocket so that the teardown closes a connection too (a callback after the pipe's first close).
        let ws = try WSClient(port: s.port, timeout: 5)
        try ws.sendText("hello")
        #expect(waitUntil(3) { !s.delegate.texts.get().isEmpty })

        // Between lws_context_destroy and the loop's close callbacks, on the loop thread: take the pipe's number
        // if it is free, as any thread opening a file then would (F_DUPFD gives exactly that number when free).
        let taken = Locked<(pipe: Int32, got: Int32)?>(nil)
        let ready = Locked(false)
        let server = s.server
        // Opened now: opened in there, it would itself take the lowest free number.
        let source = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(source) }
        s.onLoop {
            server.loop.afterContextDestroyed = {
                guard let pipe = server.loop.pipeDescriptorAtTeardown else { return }
                taken.set((pipe, fcntl(source, F_DUPFD_CLOEXEC, pipe)))
            }
            ready.set(true)
        }
        #expect(waitUntil(3) { ready.get() })
        #expect(s.stop() != nil)

        let t = try #require(taken.get(), "the server did not run on libuv, or lws had no pipe")
        #expect(t.got >= 0)
        // The guard held the pipe's number, so ours is another one, and lws's second close did not take it.
        #expect(t.got != t.pipe, "the pipe's number was free between lws's two closes")
        #expect(fcntl(t.got, F_GETFD) != -1, "lws closed a descriptor it did not own")
        close(t.got)
    }
}
