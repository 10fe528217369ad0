@testable import LanpushCore

/// A LAN client as docs/PROTOCOL.md describes one: applies frames, checks their order, remembers its seq.
struct ClientModel {
    struct Held: Equatable {
        var state: ContentState
        var phase: ActivityPhase
        var title: String
    }

    var activities: [String: Held] = [:]
    var notifications: [UInt64] = []
    var lastSeq: UInt64 = 0
    var epoch: String?
    var frames = 0
    var violations: [String] = []

    mutating func receive(_ event: OutboundEvent) {
        frames += 1
        let json = event.json
        if case .notificationsDropped = event { return }  // carries no seq of its own
        let seq = UInt64(json["seq"]!.numberValue!)
        switch event {
        case .snapshot(let epoch, _, let list):
            self.epoch = epoch
            activities = Dictionary(uniqueKeysWithValues: list.map { ($0.tag, Held(state: $0.state, phase: $0.phase, title: $0.attributes.title)) })
        case .start(_, let tag, let attributes, _, _):
            activities[tag] = Held(
                state: json["state"]!.objectValue!, phase: ActivityPhase(rawValue: json["phase"]?.stringValue ?? "active")!,
                title: attributes.title)
        case .update(_, let tag, let patch, _, _, _, _):
            guard var held = activities[tag], held.phase.isLive else {
                violations.append("update of \(tag) that the client does not hold live (seq \(seq))")
                return
            }
            held.state = MergePatch.apply(patch, to: held.state)
            held.phase = ActivityPhase(rawValue: json["phase"]!.stringValue!)!
            activities[tag] = held
        case .end(_, let tag, let patch, _, _):
            guard var held = activities[tag], held.phase != .dismissed else {
                violations.append("end of \(tag) that the client does not hold (seq \(seq))")
                return
            }
            if !held.phase.isLive, !patch.isEmpty { violations.append("end of ended \(tag) with a patch (seq \(seq))") }
            held.state = MergePatch.apply(patch, to: held.state)
            held.phase = .ended
            activities[tag] = held
            if json["phase"] == "dismissed" { activities.removeValue(forKey: tag) }
        case .lifecycle(_, let tag, let phase):
            if phase == .dismissed {
                activities.removeValue(forKey: tag)
            } else if var held = activities[tag] {
                if !held.phase.isLive { violations.append("\(phase) of ended \(tag)") }
                held.phase = phase
                activities[tag] = held
            }
        case .notification, .clear:
            notifications.append(seq)
        case .notificationsDropped:
            break
        }
        // A snapshot may carry the seq of the notification just before it: it is the state as of that seq.
        var snapshotAtSameSeq = false
        if case .snapshot = event { snapshotAtSameSeq = seq == lastSeq }
        if seq <= lastSeq, frames > 1, !snapshotAtSameSeq {
            violations.append("seq \(seq) after \(lastSeq)")
        }
        lastSeq = max(lastSeq, seq)
    }
}
