import LanpushCore
import LanpushHTTPClient

/// HA's REST API as the link uses it: registrations, config entries and the mobile_app webhook. Requests leave off
/// the loop (`JSONHTTPClient`); every answer comes back on the loop thread through the `LoopInbox`.
final class HomeAssistantREST {
    typealias Response = JSONHTTPClient.Response

    private let http: JSONHTTPClient
    private let restBase: String
    private let inbox: LoopInbox

    /// `nil` without a token (the link then does not connect at all).
    init?(settings: HomeAssistantSettings, inbox: LoopInbox) {
        guard let token = settings.token else { return nil }
        http = JSONHTTPClient(timeout: 10, bearer: token)
        restBase = settings.restBase
        self.inbox = inbox
    }

    /// `method` `<HA>/api<path>`; `then` runs on the loop thread.
    func send(_ method: String, _ path: String, body: JSONValue? = nil, then: @escaping (Response) -> Void) {
        let bound = inbox.bound(then)
        let inbox = self.inbox
        http.send(method, restBase + path, body: body) { response in
            inbox.post { bound.value(response) }
        }
    }

    /// One call of the mobile_app webhook (`POST /api/webhook/<webhook_id>` with `{"type","data"}`): how a registered
    /// app updates its registration and sensors. HA answers an unknown webhook_id or type with 200 and `{}` or no
    /// body, so each caller checks the answer's content, not only its status.
    func webhook(_ webhookId: String, _ type: String, _ data: JSONValue, then: @escaping (Response) -> Void) {
        send("POST", "/webhook/\(webhookId)", body: ["type": .string(type), "data": data], then: then)
    }

    /// Cancels whatever is in flight (the server is stopping).
    func shutdown() {
        http.shutdown()
    }
}
