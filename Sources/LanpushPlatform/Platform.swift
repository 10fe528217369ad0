import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The executables' platform layer: the only place that talks to the OS directly (signals, rlimits, systemd's
/// `$NOTIFY_SOCKET`).
public enum Platform {
    /// Raises RLIMIT_NOFILE to its hard limit and returns the fd budget to give lws (a margin below the
    /// limit: lws 4.1 spins on accept at EMFILE).
    public static func raiseFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 - 64 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let soft = Int(min(limit.rlim_cur, 1 << 20))
        return max(64, soft - 64)
    }

    /// Runs `handler` on a background queue whenever SIGTERM or SIGINT arrives. Keep the returned sources alive.
    public static func onTermination(_ handler: @escaping @Sendable (Int32) -> Void) -> [DispatchSourceSignal] {
        let queue = DispatchQueue(label: "lanpush.signals")
        return [SIGTERM, SIGINT].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { handler(sig) }
            source.resume()
            return source
        }
    }

    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}

/// sd_notify without libsystemd: datagrams to `$NOTIFY_SOCKET` (path or abstract `@name`).
public struct SystemdNotifier: Sendable {
    public let path: String
    /// Half of `$WATCHDOG_USEC`, when the unit has a watchdog.
    public let watchdogInterval: Double?

    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        self.path = path
        if let usec = environment["WATCHDOG_USEC"].flatMap(Double.init), usec > 0 {
            watchdogInterval = usec / 2_000_000
        } else {
            watchdogInterval = nil
        }
    }

    public func send(_ message: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let payload = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                sendto(fd, payload, payload.count, Int32(MSG_NOSIGNAL), sa, length)
            }
        }
    }
}
