import Foundation
import Histogram
import LanpushCore
import LanpushLWS

#if canImport(Glibc)
import Glibc
#endif

extension ClientHub {
    // MARK: Reconnect churn

    /// Closes `count` ready sessions (round robin) and opens each again as a new connection of the same device
    /// (a client that lost its connection and subscribes afresh).
    func churn(_ count: Int) {
        perform { [self] in
            var left = count
            var looked = 0
            while left > 0 && looked < sessions.count {
                let i = churnCursor % sessions.count
                churnCursor += 1
                looked += 1
                let old = sessions[i]
                guard old.ready, let c = old.connection else { continue }
                old.leaving = true
                c.close()
                let fresh = ClientSession(index: old.index, kind: old.kind)
                fresh.rejoining = true
                sessions[i] = fresh
                toConnect.append(fresh)
                left -= 1
            }
            pump()
        }
    }

    // MARK: Slow reader

    /// Starts processing backlogs at one frame per session per `interval` s.
    func startSlowTicks(interval: Double) {
        perform { [self] in
            slowInterval = interval
            tickSlow(interval)
        }
    }

    func tickSlow(_ interval: Double) {
        guard slowInterval != nil else { return }
        for s in sessions where !s.backlog.isEmpty {
            let frame = s.backlog.removeFirst()
            if s.isMQTT {
                frame.withUnsafeBytes { mqttPublish(s, $0, now: nowNanos(), fromBacklog: true) }
            } else {
                process(s, frame, now: nowNanos(), fromBacklog: true)
            }
        }
        loop.schedule(after: interval) { [weak self] in self?.tickSlow(interval) }
    }
}
