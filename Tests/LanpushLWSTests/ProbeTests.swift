import Foundation
import Testing

@testable import LanpushLWS

/// Manual exploration aid: `LWS_PROBE_SECONDS=20 swift test --filter probeServer` serves the test routes
/// on 127.0.0.1 and prints the port, so curl or a script can poke at lws's behaviour. Off by default.
@Test(.enabled(if: ProcessInfo.processInfo.environment["LWS_PROBE_SECONDS"] != nil))
func probeServer() throws {
    let seconds = Double(ProcessInfo.processInfo.environment["LWS_PROBE_SECONDS"] ?? "0") ?? 0
    let s = try RunningServer()
    print("PROBE PORT \(s.port)")
    if let path = ProcessInfo.processInfo.environment["LWS_PROBE_PORT_FILE"] {
        try String(s.port).write(toFile: path, atomically: true, encoding: .utf8)
    }
    Thread.sleep(forTimeInterval: seconds)
    s.stop()
}

/// Opt-in throughput check: `LWS_BENCH=200000 swift test --filter benchFramesToOneClient`.
@Test(.enabled(if: ProcessInfo.processInfo.environment["LWS_BENCH"] != nil))
func benchFramesToOneClient() throws {
    let n = Int(ProcessInfo.processInfo.environment["LWS_BENCH"] ?? "0") ?? 0
    let s = try RunningServer()
    defer { s.stop() }
    let ws = try WSClient(port: s.port)
    let t0 = Date()
    try ws.sendText("bench:\(n)")
    for _ in 0..<n { _ = try ws.readFrame() }
    let dt = Date().timeIntervalSince(t0)
    print("BENCH \(n) frames in \(dt) s = \(Int(Double(n) / dt)) msg/s")
}
