// The core hot path of one update, piece by piece (docs/BENCHMARKS.md, "Micro-benchmarks"):
//   decode+validate  POST body bytes → JSONValue → NotifyMessage → PushCommand
//   coalesce         DeviceLedger.apply + Coalescer.note + Coalescer.next (credit kept open by acks)
//   merge-patch      MergePatch.diff of two states + the update frame's JSON bytes
//   per update       all of the above for one update, as lanpushd does it for one session
// Run: cd Benchmarks && swift package benchmark   (add --filter 'decode.*' to pick)
import Benchmark
import LanpushCore

private let now = 1_800_000_000.0

/// A body like the benchmark tool's (and HA's) live update: message, progress, icon, color.
private func body(_ n: Int) -> [UInt8] {
    Array(
        ##"{"title":"Washing Machine","message":"Rinsing \##(n)","data":{"tag":"washer_cycle","live_update":true,"progress":\##(n),"progress_max":3600,"notification_icon":"mdi:washing-machine","notification_icon_color":"#2196F3","color":"#2196F3"}}"##
            .utf8)
}

/// The same update the way an Aivi template carries it (bigger, nested, validated).
private func templateBody(_ n: Int) -> [UInt8] {
    let v = Double(n % 100) / 100
    return Array(
        #"{"title":"Model 3","message":"Supercharging","data":{"tag":"aivi","live_update":true,"template":{"template":"progress","icon":"bolt.car","header_left":{"value":"\#(n % 100)%","text_color":"green"},"header_right":{"value":"3 min left"},"progress":{"style":"segmented","value":\#(v),"display":"layered","segments":[{"value":0.8,"fill_color":"green","track_color":"gray","label":"Standard"},{"value":0.2,"fill_color":"green","track_color":"gray","track_fill":"hatched","label":"Extended"}]},"footer_left":{"value":"Supercharger","text_color":"gray"},"footer_right":{"value":"Est. $4.85"},"compact_value":{"value":"\#(n % 100)%"}}}}"#
            .utf8)
}

private func decode(_ bytes: [UInt8]) throws -> PushCommand {
    guard let object = try JSONValue.parse(bytes).objectValue else { fatalError("not an object") }
    return try PayloadInterpreter.interpret(try NotifyMessage.decode(object), now: now)
}

private func state(_ n: Int) -> [String: JSONValue] {
    [
        "message": .string("Rinsing \(n)"), "progress": .number(Double(n)), "progress_max": 3600,
        "icon": "mdi:washing-machine", "color": "#2196F3",
    ]
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .instructions, .throughput],
        maxDuration: .seconds(3), maxIterations: 1_000_000)

    let bodies = (0..<256).map(body)
    let templates = (0..<256).map(templateBody)

    Benchmark("decode+validate (notify body)") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(try decode(bodies[i & 255]))
        }
    }

    Benchmark("decode+validate (Aivi segmented template)") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(try decode(templates[i & 255]))
        }
    }

    Benchmark("JSON parse only (notify body)") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(try JSONValue.parse(bodies[i & 255]))
        }
    }

    let commands = try! bodies.map(decode)

    Benchmark("coalesce (ledger apply + note + next, acked)") { benchmark in
        var ledger = DeviceLedger(deviceId: "phone", epoch: "e")
        var (coalescer, _) = Coalescer.subscribe(ledger: ledger, resume: nil, window: 32)
        _ = coalescer.next(ledger: ledger, now: now)  // the snapshot
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            for change in ledger.apply(commands[i & 255], now: now) { coalescer.note(change) }
            if let event = coalescer.next(ledger: ledger, now: now).event {
                coalescer.acknowledge(event.seq)
                blackHole(event)
            }
        }
    }

    let states = (0..<256).map(state)

    Benchmark("merge-patch encode (diff + update frame bytes)") { benchmark in
        for i in benchmark.scaledIterations {
            let patch = MergePatch.diff(from: states[i & 255], to: states[(i + 1) & 255])
            let frame: JSONValue = [
                "type": "update", "seq": .number(Double(i)), "tag": "washer_cycle", "patch": .object(patch), "phase": "active",
            ]
            blackHole(frame.serializedBytes())
        }
    }

    Benchmark("per update (body → frame bytes, one session)") { benchmark in
        var ledger = DeviceLedger(deviceId: "phone", epoch: "e")
        var (coalescer, _) = Coalescer.subscribe(ledger: ledger, resume: nil, window: 32)
        _ = coalescer.next(ledger: ledger, now: now)
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            let command = try decode(bodies[i & 255])
            for change in ledger.apply(command, now: now) { coalescer.note(change) }
            if let event = coalescer.next(ledger: ledger, now: now).event {
                blackHole(event.json.serializedBytes())
                coalescer.acknowledge(event.seq)
            }
        }
    }

    let acks = (0..<256).map { Array(#"{"type":"ack","seq":\#($0)}"#.utf8) }

    Benchmark("ack frame parse") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(try JSONValue.parse(acks[i & 255]))
        }
    }
}
