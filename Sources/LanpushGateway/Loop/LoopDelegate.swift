import LanpushLWS

/// Bridges lws callbacks to the gateway's parts. Every loop turn ends in `loopTurnEnded()`, the one place where what
/// the turn changed goes to the store — whichever callback, timer or client connection changed it — and HTTP answers
/// and HA confirms wait for that commit. Loop thread only.
final class LoopDelegate: LWSServerDelegate {
    let core: GatewayCore
    let inbox: LoopInbox
    private var transports: [UInt64: WSTransport] = [:]

    init(core: GatewayCore, inbox: LoopInbox) {
        self.core = core
        self.inbox = inbox
    }

    /// Commits what this turn changed (accepted = committed: HTTP answers and HA confirms wait for it).
    func loopTurnEnded() {
        core.endTurn()
    }

    func tick() {
        core.tick()
    }

    func loopWoken() {
        inbox.drain()
    }

    func handleHTTP(_ request: HTTPRequest, _ response: HTTPResponse) {
        let answer = core.respond(to: request)
        core.whenCommitted { committed in
            guard committed else {
                let failed = APIResponse.storeFailed
                return response.respond(status: failed.status, body: failed.body)
            }
            response.respond(status: answer.status, headers: answer.headers, body: answer.body, contentType: answer.contentType)
        }
    }

    func rejectHTTP(_ rejection: HTTPRejection) -> [UInt8] {
        core.metrics.reject(APIResponse.rejectionReason(status: rejection.status))
        core.logger.info("rejected request", metadata: ["status": "\(rejection.status)", "reason": "\(rejection.rule)"])
        return rejection.defaultJSON
    }

    func wsUpgrade(_ request: HTTPRequest) -> HTTPRejection? {
        core.upgradeRefusal(request)
    }

    func wsOpened(_ connection: WSConnection, _ request: HTTPRequest) {
        let transport = WSTransport(connection)
        transports[connection.id] = transport
        core.openSession(id: connection.id, transport: transport)
    }

    func wsText(_ connection: WSConnection, _ bytes: [UInt8]) {
        core.receive(session: connection.id, bytes: bytes)
    }

    func wsWritable(_ connection: WSConnection) {
        core.writable(session: connection.id)
    }

    func wsClosed(_ connection: WSConnection) {
        transports.removeValue(forKey: connection.id)
        core.closeSession(id: connection.id)
    }
}
