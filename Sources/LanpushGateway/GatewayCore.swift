import Foundation
import LanpushCore
import LanpushStore
import Logging

/// The gateway's loop-owned state, in its parts, wired once: who may connect (`directory`, `access`), the one way
/// in (`ingest`, `activityCommands`), the sessions and their protocol, the relay hand-over, the journal of what must
/// be stored, and what time does (`housekeeping`). Every part is touched on the loop thread only.
///
/// The HTTP layer (`router`) turns the parts' domain outcomes into status codes and JSON; nothing below it speaks
/// HTTP. The testing module builds one of these with a manual clock and a recording transport.
final class GatewayCore {
    let config: GatewayConfig
    let clock: () -> Double
    let logger: Logger
    let metrics: GatewayMetrics
    /// The epoch given to devices whose sequence could not be trusted at start (new, or an unclean stop).
    let epoch: String
    let directory: DeviceDirectory
    let journal: Journal
    let sessions: SessionRegistry
    let relay: RelayHandOver
    let report: DeviceReport
    let ingest: Ingest
    let activityCommands: ActivityCommands
    let sessionProtocol: SessionProtocol
    let housekeeping: Housekeeping
    let ingestEndpoints: IngestEndpoints
    let router: Router

    init(
        config: GatewayConfig, clock: @escaping () -> Double, logger: Logger, metrics: GatewayMetrics = GatewayMetrics(),
        stored: StoredState? = nil, persist: Journal.Persist? = nil, renderMetrics: @escaping () -> String = { "" },
        page: @escaping (String) -> (contentType: String, body: [UInt8])? = { _ in nil }
    ) {
        self.config = config
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        let epoch = UUID().uuidString.lowercased()
        self.epoch = epoch
        let directory = DeviceDirectory(config: config, stored: stored, epoch: epoch)
        self.directory = directory
        let journal = Journal(persist: persist)
        self.journal = journal
        let sessions = SessionRegistry(metrics: metrics, logger: logger)
        self.sessions = sessions
        let relay = RelayHandOver(
            config: config.relay, directory: directory, journal: journal, metrics: metrics, logger: logger, clock: clock)
        self.relay = relay
        let report = DeviceReport(sessions: sessions, relay: relay, clock: clock)
        self.report = report
        let ingest = Ingest(directory: directory, sessions: sessions, relay: relay, journal: journal, metrics: metrics, logger: logger)
        self.ingest = ingest
        activityCommands = ActivityCommands(directory: directory, sessions: sessions, journal: journal, clock: clock)
        sessionProtocol = SessionProtocol(
            config: config, directory: directory, sessions: sessions, journal: journal, relay: relay, report: report,
            metrics: metrics, logger: logger, clock: clock)
        housekeeping = Housekeeping(
            config: config.session, directory: directory, sessions: sessions, journal: journal, relay: relay, ingest: ingest,
            clock: clock)
        ingestEndpoints = IngestEndpoints(
            ingest: ingest, relay: relay, quota: config.relay.quota, metrics: metrics, clock: clock,
            allDevices: { directory.sorted.map(\.id) })
        router = Router(
            ingest: ingestEndpoints,
            state: StateEndpoints(activities: activityCommands, directory: directory, report: report, sessions: sessions, epoch: epoch),
            access: AccessControl(config: config), openMetrics: config.openMetrics, metrics: metrics, logger: logger,
            renderMetrics: renderMetrics, page: page)
        for device in directory.sorted { journal.record(device: device) }
        relay.restore(stored?.outbox ?? [])
    }

    /// A session's socket can take data.
    func writable(session id: UInt64) {
        guard let session = sessions[id], !session.closing else { return }
        SessionWriter(directory: directory, metrics: metrics).writable(session, now: clock())
    }
}
