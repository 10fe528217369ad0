import LanpushCore
import Logging

/// HA's own Live Activity bookkeeping, fed from what lanpush's clients report — for an HA that has it
/// (`HomeAssistantVersion.liveActivityWebhooks`; older releases answer these webhooks with 200 `{}` and an error
/// in their log, and drop nothing useful, so they get none of it). Loop thread only.
///
/// Names as HA core's mobile_app defines them (live_activity/webhook.py and its tests), which HA's iOS app uses:
/// - a client's `live_activity_token` frame → webhook type `live_activity_token` with `tag`, `push_token`,
///   `expires_at` (HA requires it; a client that gave none gets the iOS app's 12 h);
/// - a client's `dismissed` frame → webhook type `live_activity_dismissed` with `tag`;
/// - the push-to-start token and `supports_live_activities` → the registration's `app_data`
///   (`start_live_activity_token`, `supports_live_activities`), through `update_registration` (the registrar).
final class HomeAssistantLiveActivities {
    /// What HA's iOS app gives a Live Activity token when it reports one: ActivityKit keeps an activity on the Lock
    /// Screen at most 12 h.
    static let defaultTokenLifetime: Double = 12 * 3600

    private let connection: HomeAssistantConnection
    private let rest: HomeAssistantREST
    private let registrar: HomeAssistantRegistrar
    private let core: GatewayCore
    private let logger: Logger
    weak var context: HomeAssistantLinkContext?

    init(connection: HomeAssistantConnection, rest: HomeAssistantREST, registrar: HomeAssistantRegistrar, core: GatewayCore, logger: Logger) {
        self.connection = connection
        self.rest = rest
        self.registrar = registrar
        self.core = core
        self.logger = logger
    }

    /// Whether the HA at the other end has the bookkeeping (by the version its websocket reported).
    var isSupported: Bool { HomeAssistantVersion.hasLiveActivityWebhooks(connection.haVersion) }

    /// A client of exposed device `d` reported something; HA hears of it only if it has the bookkeeping.
    func report(_ report: DeviceEvents.Report, device d: HomeAssistantDevice) {
        guard isSupported, let row = d.row else { return }
        switch report {
        case .liveActivityToken(let tag, let token, let expiresAt):
            let data: JSONValue = [
                "tag": .string(tag), "push_token": .string(token),
                "expires_at": .number(expiresAt ?? core.clock() + Self.defaultTokenLifetime),
            ]
            send(d, webhookId: row.webhookId, "live_activity_token", data)
        case .dismissed(let tag):
            send(d, webhookId: row.webhookId, "live_activity_dismissed", ["tag": .string(tag)])
        case .pushToStartToken, .capabilities:
            registrar.refresh(d)
        }
    }

    /// HA answers both with 200 `{}` (as it answers a webhook it does not know): the status is all there is to check.
    private func send(_ d: HomeAssistantDevice, webhookId: String, _ type: String, _ data: JSONValue) {
        rest.webhook(webhookId, type, data) { [weak self, weak d] response in
            guard let self, let d else { return }
            guard response.status == 200 else {
                d.lastError = "\(type) failed: \(response.summary)"
                self.logger.warning("HA-native mode: \(type) failed", metadata: ["device": "\(d.id)", "answer": "\(response.summary)"])
                self.context?.statusChanged(d)
                return
            }
            d.liveActivityCalls += 1
            self.core.metrics.haLiveActivityCalls.increment()
            self.logger.debug("Live Activity bookkeeping sent to Home Assistant", metadata: ["device": "\(d.id)", "type": "\(type)"])
        }
    }
}
