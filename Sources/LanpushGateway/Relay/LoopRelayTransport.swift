import LanpushCore

/// The relay hand-over's transport: `RelayClient` off the loop, answers brought back through the loop inbox.
final class LoopRelayTransport: RelayTransport {
    let client: RelayClient
    let inbox: LoopInbox

    init(client: RelayClient, inbox: LoopInbox) {
        self.client = client
        self.inbox = inbox
    }

    func send(_ item: RelayItem, completion: @escaping (RelayResponse) -> Void) {
        let callback = inbox.bound(completion)
        let inbox = self.inbox
        client.send(item) { response in inbox.post { callback.value(response) } }
    }

    func shutdown() {
        client.shutdown()
    }
}
