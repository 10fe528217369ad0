import Foundation
import LanpushCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The gateway's address as given by `--gateway` / `$LANPUSH_GATEWAY`: `http(s)://host:port[/prefix]`
/// (a bare `host:port` means http; `ws(s)://` is accepted too).
struct GatewayAddress {
    let base: String  // scheme://host:port[/prefix], no trailing slash
    let secure: Bool

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

    /// The server's `message` (DESIGN §10: every error is `{"message","field","rule"}`), or the raw text.
    var errorMessage: String {
        if let o = json?.objectValue, let m = o["message"]?.stringValue ?? o["errorMessage"]?.stringValue {
            return m
        }
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? HTTPURLResponse.localizedString(forStatusCode: status) : String(text.prefix(200))
    }
}

/// A blocking HTTP client over URLSession (the CLI runs no event loop of its own for HTTP).
enum HTTP {
    static func request(
        _ method: String, _ url: String, token: String?, json body: JSONValue? = nil, timeout: Double = 10
    ) throws -> HTTPAnswer {
        guard let u = URL(string: url) else { throw CLIError("invalid URL \(url)") }
        var request = URLRequest(url: u, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token, !token.isEmpty { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.serializedBytes())
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { data, response, error in
            box.data = data
            box.status = (response as? HTTPURLResponse)?.statusCode
            box.error = error
            done.signal()
        }.resume()
        done.wait()
        if let error = box.error {
            throw CLIError("cannot reach the gateway at \(url): \(describe(error))")
        }
        guard let status = box.status else { throw CLIError("no HTTP answer from \(url)") }
        return HTTPAnswer(status: status, body: box.data ?? Data())
    }

    /// GET that must answer 200 with JSON; anything else is a one-line error.
    static func getJSON(_ url: String, token: String?) throws -> JSONValue {
        let answer = try request("GET", url, token: token)
        guard answer.status == 200 else {
            throw CLIError("\(url) answered \(answer.status): \(answer.errorMessage)")
        }
        guard let json = answer.json else { throw CLIError("\(url) answered something that is not JSON") }
        return json
    }

    private static func describe(_ error: Error) -> String {
        guard let e = error as? URLError else { return "\(error)" }
        switch e.code {
        case .cannotConnectToHost: return "connection refused"
        case .timedOut: return "timed out"
        case .cannotFindHost, .dnsLookupFailed: return "unknown host"
        case .networkConnectionLost: return "connection lost"
        case .notConnectedToInternet: return "network unreachable"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return "TLS failed (certificate not trusted?)"
        case .badServerResponse: return "bad HTTP answer"
        default: return "URL error \(e.code.rawValue)"
        }
    }
}

/// Written by URLSession's delegate queue before the semaphore is signalled; read after the wait.
private final class ResultBox: @unchecked Sendable {
    var data: Data?
    var status: Int?
    var error: Error?
}
