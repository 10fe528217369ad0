#if canImport(Darwin)
import Foundation
import LanpushCore
import Security

/// The transport on Apple platforms: `URLSessionWebSocketTask` and `URLSession` for pairing's POST, with the pinned
/// certificate checked in the session delegate's server-trust challenge. (Not built by this repository's CI, which
/// runs on Linux: see docs/CLIENTS.md.)
public struct PlatformTransport: LanpushTransport {
    public init() {}

    public func connect(to url: URL, subprotocols: [String], tls: TLSPolicy) async throws -> any WebSocketConnection {
        let delegate = TrustDelegate(policy: tls)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        let task = session.webSocketTask(with: url, protocols: subprotocols)
        task.maximumMessageSize = 16 << 20
        let connection = URLSessionWebSocketConnection(task: task, session: session)
        delegate.connection = connection
        task.resume()
        try await delegate.opened()
        connection.receive()
        return connection
    }

    public func post(to url: URL, body: JSONValue, tls: TLSPolicy) async throws -> (status: Int, body: JSONValue?) {
        let delegate = TrustDelegate(policy: tls)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.serializedBytes())
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, data.isEmpty ? nil : try? JSONValue.parse([UInt8](data)))
    }
}

/// One WebSocket task: received messages go to the inbox; the close code and reason come from the task.
final class URLSessionWebSocketConnection: WebSocketConnection, @unchecked Sendable {
    let task: URLSessionWebSocketTask
    let session: URLSession
    let inbox = TransportInbox()

    init(task: URLSessionWebSocketTask, session: URLSession) {
        self.task = task
        self.session = session
    }

    /// One receive at a time, re-armed after each message (the task's API).
    func receive() {
        task.receive { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.string(let text)):
                self.inbox.push(text)
                self.receive()
            case .success(.data(let data)):
                self.inbox.push(String(decoding: data, as: UTF8.self))
                self.receive()
            case .success:
                self.receive()
            case .failure(let error):
                self.closed(error: error)
            }
        }
    }

    func closed(error: (any Error)?) {
        let code = task.closeCode == .invalid ? nil : task.closeCode.rawValue
        let reason = task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? error.map { "\($0.localizedDescription)" } ?? ""
        inbox.finish(code: code, reason: reason)
        session.invalidateAndCancel()
    }

    func send(_ text: String) async throws {
        try await task.send(.string(text))
    }

    func close(code: Int, reason: String) async {
        task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .normalClosure, reason: Data(reason.utf8))
    }
}

/// Server trust per `TLSPolicy`, and the open / close callbacks of a WebSocket task.
final class TrustDelegate: NSObject, URLSessionWebSocketDelegate, @unchecked Sendable {
    let policy: TLSPolicy
    weak var connection: URLSessionWebSocketConnection?
    private let lock = NSLock()
    private var openWaiter: CheckedContinuation<Void, any Error>?
    private var openResult: Result<Void, any Error>?

    init(policy: TLSPolicy) {
        self.policy = policy
    }

    func opened() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result: Result<Void, any Error>? = lock.withLock {
                if openResult == nil { openWaiter = continuation }
                return openResult
            }
            if let result { continuation.resume(with: result) }
        }
    }

    private func settle(_ result: Result<Void, any Error>) {
        let waiter: CheckedContinuation<Void, any Error>? = lock.withLock {
            guard openResult == nil else { return nil }
            openResult = result
            defer { openWaiter = nil }
            return openWaiter
        }
        waiter?.resume(with: result)
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        settle(.success(()))
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didCloseWith closeCode: URLSessionWebSocketTask.CloseCode,
        reason: Data?
    ) {
        connection?.inbox.finish(code: closeCode.rawValue, reason: reason.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        settle(.failure(error ?? TransportError("the WebSocket did not open")))
        connection?.closed(error: error)
    }

    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
            let trust = challenge.protectionSpace.serverTrust
        else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        switch policy {
        case .system:
            completionHandler(.performDefaultHandling, nil)
        case .insecure:
            completionHandler(.useCredential, URLCredential(trust: trust))
        case .pinned(let expected):
            let chain = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
            if let leaf = chain.first,
                CertificatePin.matches(der: [UInt8](SecCertificateCopyData(leaf) as Data), sha256: expected)
            {
                completionHandler(.useCredential, URLCredential(trust: trust))
            } else {
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        }
    }
}
#endif
