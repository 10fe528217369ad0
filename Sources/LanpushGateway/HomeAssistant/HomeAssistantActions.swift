import LanpushCore
import LanpushHTTPClient

/// The relay path of a device that falls back through Home Assistant itself (`devices[].fallback`): each paced,
/// coalesced relay item becomes a call of the device's notify action (`POST /api/services/notify/<name>` with the
/// notify service data), so HA's own companion-app registration, its Live Activity token bookkeeping
/// (home-assistant/core `mobile_app/live_activity`) and its relay do the rest. HA's answer is read as a relay's:
/// 2xx delivered; 400 and 404 (no such action, bad data) never will be; 401/403 (a token HA refuses), other 5xx,
/// timeouts and no network retried with backoff — the fallback works again once HA does. Off the loop; completions
/// through the caller's.
final class HomeAssistantActions: Sendable {
    private let http: JSONHTTPClient
    private let restBase: String

    init(restBase: String, token: String, timeout: Double = 10) {
        http = JSONHTTPClient(timeout: timeout, bearer: token)
        self.restBase = restBase
    }

    /// Calls the item's action (`RelayItem.action`, `notify.mobile_app_pixel`) with the notify data its body stands for.
    func send(_ item: RelayItem, completion: @escaping @Sendable (RelayResponse) -> Void) {
        guard let action = item.action, let dot = action.firstIndex(of: ".") else {
            return completion(RelayResponse(status: 400, body: ["message": "not a Home Assistant action"], duration: 0))
        }
        let path = "/services/\(action[..<dot])/\(action[action.index(after: dot)...])"
        http.send("POST", restBase + path, body: RelayAddress.notifyData(item.body)) { response in
            // HA's REST API says 401/403 for a token it refuses: not the push token's fault, so never "invalid".
            var status = response.status
            if status == 401 || status == 403 { status = 503 }
            completion(RelayResponse(status: status, body: nil, error: response.failure, duration: response.duration))
        }
    }

    func shutdown() {
        http.shutdown()
    }
}
