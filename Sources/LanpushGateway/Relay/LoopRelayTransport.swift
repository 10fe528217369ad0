import LanpushCore

/// The relay hand-over's transport: `RelayClient` off the loop (or, for a device that falls back through Home
/// Assistant, its notify action), answers brought back through the loop inbox.
final class LoopRelayTransport: RelayTransport {
    let client: RelayClient
    let actions: HomeAssistantActions?
    let inbox: LoopInbox

    init(client: RelayClient, actions: HomeAssistantActions? = nil, inbox: LoopInbox) {
        self.client = client
        self.actions = actions
        self.inbox = inbox
    }

    func send(_ item: RelayItem, completion: @escaping (RelayResponse) -> Void) {
        let callback = inbox.bound(completion)
        let inbox = self.inbox
        let answer: @Sendable (RelayResponse) -> Void = { response in inbox.post { callback.value(response) } }
        if item.action != nil, let actions {
            actions.send(item, completion: answer)
        } else {
            client.send(item, completion: answer)
        }
    }

    func shutdown() {
        client.shutdown()
        actions?.shutdown()
    }
}
