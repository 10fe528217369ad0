import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

/// A device client that authenticates, subscribes and then never reads a byte: the kernel's buffers fill and the
/// server's writes to it stall. When the server gives up on it (ack timeout) it comes back at once.
final class StuckClient {
    private let port: Int
    private let token: String
    private var fd: Int32 = -1
    private(set) var connects = 0

    init(port: Int, token: String) throws {
        self.port = port
        self.token = token
        try connect()
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    private func connect() throws {
        if fd >= 0 { Glibc.close(fd) }
        fd = try Sys.connectLoopback(port: port)
        // A small receive buffer, so the stall shows soon.
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let request = "GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: c3R1Y2stY2xpZW50LWtleQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: lanpush.v1\r\n\r\n"
        try write(Array(request.utf8))
        // The 101 and its headers only; the frames after it stay unread.
        var head = [UInt8]()
        var byte: UInt8 = 0
        while !head.ends(with: [13, 10, 13, 10]) {
            guard recv(fd, &byte, 1, 0) == 1 else { throw BenchError("stuck client: handshake failed") }
            head.append(byte)
        }
        try write(Self.maskedText("{\"type\":\"auth\",\"token\":\"\(token)\"}") + Self.maskedText("{\"type\":\"subscribe\"}"))
        connects += 1
    }

    /// Reconnects if the server closed it (seen without reading: the peer's FIN or a reset).
    func reviveIfClosed() {
        var p = pollfd(fd: fd, events: Int16(0x2000), revents: 0)
        guard poll(&p, 1, 0) > 0, p.revents & Int16(0x2000 | POLLHUP | POLLERR) != 0 else { return }
        try? connect()
    }

    private func write(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw BenchError("stuck client: send failed") }
            off += n
        }
    }

    static func maskedText(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        precondition(payload.count < 126)
        let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return [0x81, 0x80 | UInt8(payload.count)] + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}

extension ScenarioRunner {
    /// N sessions (one device each) for M minutes while updates arrive at a fixed rate, each to one device, and a
    /// share of the sessions reconnects every second. Per period (a minute): the server's RSS (the median and the
    /// largest of a sample each second: lanpushd gives freed memory back to the OS twice a minute, so one sample
    /// at the period's end lands before or after a give-back by chance) and open fds, the ingest→delivery p50/p99
    /// of that period, deliveries and reconnects. With `stuck`, one more session of d0 never reads and comes back
    /// whenever the server closes it.
    func soak(_ kind: ServerKind) throws -> [Metric] {
        let n = scale.soakSessions
        let tags = scale.tags
        let total = scale.soakMinutes * 60
        let period = min(scale.soakPeriod, total / 2)
        let s = try setUp(kind, devices: n, sessions: n, capacity: n + n / 10 + 64)
        defer { tearDown(s) }
        guard let l = s.lanpush else { throw BenchError("soak runs on lanpush only") }
        try warmUp(s, count: n, sessions: n) { i in LanpushUpdate(device: i % n, tag: (i % n) % tags, progress: 0, stamp: 0) }
        let stuck = scale.soakStuck ? try StuckClient(port: l.port, token: l.tokens[0]) : nil
        s.hub.sync { s.hub.window = (0, UInt64.max); s.hub.stats = ClientStats() }

        let start = nowNanos() + 50_000_000
        let publisher = Completion()
        nonisolated(unsafe) var published: PublishResult?
        // The publisher's thread only publishes; this one churns and samples.
        nonisolated(unsafe) let runner = self
        nonisolated(unsafe) let setup = s
        let rate = scale.soakRate
        _ = startThread(name: "soak-publisher") {
            published = try? runner.publish(setup, mode: .rate(rate), start: start, duration: total, window: (0, UInt64.max),
                                            connections: 8) { i, stamp in
                LanpushUpdate(device: i % n, tag: (i % n) % tags, progress: i + 1, stamp: stamp)
            }
            publisher.signal()
        }
        let perSecond = max(1, Int((Double(n) * scale.soakChurn).rounded()))
        var metrics: [Metric] = []
        var rss: [Double] = []
        var rssMax: [Double] = []
        var fds: [Double] = []
        var p99s: [Double] = []
        let periods = Int((total / period).rounded())
        sleepUntil(start)
        for k in 1...periods {
            let end = start + UInt64(Double(k) * period * 1e9)
            var samples: [Double] = []
            while nowNanos() + 1_000_000_000 <= end {
                if scale.soakChurn > 0 { s.hub.churn(perSecond) }
                stuck?.reviveIfClosed()
                sleepSeconds(1)
                samples.append(Double(s.server.rssKiB ?? 0) / 1024)
            }
            sleepUntil(end)
            samples.append(Double(s.server.rssKiB ?? 0) / 1024)
            let (h, st, reconnected) = s.hub.sync { () -> (Histogram<UInt64>, ClientStats, Int) in
                let taken = (s.hub.stats.latency, s.hub.stats, s.hub.reconnected)
                s.hub.stats = ClientStats()
                s.hub.reconnected = 0
                return taken
            }
            let r = median(samples), top = samples.max() ?? 0
            let f = Double((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(s.server.pid)/fd").count) ?? 0)
            let p50 = Double(h.valueAtPercentile(50)) / 1e6
            let p99 = Double(h.valueAtPercentile(99)) / 1e6
            rss.append(r)
            rssMax.append(top)
            fds.append(f)
            p99s.append(p99)
            env.log(String(format: "soak %d/%d: RSS %.1f MiB (largest %.1f), fds %.0f, p50 %.2f ms, p99 %.2f ms, %d deliveries, %d reconnects, %d unexpected closes",
                           k, periods, r, top, f, p50, p99, st.deliveries, reconnected, st.closedUnexpectedly))
            metrics += [
                Metric(key: "soak.rss.\(k)", label: "period \(k): server RSS, median", unit: "MiB", value: r, better: .lower),
                Metric(key: "soak.rss.max.\(k)", label: "period \(k): server RSS, largest", unit: "MiB", value: top, better: .lower),
                Metric(key: "soak.fds.\(k)", label: "period \(k): server fds", unit: "", value: f, better: .lower),
                Metric(key: "soak.p50.\(k)", label: "period \(k): ingest→delivery p50", unit: "ms", value: p50, better: .lower),
                Metric(key: "soak.p99.\(k)", label: "period \(k): ingest→delivery p99", unit: "ms", value: p99, better: .lower),
                Metric(key: "soak.deliveries.\(k)", label: "period \(k): deliveries", unit: "", value: Double(st.deliveries), better: .higher),
                Metric(key: "soak.reconnects.\(k)", label: "period \(k): reconnects", unit: "", value: Double(reconnected), better: .none),
                Metric(key: "soak.unexpected.\(k)", label: "period \(k): sessions closed by the server", unit: "",
                       value: Double(st.closedUnexpectedly), better: .lower),
            ]
        }
        _ = publisher.wait(timeout: 30)
        // Growth after warm-up: from period 2 to the last one.
        if rss.count >= 3 {
            metrics.append(Metric(key: "soak.rss.growth", label: "RSS growth (medians), period 2 → last", unit: "%",
                                  value: (rss.last! - rss[1]) / rss[1] * 100, better: .lower))
            metrics.append(Metric(key: "soak.rss.max.growth", label: "RSS growth (largest), period 2 → last", unit: "%",
                                  value: (rssMax.last! - rssMax[1]) / rssMax[1] * 100, better: .lower))
            // Two periods' medians compare noise as much as trend (RSS moves by ±10 % from minute to minute under
            // churn); a least-squares line through every period from the second on is the trend itself.
            let fit = leastSquares(Array(rss.dropFirst()))
            metrics.append(Metric(key: "soak.rss.trend", label: "RSS trend (least-squares line), period 2 → last", unit: "%",
                                  value: fit.slope * Double(rss.count - 2) / fit.intercept * 100, better: .lower))
            metrics.append(Metric(key: "soak.fds.growth", label: "fds growth, period 2 → last", unit: "",
                                  value: fds.last! - fds[1], better: .lower))
        }
        metrics.append(Metric(key: "soak.p99.max", label: "worst period's p99", unit: "ms", value: p99s.max() ?? 0, better: .lower))
        if let published {
            metrics.append(Metric(key: "soak.sent", label: "updates sent", unit: "", value: Double(published.sentInWindow), better: .none))
        }
        if let stuck {
            metrics.append(Metric(key: "soak.stuck", label: "never-reading session's connections", unit: "", value: Double(stuck.connects),
                                  better: .none))
        }
        return metrics
    }
}

/// The line `intercept + slope * i` closest (least squares) to `ys[i]`.
func leastSquares(_ ys: [Double]) -> (intercept: Double, slope: Double) {
    let n = Double(ys.count)
    guard ys.count >= 2 else { return (ys.first ?? 0, 0) }
    let meanX = (n - 1) / 2, meanY = ys.reduce(0, +) / n
    var sxy = 0.0, sxx = 0.0
    for (i, y) in ys.enumerated() {
        sxy += (Double(i) - meanX) * (y - meanY)
        sxx += (Double(i) - meanX) * (Double(i) - meanX)
    }
    let slope = sxy / sxx
    return (meanY - slope * meanX, slope)
}
