import Foundation
import LanpushCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HA's REST API, off the loop thread: registrations (`POST /api/mobile_app/registrations`), the mobile_app
/// webhook (`update_registration`) and config entry removal. Every call returns at once; its completion runs
/// exactly once on a URLSession thread — hop to the loop with `LoopInbox.post` before touching anything.
final class HomeAssistantHTTP: Sendable {
    struct Response: Sendable {
        /// HTTP status; `nil` when there was no answer (`error` says why).
        var status: Int?
        var body: JSONValue?
        var error: String?

        var summary: String {
            if let error { return error }
            let text = body.map { String($0.serialized().prefix(200)) } ?? ""
            return "HTTP \(status ?? 0)\(text.isEmpty ? "" : ": \(text)")"
        }
    }

    private let session: URLSession
    private let token: String
    let timeout: Double

    init(token: String, timeout: Double = 10) {
        self.token = token
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        session = URLSession(configuration: configuration)
    }

    func shutdown() {
        session.invalidateAndCancel()
    }

    /// `method` `url` with the bearer token, `body` as JSON when given.
    func send(_ method: String, _ url: String, body: JSONValue? = nil, completion: @escaping @Sendable (Response) -> Void) {
        guard let target = URL(string: url) else {
            DispatchQueue.global().async { completion(Response(error: "invalid URL \(url)")) }
            return
        }
        var request = URLRequest(url: target, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("lanpush/\(LanpushVersion.current)", forHTTPHeaderField: "User-Agent")
        if let body {
            request.httpBody = Data(body.serializedBytes())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        session.dataTask(with: request) { data, response, error in
            if let http = response as? HTTPURLResponse, error == nil {
                let bytes = data.map { [UInt8]($0) } ?? []
                completion(Response(status: http.statusCode, body: bytes.isEmpty ? nil : try? JSONValue.parse(bytes)))
            } else {
                completion(Response(error: error.map { ($0 as? URLError)?.localizedDescription ?? "\($0)" } ?? "no HTTP answer"))
            }
        }.resume()
    }
}
