import Foundation
import LanpushClient
import LanpushCore

/// How `watch` ends: the first reason given wins (count reached, timeout, signal, the gateway closing).
final class WatchOutcome: @unchecked Sendable {
    private let lock = NSLock()
    private var decided: (Int32, String?)?
    private var seen = 0

    var result: (Int32, String?) { lock.withLock { decided ?? (0, nil) } }
    var isDecided: Bool { lock.withLock { decided != nil } }

    @discardableResult
    func finish(_ code: Int32, _ message: String? = nil) -> Bool {
        lock.withLock {
            guard decided == nil else { return false }
            decided = (code, message)
            return true
        }
    }

    /// Counts one event; true once `limit` is reached.
    func counted(limit: Int?) -> Bool {
        lock.withLock {
            seen += 1
            return limit.map { seen >= $0 } ?? false
        }
    }

    func timedOut(after seconds: Double, count: Int?) {
        let events = lock.withLock { seen }
        if let count, events < count {
            finish(1, "timed out after \(Format.value(.number(seconds))) s: saw \(events) of \(count) events")
        } else {
            finish(0)
        }
    }
}

/// Prints what the client reports: one line per frame, then the activities when they changed; connection notes on
/// stderr. The client does the protocol (auth, subscribe, acks, resume, reconnect); this only renders.
struct Watcher {
    let client: LanpushClient
    let outcome: WatchOutcome
    let url: String
    let json: Bool
    let count: Int?

    /// Activities that an `end` of this frame removed at once (dismissed): shown with their final view.
    private final class Gone {
        var views: [(device: String, activity: ClientActivity)] = []
    }

    func run() async {
        await client.start()
        let gone = Gone()
        var deviceId = "?"
        var observer = false
        for await event in client.events {
            switch event {
            case .connected(let info):
                observer = info.observer
                if observer {
                    let device: String? = if case .observer(let d) = client.configuration.role { d } else { nil }
                    Output.note("connected to \(url) as observer of \(device.map { "device \($0)" } ?? "every device")")
                } else {
                    deviceId = info.deviceId ?? "?"
                    Output.note("connected to \(url) as device \(deviceId) (epoch \(info.epoch ?? "?"), seq \(info.seq.map(String.init) ?? "?"))")
                }
            case .state(.ended(_, let activity), let device):
                gone.views.removeAll { $0.device == device && $0.activity.tag == activity.tag }
                gone.views.append((device, activity))
            case .state(.synced(let seq), let device):
                Output.note("synced \(device.isEmpty ? deviceId : device) at #\(seq)")
            case .state(.notificationsDropped(let n, let through), let device):
                Output.note("\(device.isEmpty ? deviceId : device): \(n) notifications up to #\(through) were dropped (queue full)")
            case .state:
                break
            case .frame(let frame, let text):
                if json { Output.line(text) }
                let device = frame.deviceId ?? deviceId
                if frame.type == "replay", !json {
                    Output.line("\(Format.clock(Date().timeIntervalSince1970)) \(device) replay from #\(Format.int(frame["from"]) ?? "?")")
                }
                if let line = Self.describe(frame) {
                    if !json {
                        Output.line("\(Format.clock(Date().timeIntervalSince1970)) \(device) \(line.text)")
                        if line.changed { await printStates(ended: gone.views) }
                    }
                    if frame.type != "snapshot", outcome.counted(limit: count) {
                        outcome.finish(0)
                        break
                    }
                }
                gone.views = []
            case .error(let message):
                Output.note("gateway: \(message)")
            case .authRejected(let message, _):
                outcome.finish(1, "authentication failed: \(message)")
            case .status(let change):
                guard change.status == .offline, change.previous != .offline else { break }
                report(change)
            case .registered, .device:
                break
            }
            if outcome.isDecided { break }
        }
        await client.stop()
        if case .device = client.configuration.role, let epoch = await client.state.epoch {
            Output.note("resume point: --resume \(epoch):\(await client.state.seq)")
        }
    }

    /// A session ended: with --reconnect the client comes back by itself; without, the command ends here.
    private func report(_ change: StatusChange) {
        let what = change.code.map { "\($0)" + (change.reason.isEmpty ? "" : " \(change.reason)") } ?? "no close frame"
        if let delay = change.retryIn {
            let why = change.connectFailed ? "cannot connect: \(change.reason)" : "the gateway closed the connection (\(what))"
            Output.note("\(why); reconnecting in \(Format.value(.number((delay * 10).rounded() / 10))) s")
        } else if change.connectFailed {
            outcome.finish(1, "cannot connect to \(url): \(change.reason)")
        } else if change.code == 1000 || change.code == 1001 {
            Output.note("the gateway closed the connection (\(what))")
            outcome.finish(0)
        } else {
            outcome.finish(1, change.code == nil ? "connection to \(url) lost" : "the gateway closed the connection (\(what))")
        }
    }

    /// `TYPE [TAG] #SEQ details` for an event frame, and whether the activities changed; nil for other frames.
    static func describe(_ frame: ServerFrame) -> (text: String, changed: Bool)? {
        let o = frame.object
        var changed = true
        var details: String
        switch frame.type {
        case "snapshot":
            let n = o["activities"]?.arrayValue?.count ?? 0
            details = "(\(n) \(n == 1 ? "activity" : "activities"))"
        case "start":
            var state = o["state"]?.objectValue ?? [:]
            let title = ActivityText.title(state: state, attributes: o["attributes"]?.objectValue ?? [:])
            state["title"] = nil
            details = [title.isEmpty ? "" : "title=\(Format.value(.string(title)))", Format.pairs(state)]
                .filter { !$0.isEmpty }.joined(separator: " ")
        case "update", "end":
            var bits = [Format.pairs(o["patch"]?.objectValue ?? [:])]
            if o["silent"]?.boolValue == true { bits.append("(silent)") }
            if let alert = o["alert"] { bits.append("alert=\(alert.serialized())") }
            if frame.type == "end", frame.phase == .dismissed {
                bits.append("(dismissed at once)")
            } else if frame.type == "end", let d = o["dismissal_date"]?.numberValue {
                bits.append("(visible until \(Format.clock(d)))")
            }
            details = bits.filter { !$0.isEmpty }.joined(separator: " ")
        case "lifecycle":
            details = "-> \(o["phase"]?.stringValue ?? "?")"
        case "notification":
            changed = false
            var bits: [String] = []
            if let t = o["title"]?.stringValue { bits.append("title=\(Format.value(.string(t)))") }
            if let m = o["message"]?.stringValue { bits.append("message=\(Format.value(.string(m)))") }
            if let d = o["data"]?.objectValue, !d.isEmpty { bits.append("data=\(JSONValue.object(d).serialized())") }
            details = bits.joined(separator: " ")
        case "clear":
            changed = false
            details = ""
        default:
            return nil
        }
        var text = frame.type
        if let tag = frame.tag { text += " \(tag)" }
        if let seq = frame.seq { text += " #\(seq)" }
        if !details.isEmpty { text += " " + details }
        return (text, changed)
    }

    /// `  DEVICE/TAG [PHASE] TITLE: summary` for every activity held, plus the ones this frame ended and removed.
    private func printStates(ended: [(device: String, activity: ClientActivity)]) async {
        var rows: [(device: String, activity: ClientActivity)] = []
        if case .observer = client.configuration.role {
            for (device, state) in await client.devices { rows += state.activities.values.map { (device, $0) } }
        } else {
            let device = await client.deviceId ?? "?"
            rows = await client.state.activities.values.map { (device, $0) }
        }
        for gone in ended where !rows.contains(where: { $0.device == gone.device && $0.activity.tag == gone.activity.tag }) {
            rows.append(gone)
        }
        if rows.isEmpty {
            Output.line("  (no activities)")
            return
        }
        for row in rows.sorted(by: { ($0.device, $0.activity.tag) < ($1.device, $1.activity.tag) }) {
            let a = row.activity
            var line = "  \(row.device)/\(a.tag) [\(a.phase.rawValue)]"
            let title = a.state["title"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? a.attributes.title
            if !title.isEmpty { line += " \(title):" }
            line += " " + ActivityText.summary(a.state)
            Output.line(line)
        }
    }
}
