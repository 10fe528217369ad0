import Foundation
import LanpushCore
import LanpushHTTPClient

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

    /// The server's `message` (docs/PROTOCOL.md: every error is `{"message","field","rule"}`), or the raw text.
    var errorMessage: String {
        if let o = json?.objectValue, let m = o["message"]?.stringValue ?? o["errorMessage"]?.stringValue {
            return m
        }
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? HTTPURLResponse.localizedString(forStatusCode: status) : String(text.prefix(200))
    }
}

/// Blocking requests for the CLI (it runs no event loop of its own for HTTP), over the shared `JSONHTTPClient`.
enum HTTP {
    static func request(
        _ method: String, _ url: String, token: String?, json body: JSONValue? = nil, timeout: Double = 10
    ) throws -> HTTPAnswer {
        let client = JSONHTTPClient(timeout: timeout, bearer: token)
        defer { client.shutdown() }
        let response = client.sendAndWait(method, url, body: body)
        if case .invalidURL? = response.failure { throw CLIError("invalid URL \(url)") }
        if let failure = response.failure {
            throw CLIError("cannot reach the gateway at \(url): \(failure)")
        }
        guard let status = response.status else { throw CLIError("no HTTP answer from \(url)") }
        return HTTPAnswer(status: status, body: Data(response.bytes))
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
}
