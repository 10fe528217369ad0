import Foundation
import Histogram
import LanpushCore

#if canImport(Glibc)
import Glibc
#endif

extension ScenarioRunner {
    /// HTTP ingest with no session (every update queued for the device): as fast as possible over
    /// `fastConnections` keep-alive connections, then at 1,000/s; answer latency percentiles.
    func ingest(_ kind: ServerKind) throws -> [Metric] {
        let s = try setUp(kind, devices: 1, sessions: 0)
        defer { tearDown(s) }
        let tags = 10
        let start = nowNanos() + 50_000_000
        let lead = scale.lead
        let window = (start + UInt64(lead * 1e9), start + UInt64((lead + scale.ingestSeconds) * 1e9))
        let cpu0 = s.server.cpuSeconds
        let wall0 = nowNanos()
        let r = try publish(s, mode: .max, start: start, duration: lead + scale.ingestSeconds, window: window,
                            connections: scale.fastConnections) { i, stamp in
            LanpushUpdate(device: 0, tag: i % tags, progress: i + 1, stamp: stamp)
        }
        let cpu = cpuPercent(s.server, from: cpu0, since: wall0)
        var m = [Metric(key: "ingest.rps", label: "requests/s, \(scale.fastConnections) connections", unit: "/s",
                        value: Double(r.answeredInWindow) / scale.ingestSeconds, better: .higher)]
        m += latencyMetrics(r.answerLatency, prefix: "ingest.max", label: "answer at max load")
        m.append(Metric(key: "ingest.cpu", label: "server CPU at max load", unit: "% of a core", value: cpu, better: .none))
        let bad = r.statusCounts.filter { $0.key != 202 }.values.reduce(0, +)
        if bad > 0 { env.log("\(kind.rawValue): non-202 answers: \(r.statusCounts)") }
        let start2 = nowNanos() + 50_000_000
        let r2 = try publish(s, mode: .rate(1000), start: start2, duration: scale.ingestSeconds, window: (start2, UInt64.max),
                             connections: 8, firstIndex: r.sent) { i, stamp in
            LanpushUpdate(device: 0, tag: i % tags, progress: i + 1, stamp: stamp)
        }
        m += latencyMetrics(r2.answerLatency, prefix: "ingest.rate", label: "answer at 1,000/s")
        if let wrk = env.wrk, let l = s.lanpush {
            // The first measurement's command (16 connections) and the saturating one.
            for c in Set([16, scale.fastConnections]).sorted() {
                m += try runWrk(wrk, server: l, connections: c, seconds: max(1, min(5, scale.ingestSeconds)))
            }
        }
        return m
    }

    /// The same ingest measured by wrk (C, keep-alive, Benchmarks/ingest.lua): requests/s and its latency percentiles.
    func runWrk(_ wrk: (binary: String, script: String), server: LanpushServer, connections: Int, seconds: Double) throws -> [Metric] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: wrk.binary)
        p.arguments = ["-t1", "-c\(connections)", "-d\(Int(seconds.rounded(.up)))s", "--latency", "-s", wrk.script,
                       "http://127.0.0.1:\(server.port)"]
        var environment = ProcessInfo.processInfo.environment
        environment["LANPUSH_TOKEN"] = server.adminToken
        environment["LANPUSH_DEVICE"] = "d0"
        p.environment = environment
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        var m: [Metric] = []
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            if f.first == "Requests/sec:", f.count > 1, let v = Double(f[1]) {
                m.insert(Metric(key: "ingest.wrk\(connections).rps", label: "wrk -c\(connections): requests/s", unit: "/s", value: v, better: .higher), at: 0)
            } else if f.count == 2, f[0] == "50%" || f[0] == "99%", let ms = wrkMillis(f[1]) {
                m.append(Metric(key: "ingest.wrk\(connections).p\(f[0].dropLast())", label: "wrk -c\(connections): answer p\(f[0].dropLast())",
                                unit: "ms", value: ms, better: .lower))
            }
        }
        if m.isEmpty { env.log("wrk printed nothing usable:\n\(text)") }
        return m
    }
}

/// wrk's "771.00us" / "4.09ms" / "1.20s" in milliseconds.
func wrkMillis(_ s: Substring) -> Double? {
    for (unit, factor) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where s.hasSuffix(unit) {
        return Double(s.dropLast(unit.count)).map { $0 * factor }
    }
    return nil
}
