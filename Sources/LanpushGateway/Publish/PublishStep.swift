import LanpushCore
import Logging

/// The one step every door's changes of a device go through — the ingest, the activity commands of the API, what
/// time does (stale dates, dismissals, Apple's 8 h), and the frames of the device's own sessions (a dismissal on the
/// phone): the device's resume history is settled, the changes are journaled for the store, fanned out to the
/// device's sessions and observers, and handed over to the relay path as their door asks. Loop thread only.
struct PublishStep {
    /// What the relay path does with the changes.
    enum Relay {
        /// Nothing: changes the relay path has no part in (lifecycle, a dismissal on the phone itself).
        case none
        /// An accepted request's: its relay body kept for a later drain and, while the device is gone, relayed now
        /// (`built` is called only then). Returns through `relayed` whether anything went.
        case request(body: DeferredJSON, built: () -> RelayBody, url: String?)
        /// Ends the gateway made itself (the API's `DELETE`, Apple's 8 h ceiling): ended on the phone too.
        case gatewayEnds
    }

    let directory: DeviceDirectory
    let journal: Journal
    let sessions: SessionRegistry
    let relay: RelayHandOver
    let metrics: GatewayMetrics
    let logger: Logger

    /// Returns whether anything went to the relay now.
    @discardableResult
    func publish(_ changes: [Change], of device: DeviceRecord, relay how: Relay) -> Bool {
        directory.settleHistory(of: device)
        guard !changes.isEmpty else { return false }
        journal.record(changes, of: device)
        sessions.fanOut(changes, device: device)
        switch how {
        case .none:
            return false
        case .request(let body, let built, let url):
            return relay.handOver(changes, of: device, body: body, built: built, url: url)
        case .gatewayEnds:
            relay.ended(changes, of: device)
            return false
        }
    }
}
