import Foundation
import LanpushCore
import Testing

@testable import LanpushGateway

#if canImport(Glibc)
import Glibc
#endif

/// `RelayClient` against a tiny HTTP/1.1 server on loopback that records requests and answers per script.
@Suite(.serialized) struct RelayClientTests {
    static let body: JSONValue = [
        "message": "Cycle started", "title": "Washing Machine",
        "data": ["tag": "washer_cycle", "live_update": true, "progress": 900, "progress_max": 3600],
        "push_token": "relay-token-1",
        "registration_info": ["app_id": "io.robbie.HomeAssistant", "app_version": "2024.1", "webhook_id": "hook-1"],
    ]

    static let created = #"{"messageId":"m1","target":"relay-token-1","rateLimits":{"attempts":3,"successful":2,"errors":1,"total":3,"maximum":500,"remaining":498,"resetsAt":"2023-11-15T00:00:00.000Z"}}"#

    /// Posts and waits for the completion (which must come exactly once).
    static func post(
        _ client: RelayClient, _ body: JSONValue = body, to url: String, wait: Double = 10
    ) -> RelayResponse? {
        let box = Box<[RelayResponse]>([])
        client.post(body, to: url) { response in box.update { $0.append(response) } }
        let deadline = Date().addingTimeInterval(wait)
        while box.get().isEmpty, Date() < deadline { usleep(2_000) }
        usleep(20_000)
        let responses = box.get()
        #expect(responses.count == 1)
        return responses.first
    }

    @Test func postsTheJSONBodyWithLanpushsHeadersAndReadsTheRateLimits() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.script(.init(status: 201, body: Self.created))
        let client = RelayClient(timeout: 5, reachable: [server.url("/")])
        defer { client.shutdown() }
        let response = try #require(Self.post(client, to: server.url("/api/sendPushNotification")))

        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/api/sendPushNotification")
        #expect(request.header("content-type") == "application/json")
        #expect(request.header("user-agent") == "lanpush/\(LanpushVersion.current)")
        #expect(try JSONValue.parse(request.body) == Self.body)

        #expect(response.status == 201)
        #expect(response.error == nil)
        #expect(response.body?["messageId"] == "m1")
        #expect(response.rateLimits.remaining == 498)
        #expect(response.rateLimits.maximum == 500)
        #expect(response.rateLimits.resetsAt == 1_700_006_400)
        #expect(response.rateLimits.json?["successful"] == 2)
        #expect(response.outcome == .success(remaining: 498, resetsAt: 1_700_006_400))
        #expect(response.duration >= 0 && response.duration < 5)
    }

    @Test func theAndroidPathAndAnItemWork() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.script(.init(status: 201, body: Self.created))
        let client = RelayClient(timeout: 5, reachable: [server.url("/")])
        defer { client.shutdown() }
        let item = RelayItem(
            device: "phone", tag: "washer_cycle", kind: .update, url: server.url("/api/sendPush/android/v1"),
            body: Self.body, seq: 7)
        let box = Box<RelayResponse?>(nil)
        client.send(item) { response in box.set(response) }
        #expect(waitFor(5) { box.get() != nil })
        #expect(server.requests.first?.path == "/api/sendPush/android/v1")
        #expect(box.get()?.outcome == .success(remaining: 498, resetsAt: 1_700_006_400))
    }

    @Test(arguments: [
        (429, #"{"errorType":"RateLimited","message":"Too many","target":"t","rateLimits":{"attempts":501,"successful":500,"errors":1,"total":501,"maximum":500,"remaining":0,"resetsAt":"2023-11-15T00:00:00.000Z"}}"#,
         RelayOutcome.rateLimited(resetsAt: 1_700_006_400)),
        (403, #"{"errorMessage":"You did not send a token!"}"#, .forbidden),
        (500, #"{"errorType":"InternalError","message":"boom"}"#, .failed),
        (502, "<html>bad gateway</html>", .failed),
        (400, #"{"errorMessage":"bad"}"#, .rejected(status: 400)),
        (200, "OK", .success(remaining: nil, resetsAt: nil)),
    ])
    func answersMapToOutcomes(status: Int, body: String, outcome: RelayOutcome) throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.script(.init(status: status, body: body))
        let client = RelayClient(timeout: 5, reachable: [server.url("/")])
        defer { client.shutdown() }
        let response = try #require(Self.post(client, to: server.url("/api/sendPushNotification")))
        #expect(response.status == status)
        #expect(response.error == nil)
        #expect(response.outcome == outcome)
        if status == 429 { #expect(response.rateLimits.remaining == 0) }
        if body.first != "{" { #expect(response.body == nil) }
    }

    @Test func aSlowRelayTimesOutAndCountsAsAFailure() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.script(.init(status: 201, body: Self.created, delay: 3))
        let client = RelayClient(timeout: 0.5, reachable: [server.url("/")])
        defer { client.shutdown() }
        let started = Date()
        let response = try #require(Self.post(client, to: server.url("/api/sendPushNotification")))
        let waited = Date().timeIntervalSince(started)
        #expect(response.error == .timeout)
        #expect(response.status == nil)
        #expect(response.outcome == .failed)
        #expect(waited >= 0.45 && waited < 2)
    }

    @Test func aRelayThatIsNotListeningIsANetworkFailure() throws {
        let server = try LoopbackHTTPServer()
        let url = server.url("/api/sendPushNotification")
        server.stop()
        let client = RelayClient(timeout: 5, reachable: [server.url("/")])
        defer { client.shutdown() }
        let response = try #require(Self.post(client, to: url))
        guard case .network = response.error else {
            Issue.record("expected a network error, got \(String(describing: response.error))")
            return
        }
        #expect(response.outcome == .failed)
        #expect(response.duration < 4)
    }

    @Test func aConnectionClosedWithoutAnAnswerIsANetworkFailure() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.script(.init(dropConnection: true))
        let client = RelayClient(timeout: 5, reachable: [server.url("/")])
        defer { client.shutdown() }
        let response = try #require(Self.post(client, to: server.url("/api/sendPushNotification")))
        #expect(response.status == nil)
        #expect(response.error != nil)
        #expect(response.outcome == .failed)
    }

    @Test func anInvalidURLIsReportedWithoutARequest() throws {
        let client = RelayClient(timeout: 1)
        defer { client.shutdown() }
        for url in ["not a url", "ftp://relay.test/x", "/api/sendPushNotification"] {
            let response = try #require(Self.post(client, to: url))
            #expect(response.error == .invalidURL(url))
            #expect(response.outcome == .failed)
        }
    }

    /// The session is made at the first request; a client shut down before any (a gateway stopping that never
    /// needed the relay) sends nothing afterwards and answers at once.
    @Test func aClientShutDownSendsNothingAndAnswersAtOnce() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setDefault(.init(status: 201, body: Self.created))
        let client = RelayClient(timeout: 5, reachable: [server.url("/")])
        client.shutdown()
        let started = Date()
        let response = try #require(Self.post(client, to: server.url("/api/sendPushNotification"), wait: 2))
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(response.status == nil)
        #expect(response.error == .network("the HTTP client was shut down"))
        #expect(response.outcome == .failed)
        #expect(server.requests.isEmpty)
    }

    @Test func postNeverBlocksTheCallerAndRequestsRunConcurrently() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setDefault(.init(status: 201, body: Self.created, delay: 0.5))
        let client = RelayClient(timeout: 5, reachable: [server.url("/")])
        defer { client.shutdown() }
        let done = Box(0)
        let started = Date()
        for i in 0..<6 {
            client.post(["n": .number(Double(i)), "push_token": "t"], to: server.url("/api/sendPushNotification")) { r in
                if r.status == 201 { done.update { $0 += 1 } }
            }
        }
        #expect(Date().timeIntervalSince(started) < 0.2)
        #expect(waitFor(5) { done.get() == 6 })
        #expect(Date().timeIntervalSince(started) < 2.5)  // not one after the other (6 × 0.5 s)
        #expect(Set(server.requests.compactMap { try? JSONValue.parse($0.body)["n"] }).count == 6)
    }

    @Test(arguments: [
        (403, #"{"errorMessage":"You did not send a token!"}"#, RelayOutcome.forbidden),
        (403, #"{"errorMessage":"That is not a valid FCM token"}"#, .forbidden),
        // FCM's "not registered" / "invalid registration token": a dead token, never a retry.
        (500, #"{"errorType":"InvalidToken","errorCode":"registration-token-not-registered","errorStep":"sendNotification","message":"x"}"#,
         .forbidden),
        // Every FCM invalid-argument, too large or malformed: this message can never go.
        (500, #"{"errorType":"PayloadTooLarge","errorCode":"invalid-argument","errorStep":"sendNotification","message":"x"}"#,
         .payloadTooLarge),
        (500, #"{"errorType":"InternalError","errorStep":"sendNotification","message":"x"}"#, .failed),
        (500, #"{"statusCode":500,"error":"Internal Server Error","message":"x"}"#, .failed),
        (503, "", .failed),
        (508, #"{"field":"x-lanpush-hop","rule":"loop"}"#, .rejected(status: 508)),
    ])
    func answersMapAsTheRelayMeansThem(status: Int, body: String, outcome: RelayOutcome) throws {
        let parsed = body.isEmpty ? nil : try JSONValue.parse(Array(body.utf8))
        #expect(RelayOutcome(status: status, body: parsed) == outcome)
    }

    /// The relay's answers, as mobile-apps-fcm-push `functions/handlers.js` means them.
    @Test func statusesMapToOutcomes() {
        let limited: JSONValue = [
            "errorType": "RateLimited", "message": "Too many", "target": "t",
            "rateLimits": ["remaining": 0, "resetsAt": "2023-11-15T00:00:00Z"],
        ]
        let created: JSONValue = ["messageId": "m", "rateLimits": ["remaining": 498, "resetsAt": "2023-11-15T00:00:00.000Z"]]
        #expect(RelayOutcome(status: 201, body: created) == .success(remaining: 498, resetsAt: 1_700_006_400))
        #expect(RelayOutcome(status: 200, body: nil) == .success(remaining: nil, resetsAt: nil))
        #expect(RelayOutcome(status: 202, body: ["x": 1]) == .success(remaining: nil, resetsAt: nil))
        #expect(RelayOutcome(status: 429, body: limited) == .rateLimited(resetsAt: 1_700_006_400))
        #expect(RelayOutcome(status: 429, body: nil) == .rateLimited(resetsAt: nil))
        #expect(RelayOutcome(status: 403, body: ["errorMessage": "You did not send a token!"]) == .forbidden)
        #expect(RelayOutcome(status: 400, body: nil) == .rejected(status: 400))
        #expect(RelayOutcome(status: 404, body: nil) == .rejected(status: 404))
        #expect(RelayOutcome(status: 408, body: nil) == .failed)
        #expect(RelayOutcome(status: 500, body: ["errorType": "InternalError", "message": "x"]) == .failed)
        #expect(RelayOutcome(status: 503, body: nil) == .failed)
        #expect(RelayOutcome(status: nil, body: nil) == .failed)
    }

    /// A push_url is a LAN device's to choose: a name that resolves to this machine (or a link-local or private one) is not
    /// connected to unless the URL is listed (the upstream, `relay.allowed_push_urls`), whatever the name says.
    @Test func aNameThatResolvesToLoopbackIsNotReachedUnlessListed() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setDefault(.init(status: 201, body: Self.created))
        let client = RelayClient(timeout: 5, gatewayId: "gw-1")
        defer { client.shutdown() }
        let refused = try #require(Self.post(client, to: "http://localhost:\(server.port)/api/sendPushNotification"))
        #expect(refused.status == nil && refused.outcome == .failed)
        #expect(refused.error?.description.contains("may not reach") == true)
        #expect(server.requests.isEmpty)

        let listed = RelayClient(timeout: 5, gatewayId: "gw-1", reachable: ["http://localhost:\(server.port)/api"])
        defer { listed.shutdown() }
        let answered = try #require(Self.post(listed, to: "http://localhost:\(server.port)/api/sendPushNotification"))
        #expect(answered.status == 201)
        // Every relayed request says which gateway relayed it: one that comes back is refused there.
        #expect(server.requests.first?.header(RelayClient.hopHeader) == "gw-1")
    }

    /// TLS verification is on: a self-signed certificate is refused before any HTTP is spoken.
    @Test func aSelfSignedCertificateIsRefused() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { return }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lanpush-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = dir.appendingPathComponent("key.pem").path
        let cert = dir.appendingPathComponent("cert.pem").path
        let gen = Process()
        gen.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        gen.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
        gen.standardOutput = FileHandle.nullDevice
        gen.standardError = FileHandle.nullDevice
        try gen.run()
        gen.waitUntilExit()
        try #require(gen.terminationStatus == 0)

        let port = try LoopbackHTTPServer.freePort()
        let tls = Process()
        tls.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        tls.arguments = ["s_server", "-quiet", "-accept", "127.0.0.1:\(port)", "-cert", cert, "-key", key, "-www"]
        tls.standardOutput = FileHandle.nullDevice
        tls.standardError = FileHandle.nullDevice
        tls.standardInput = FileHandle.nullDevice
        try tls.run()
        defer {
            // s_server ignores SIGTERM while it waits for a connection.
            kill(tls.processIdentifier, SIGKILL)
            tls.waitUntilExit()
        }
        #expect(waitFor(5) { LoopbackHTTPServer.canConnect(port: port) })

        let client = RelayClient(timeout: 5, reachable: ["https://127.0.0.1:\(port)"])
        defer { client.shutdown() }
        let response = try #require(Self.post(client, to: "https://127.0.0.1:\(port)/api/sendPushNotification"))
        #expect(response.status == nil)
        guard case .network = response.error else {
            Issue.record("expected a TLS failure, got \(String(describing: response.error)) / \(String(describing: response.status))")
            return
        }
        let message = response.error?.description.lowercased() ?? ""
        #expect(message.contains("certificate") || message.contains("ssl") || message.contains("tls"))
        #expect(response.outcome == .failed)
    }
}

// MARK: - Test support

/// A small thread-safe box.
final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func update<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}

func waitFor(_ timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// HTTP/1.1 on 127.0.0.1, one thread per connection, `Connection: close`. Answers per script, then the default.
final class LoopbackHTTPServer: @unchecked Sendable {
    struct Answer: Sendable {
        var status = 201
        var body = "{}"
        var delay: Double = 0
        var dropConnection = false
    }

    struct Request: Sendable {
        var method: String
        var path: String
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var scripted: [Answer] = []
    private var fallback = Answer()
    private var recorded: [Request] = []
    private var stopped = false

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    var requests: [Request] { lock.withLock { recorded } }

    func script(_ answers: Answer...) { lock.withLock { scripted.append(contentsOf: answers) } }

    func setDefault(_ answer: Answer) { lock.withLock { fallback = answer } }

    func stop() {
        let wasStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let thread = Thread { [self] in serve(fd) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        guard let request = Self.read(fd) else { return }
        let answer: Answer = lock.withLock {
            recorded.append(request)
            return scripted.isEmpty ? fallback : scripted.removeFirst()
        }
        if answer.delay > 0 { usleep(UInt32(answer.delay * 1_000_000)) }
        if answer.dropConnection {
            shutdown(fd, Int32(SHUT_RDWR))
            return
        }
        let body = Array(answer.body.utf8)
        let head = "HTTP/1.1 \(answer.status) Answer\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// Reads one request: headers up to the blank line, then `Content-Length` bytes.
    private static func read(_ fd: Int32) -> Request? {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        func fill() -> Bool {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
            data.append(contentsOf: buffer[0..<n])
            return true
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            guard fill() else { return nil }
            if data.count >= 4 {
                headerEnd = (0...(data.count - 4)).first { Array(data[$0..<($0 + 4)]) == separator }
            }
        }
        let headText = String(decoding: data[0..<headerEnd!], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        let headers: [(String, String)] = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
        var body = Array(data[(headerEnd! + 4)...])
        while body.count < length {
            let before = data.count
            guard fill() else { return nil }
            body.append(contentsOf: data[before...])
        }
        return Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, body: body)
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// A port nothing listens on right now (bound, then released).
    static func freePort() throws -> UInt16 {
        let server = try LoopbackHTTPServer()
        let port = server.port
        server.stop()
        return port
    }

    static func canConnect(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
