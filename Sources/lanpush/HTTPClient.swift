import Foundation
import LanpushClient
import LanpushCore

/// The gateway's address as given by `--gateway` / `$LANPUSH_GATEWAY`: `http(s)://host:port[/prefix]`
/// (a bare `host:port` means http; `ws(s)://` is accepted too).
struct GatewayAddress {
    let base: String  // scheme://host:port[/prefix], no trailing slash
    let secure: Bool
    /// How an https/wss gateway's certificate is checked (`--fingerprint`, `--insecure`; else the system's CAs).
    var tls: TLSPolicy = .system

    init(_ text: String) throws {
        var t = text.trimmingCharacters(in: .whitespaces)
        if !t.contains("://") { t = "http://" + t }
        guard let sep = t.range(of: "://") else { throw CLIError("invalid gateway URL '\(text)'") }
        let scheme = t[..<sep.lowerBound].lowercased()
        let rest = String(t[sep.upperBound...])
        switch scheme {
        case "http", "ws": secure = false
        case "https", "wss": secure = true
        default: throw CLIError("invalid gateway URL '\(text)': use http://HOST:PORT or https://HOST:PORT")
        }
        var trimmed = rest
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard !trimmed.isEmpty, URL(string: (secure ? "https://" : "http://") + trimmed) != nil else {
            throw CLIError("invalid gateway URL '\(text)'")
        }
        base = (secure ? "https://" : "http://") + trimmed
    }

    func http(_ path: String) -> String { base + path }

    /// The lanpush.v1 stream URL.
    var stream: String {
        (secure ? "wss://" : "ws://") + base.dropFirst(secure ? 8 : 7) + "/v1/stream"
    }
}

/// What the gateway answered.
struct HTTPAnswer {
    var status: Int
    var body: Data

    var json: JSONValue? { try? JSONValue.parse(Array(body)) }

    /// The server's `message` (docs/PROTOCOL.md: every error is `{"message","field","rule"}`), or the raw text.
    var errorMessage: String {
        if let o = json?.objectValue, let m = o["message"]?.stringValue ?? o["errorMessage"]?.stringValue {
            return m
        }
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "(no body)" : String(text.prefix(200))
    }
}

/// Blocking requests for the CLI (a command is synchronous; the request runs on the client library's NIO event loop,
/// the transport `watch` and `send --stream` use, so a pinned certificate is checked the same way for both).
enum HTTP {
    static func request(
        _ method: String, _ url: String, token: String?, json body: JSONValue? = nil, tls: TLSPolicy = .system,
        timeout: Int64 = 10
    ) throws -> HTTPAnswer {
        guard let target = URL(string: url), target.host != nil else { throw CLIError("invalid URL \(url)") }
        let result = Blocking.wait {
            try await PlatformTransport().request(method, to: target, bearer: token, body: body, tls: tls, timeout: timeout)
        }
        switch result {
        case .success(let answer): return HTTPAnswer(status: answer.status, body: Data(answer.body))
        case .failure(let error): throw CLIError("cannot reach the gateway at \(url): \(error)")
        }
    }

    /// GET that must answer 200 with JSON; anything else is a one-line error.
    static func getJSON(_ url: String, token: String?, tls: TLSPolicy = .system) throws -> JSONValue {
        let answer = try request("GET", url, token: token, tls: tls)
        guard answer.status == 200 else {
            throw CLIError("\(url) answered \(answer.status): \(answer.errorMessage)")
        }
        guard let json = answer.json else { throw CLIError("\(url) answered something that is not JSON") }
        return json
    }
}

/// Runs async work to its end from synchronous code (an `async` function's result handed across a semaphore).
enum Blocking {
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { box.result = .success(try await work()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        return box.result ?? .failure(CLIError("no result"))
    }

    /// Written once by the task before it signals, read once after the wait: the semaphore orders the two.
    private final class ResultBox<T>: @unchecked Sendable {
        var result: Result<T, any Error>?
    }
}
