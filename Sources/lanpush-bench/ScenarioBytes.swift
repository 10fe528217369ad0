import Foundation
import Histogram
import LanpushCore

#if canImport(Glibc)
import Glibc
#endif

extension ScenarioRunner {
    /// The seed scenarios, one update at a time (each delivered before the next is sent).
    func bytes(_ kind: ServerKind) throws -> [Metric] {
        let s = try setUp(kind, devices: 1, sessions: 1)
        defer { tearDown(s) }
        s.hub.sync { s.hub.trackState = true; s.hub.recordFrames = true }
        var metrics: [Metric] = []
        var allDelta = 0.0
        var allFull = 0.0
        var allWire = 0.0
        var allCount = 0
        var allPatch = 0.0
        var allState = 0.0
        for seq in SeedSequences.all {
            s.hub.sync { s.hub.frameLog.removeAll() }
            for (i, data) in seq.updates.enumerated() {
                let before = s.hub.sync { s.hub.stats.frames }
                try sendOne(s, tag: seq.tag, title: seq.title, message: data.message, data: data.data)
                if !wait(s.hub, timeout: 10, { s.hub.stats.frames > before }) {
                    throw BenchError("\(kind.rawValue): \(seq.name) update \(i) was not delivered")
                }
            }
            let log = s.hub.sync { s.hub.frameLog }
            // The first frame is the start (the whole state by nature): the averages cover the updates after it.
            let updates = log.dropFirst()
            let wire = updates.reduce(0) { $0 + $1.wireBytes }
            let full = updates.reduce(0) { $0 + $1.fullStateWireBytes }
            let ratioAvg = updates.map { Double($0.wireBytes) / Double($0.fullStateWireBytes) }.reduce(0, +) / Double(max(1, updates.count))
            let all = log.reduce(0) { $0 + $1.wireBytes }
            metrics.append(Metric(key: "bytes.\(seq.name).wire", label: "\(seq.label): bytes per update on the wire (all \(log.count))",
                                  unit: "B", value: Double(all) / Double(max(1, log.count)), better: .lower))
            if kind.isLanpush {
                metrics.append(Metric(key: "bytes.\(seq.name).delta", label: "\(seq.label): delta bytes per update", unit: "B",
                                      value: Double(wire) / Double(max(1, updates.count)), better: .lower))
                metrics.append(Metric(key: "bytes.\(seq.name).full", label: "\(seq.label): same frames with the full state", unit: "B",
                                      value: Double(full) / Double(max(1, updates.count)), better: .lower))
                metrics.append(Metric(key: "bytes.\(seq.name).ratio", label: "\(seq.label): delta / full state, frames (mean per update)", unit: "%",
                                      value: ratioAvg * 100, better: .lower))
                let payloadAvg = updates.map { Double($0.patchBytes) / Double(max(1, $0.stateBytes)) }.reduce(0, +) / Double(max(1, updates.count))
                metrics.append(Metric(key: "bytes.\(seq.name).payload", label: "\(seq.label): patch / state JSON alone (mean per update)", unit: "%",
                                      value: payloadAvg * 100, better: .lower))
            }
            allDelta += Double(wire)
            allFull += Double(full)
            allPatch += Double(updates.reduce(0) { $0 + $1.patchBytes })
            allState += Double(updates.reduce(0) { $0 + $1.stateBytes })
            allWire += Double(all)
            allCount += log.count
        }
        metrics.append(Metric(key: "bytes.all.wire", label: "all three: bytes per update on the wire", unit: "B",
                              value: allWire / Double(max(1, allCount)), better: .lower))
        if kind.isLanpush {
            metrics.append(Metric(key: "bytes.all.ratio", label: "all three: delta / full state, frames (bytes)", unit: "%",
                                  value: allDelta / max(1, allFull) * 100, better: .lower))
            metrics.append(Metric(key: "bytes.all.payload", label: "all three: patch / state JSON alone (bytes)", unit: "%",
                                  value: allPatch / max(1, allState) * 100, better: .lower))
        }
        return metrics
    }

    /// One notify payload, through `/v1/push` (lanpush) or as a retained PUBLISH of the whole ContentState (MQTT).
    func sendOne(_ s: Setup, tag: String, title: String, message: String, data: [String: JSONValue]) throws {
        var d = data
        d["tag"] = .string(tag)
        d["live_update"] = true
        if let l = s.lanpush {
            let body: JSONValue = ["targets": ["d0"], "title": .string(title), "message": .string(message), "data": .object(d)]
            var c = try HTTPConnection(port: l.port)
            defer { c.close() }
            var req: [UInt8] = []
            RequestBuilder(path: "/v1/push", token: l.adminToken).request(body: body.serializedBytes(), into: &req)
            let (status, text) = try c.request(req)
            guard status == 202 else { throw BenchError("push answered \(status): \(String(decoding: text, as: UTF8.self))") }
            return
        }
        // The ContentState as lanpush maps it (the same mapping, so both carry the same information), plus the title.
        let command = try PayloadInterpreter.interpret(NotifyMessage(title: title, message: message, data: d), now: 1_800_000_000)
        guard case .liveUpdate(let u) = command else { throw BenchError("not a live update") }
        var state = u.state
        state["title"] = .string(title)
        let payload = JSONValue.object(state).serializedBytes()
        let pub = try MQTTPublisher(port: s.mosquitto!.mqttPort)
        defer { pub.close() }
        var out: [UInt8] = []
        payload.withUnsafeBytes { MQTT.publish(topic: Array("b/d0/\(tag)".utf8), payload: $0, retain: true, into: &out) }
        try out.withUnsafeBytes { try Sys.writeAll(pub.fd, $0) }
    }
}

// MARK: - The documented scenarios (HA's Live Activity docs, Aivi's templates): every update is a complete state

struct SeedSequence {
    struct Step {
        var message: String
        var data: [String: JSONValue]
    }
    var name: String
    var label: String
    var tag: String
    var title: String
    var updates: [Step]
}

enum SeedSequences {
    static var all: [SeedSequence] { [ev, washer, aivi] }

    /// HA's Live Activity docs: "EV charging", throttled to 5 % steps: 0 → 100.
    static var ev: SeedSequence {
        let steps = stride(from: 0, through: 100, by: 5).map { p -> SeedSequence.Step in
            let minutes = (100 - p) * 6 / 5
            return .init(message: p == 100 ? "Charging complete" : "Charging · Est. \(minutes) min remaining", data: [
                "critical_text": .string("\(p)%"), "progress": .number(Double(p)), "progress_max": 100,
                "notification_icon": "mdi:ev-station", "notification_icon_color": "#4CAF50",
            ])
        }
        return SeedSequence(name: "ev", label: "EV charging 0→100 % in 5 % steps", tag: "ev-charging", title: "EV Charging", updates: steps)
    }

    /// HA's Live Activity docs: "washing machine": its phases, progress in seconds of 3600, a countdown, then complete.
    static var washer: SeedSequence {
        let end = 1_800_003_600.0
        func phase(_ message: String, _ progress: Int, done: Bool = false) -> SeedSequence.Step {
            var d: [String: JSONValue] = [
                "progress": .number(Double(progress)), "progress_max": 3600, "notification_icon": "mdi:washing-machine",
                "notification_icon_color": done ? "#4CAF50" : "#2196F3", "color": done ? "#4CAF50" : "#2196F3",
            ]
            if !done {
                d["chronometer"] = true
                d["when"] = .number(end)
            }
            return .init(message: message, data: d)
        }
        return SeedSequence(name: "washer", label: "Washer cycle", tag: "washer_cycle", title: "Washing Machine", updates: [
            phase("Cycle started", 0), phase("Washing", 600), phase("Washing", 1200), phase("Rinsing · 1 of 2", 1800),
            phase("Rinsing · 2 of 2", 2400), phase("Spinning", 3000), phase("Cycle complete", 3600, done: true),
        ])
    }

    /// Aivi's segmented progress template (layered, hatched overflow zone), charging 10 → 100 %.
    static var aivi: SeedSequence {
        let steps = stride(from: 10, through: 100, by: 10).map { p -> SeedSequence.Step in
            let template: JSONValue = [
                "template": "progress", "icon": "bolt.car",
                "header_left": ["value": .string("\(p)%"), "text_color": "green"],
                "header_right": ["value": .string(p == 100 ? "Done" : "\((100 - p) / 3) min left")],
                "progress": [
                    "style": "segmented", "value": .number(Double(p) / 100), "display": "layered",
                    "segments": [
                        ["value": 0.8, "fill_color": "green", "track_color": "gray", "label": "Standard"],
                        ["value": 0.2, "fill_color": "green", "track_color": "gray", "track_fill": "hatched", "label": "Extended"],
                    ],
                ],
                "footer_left": ["value": "Supercharger", "text_color": "gray"],
                "footer_right": ["value": .string("Est. $\(String(format: "%.2f", Double(p) * 0.054))")],
                "compact_value": ["value": .string("\(p)%")],
            ]
            return .init(message: "Supercharging", data: ["template": template])
        }
        return SeedSequence(name: "aivi", label: "Aivi segmented progress", tag: "aivi-charge", title: "Model 3", updates: steps)
    }
}
