import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LanpushLWS

/// Loop-confined state checks its thread in debug builds: a call from another thread while the loop runs traps.
@Suite("Loop confinement", .timeLimit(.minutes(2)))
struct LoopConfinementTests {
    #if DEBUG
    @Test func scheduleFromAnotherThreadTrapsWhileTheLoopRuns() async {
        await #expect(processExitsWith: .signal(SIGILL)) {  // a failed precondition traps
            let s = try RunningServer()
            #expect(waitUntil(3) { s.server.loopThread.isCurrent == false })
            s.server.schedule(after: 1) {}  // the test thread, not the loop thread
        }
    }

    @Test func aConnectionUsedFromAnotherThreadTraps() async {
        await #expect(processExitsWith: .signal(SIGILL)) {  // a failed precondition traps
            let s = try RunningServer()
            let ws = try WSClient(port: s.port)
            try ws.sendText("hello")
            _ = try ws.readMessage()
            // The delegate hands a connection out of the loop (a bug): using it elsewhere traps.
            let conn = s.delegate.lastConnection.get()
            conn?.requestWritable()
        }
    }

    /// The same set-up with the access on the loop: the child exits normally, so the traps above are the checks.
    @Test func theSameOnTheLoopExitsNormally() async {
        await #expect(processExitsWith: .success) {
            let s = try RunningServer()
            let made = Locked<LoopBound<Int>?>(nil)
            let read = Locked<Int?>(nil)
            s.onLoop {
                let bound = LoopBound(41, on: s.server)
                made.set(bound)
                s.server.schedule(after: 0) { read.set(bound.value) }
            }
            #expect(waitUntil(3) { read.get() == 41 })
            #expect(s.stop() != nil)
        }
    }

    @Test func aLoopBoundValueReadFromAnotherThreadTraps() async {
        await #expect(processExitsWith: .signal(SIGILL)) {  // a failed precondition traps
            let s = try RunningServer()
            let made = Locked<LoopBound<Int>?>(nil)
            s.onLoop { made.set(LoopBound(41, on: s.server)) }
            #expect(waitUntil(3) { made.get() != nil })
            _ = made.get()!.value
        }
    }
    #endif

    @Test func onTheLoopEverythingPasses() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let result = Locked<Int?>(nil)
        s.onLoop {
            s.server.assertOnLoop()
            let bound = LoopBound(41, on: s.server)
            bound.value += 1
            s.server.schedule(after: 0) { result.set(bound.value) }
        }
        #expect(waitUntil(3) { result.get() == 42 })
    }

    @Test func beforeRunAndAfterItTheOwnerMayUseTheServer() throws {
        let delegate = TestDelegate()
        let options = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096)
        let server = try OpenSSLGate.creating(options.initialisesOpenSSL) { try LWSServer(options: options, delegate: delegate) }
        server.assertOnLoop()  // not running yet: the creating thread sets up
        let fired = Locked(false)
        server.schedule(after: 0) { fired.set(true) }
        let done = DispatchSemaphore(value: 0)
        let runner = Thread {
            server.run()
            done.signal()
        }
        runner.start()
        #expect(waitUntil(3) { fired.get() })
        server.requestStop()
        #expect(done.wait(timeout: .now() + 3) == .success)
        server.assertOnLoop()  // stopped: no loop thread any more
        #expect(server.isStopping)
    }
}
