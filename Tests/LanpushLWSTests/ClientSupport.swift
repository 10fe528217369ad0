import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LanpushLWS

/// Records what a client connection reports; sends queued frames when writable. Callbacks run on the
/// loop thread; the test thread reads the `Locked` boxes.
final class RecordingClient: WSClientDelegate, @unchecked Sendable {
    let opened = Locked(false)
    let subprotocol = Locked<String?>(nil)
    let texts = Locked<[String]>([])
    let closed = Locked<(code: UInt16?, reason: String)?>(nil)
    let failed = Locked<WSClientError?>(nil)
    let terminalCalls = Locked(0)
    let noDelay = Locked<Bool?>(nil)

    // Loop-thread only.
    var outbox: [[UInt8]] = []
    var onOpen: ((WSClientConnection) -> Void)?
    var onText: ((WSClientConnection, String) -> Void)?

    init(sendOnOpen: [String] = []) {
        outbox = sendOnOpen.map { Array($0.utf8) }
    }

    func queue(_ connection: WSClientConnection, _ text: String) {
        outbox.append(Array(text.utf8))
        connection.requestWritable()
    }

    func wsClientOpened(_ connection: WSClientConnection) {
        var flag: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(connection.socketFD, Int32(IPPROTO_TCP), TCP_NODELAY, &flag, &len)
        noDelay.set(flag != 0)
        subprotocol.set(connection.subprotocol)
        opened.set(true)
        if !outbox.isEmpty { connection.requestWritable() }
        onOpen?(connection)
    }

    func wsClientText(_ connection: WSClientConnection, _ bytes: [UInt8]) {
        let s = String(decoding: bytes, as: UTF8.self)
        texts.update { $0.append(s) }
        onText?(connection, s)
    }

    func wsClientWritable(_ connection: WSClientConnection) {
        while !outbox.isEmpty && !connection.isChoked {
            let frame = outbox.removeFirst()
            if !connection.send(frame) { return }
        }
        if !outbox.isEmpty { connection.requestWritable() }
    }

    func wsClientClosed(_ connection: WSClientConnection, code: UInt16?, reason: String) {
        #expect(!connection.isOpen)
        #expect(!connection.send([1]))
        terminalCalls.update { $0 += 1 }
        closed.set((code, reason))
    }

    func wsClientConnectFailed(_ connection: WSClientConnection, error: WSClientError) {
        #expect(!connection.isOpen)
        terminalCalls.update { $0 += 1 }
        failed.set(error)
    }

    var isDone: Bool { terminalCalls.get() > 0 }
}

/// A ``WSClientLoop`` running on a background thread, with a way to run code on its loop.
final class RunningClientLoop: @unchecked Sendable {
    let loop: WSClientLoop
    private let finished = DispatchSemaphore(value: 0)
    private let queue = Locked<[() -> Void]>([])
    let wakes = Locked(0)

    init(_ options: WSClientOptions = WSClientOptions(), start: Bool = true) throws {
        // A client loop's context always initialises OpenSSL (wss:// needs nothing more than the URL).
        loop = try OpenSSLGate.creating(true) { try WSClientLoop(options: options) }
        let queue = self.queue
        let wakes = self.wakes
        loop.onWake = {
            wakes.update { $0 += 1 }
            let work = queue.update { q -> [() -> Void] in
                defer { q.removeAll() }
                return q
            }
            for body in work { body() }
        }
        if start { self.start() }
    }

    func start() {
        let loop = self.loop
        let done = finished
        Thread {
            loop.run()
            done.signal()
        }.start()
    }

    /// Runs `body` on the loop thread (through wake + onWake).
    func onLoop(_ body: @escaping () -> Void) {
        queue.update { $0.append(body) }
        loop.wake()
    }

    /// Runs `body` on the loop thread and waits for its result.
    func sync<T>(_ body: @escaping () -> T) -> T? {
        let result = Locked<T?>(nil)
        let sem = DispatchSemaphore(value: 0)
        onLoop {
            result.set(body())
            sem.signal()
        }
        guard sem.wait(timeout: .now() + 3) == .success else { return nil }
        return result.get()
    }

    /// Requests a stop and waits (bounded) for `run()` to return; the seconds it took, or nil on timeout.
    @discardableResult
    func stop(timeout: Double = 3) -> Double? {
        let t0 = Date()
        loop.requestStop()
        guard finished.wait(timeout: .now() + timeout) == .success else { return nil }
        return Date().timeIntervalSince(t0)
    }

    func waitForRun(timeout: Double) -> Bool {
        finished.wait(timeout: .now() + timeout) == .success
    }
}

/// A plain server delegate for hosting client connections on an ``LWSServer`` loop: every HTTP request
/// gets 404; `loopWoken` drains a queue of closures (the test's way onto the loop).
final class ClientHostDelegate: LWSServerDelegate, @unchecked Sendable {
    let queue = Locked<[() -> Void]>([])

    func handleHTTP(_ request: HTTPRequest, _ response: HTTPResponse) {
        response.respond(status: 404, json: #"{"message":"not found"}"#)
    }
    func wsOpened(_ connection: WSConnection, _ request: HTTPRequest) {}
    func wsText(_ connection: WSConnection, _ bytes: [UInt8]) {}
    func wsWritable(_ connection: WSConnection) {}
    func wsClosed(_ connection: WSConnection) {}
    func loopWoken() {
        let work = queue.update { q -> [() -> Void] in
            defer { q.removeAll() }
            return q
        }
        for body in work { body() }
    }
}

/// An ``LWSServer`` whose loop hosts client connections, running on a background thread.
final class RunningHost: @unchecked Sendable {
    let server: LWSServer
    let delegate = ClientHostDelegate()
    private let finished = DispatchSemaphore(value: 0)

    init(tlsClients: Bool = false) throws {
        let options = LWSServerOptions(host: "127.0.0.1", port: 0, fdLimitPerThread: 4096, tlsClients: tlsClients)
        let delegate = self.delegate
        server = try OpenSSLGate.creating(options.initialisesOpenSSL) { try LWSServer(options: options, delegate: delegate) }
    }

    func start() {
        let server = self.server
        let done = finished
        Thread {
            server.run()
            done.signal()
        }.start()
    }

    func onLoop(_ body: @escaping () -> Void) {
        delegate.queue.update { $0.append(body) }
        server.wake()
    }

    @discardableResult
    func stop(timeout: Double = 3) -> Double? {
        let t0 = Date()
        server.requestStop()
        guard finished.wait(timeout: .now() + timeout) == .success else { return nil }
        return Date().timeIntervalSince(t0)
    }
}

/// A TCP port on 127.0.0.1 with nothing listening (bound once, then released).
func unusedPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = 0
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Int32 in
            bind(fd, p, len)
            return getsockname(fd, p, &len)
        }
    }
    return Int(UInt16(bigEndian: addr.sin_port))
}

/// A listening TCP socket on 127.0.0.1 that accepts into its backlog but never answers: a handshake
/// against it stays pending.
final class SilentListener {
    let fd: Int32
    let port: Int

    init() {
        let sock = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Int32 in
                bind(sock, p, len)
                listen(sock, 8)
                return getsockname(sock, p, &len)
            }
        }
        fd = sock
        port = Int(UInt16(bigEndian: addr.sin_port))
    }

    deinit { close(fd) }
}
