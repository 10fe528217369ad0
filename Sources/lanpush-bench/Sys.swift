import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Monotonic nanoseconds (CLOCK_MONOTONIC): the one clock every timestamp of the tool uses. Publishers embed it
/// in the update; clients subtract it on receipt (same process, same clock).
@inline(__always)
func nowNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

func sleepSeconds(_ s: Double) {
    guard s > 0 else { return }
    var ts = timespec(tv_sec: Int(s), tv_nsec: Int((s - Double(Int(s))) * 1e9))
    var rest = timespec()
    while nanosleep(&ts, &rest) != 0 && errno == EINTR { ts = rest }
}

/// Sleeps until the monotonic clock reaches `deadline` (ns).
func sleepUntil(_ deadline: UInt64) {
    let now = nowNanos()
    guard deadline > now else { return }
    sleepSeconds(Double(deadline - now) / 1e9)
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// A pthread mutex (the tool's threads: main, the client loop, the publisher).
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    @inline(__always)
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

enum Sys {
    /// Raises RLIMIT_NOFILE to the hard limit; returns the soft limit now in force.
    @discardableResult
    static func raiseFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(min(limit.rlim_cur, 1 << 20))
    }

    /// A loopback port nobody listens on right now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(errno)") }
        defer { close(fd) }
        var addr = loopback(port: 0)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { throw BenchError("bind: \(errno)") }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func loopback(port: Int) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return addr
    }

    /// A connected TCP socket to 127.0.0.1:port with TCP_NODELAY (blocking unless `nonBlocking`).
    static func connectLoopback(port: Int, nonBlocking: Bool = false) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = loopback(port: port)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw BenchError("connect 127.0.0.1:\(port): \(String(cString: strerror(e)))")
        }
        if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return fd
    }

    static func hasNoDelay(_ fd: Int32) -> Bool {
        var flag: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &flag, &len)
        return flag != 0
    }

    /// Writes all of `bytes` to a blocking socket.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var off = 0
        while off < bytes.count {
            let n = send(fd, bytes.baseAddress! + off, bytes.count - off, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                throw BenchError("write: \(String(cString: strerror(errno)))")
            }
            off += n
        }
    }

    /// Drops a server's executable from the page cache before it starts, as after a reboot. Which of the image's pages
    /// a run keeps resident depends on how the file came into the cache: the kernel maps the pages around each fault
    /// (or the whole large folio they sit in), and a binary just written by the linker or `cp` sits in larger folios
    /// than one read back by faults — the same lanpushd measured ~1 MiB more RSS right after it was copied. Pages
    /// another process has mapped stay (nothing is evicted from under a running server).
    static func dropFromPageCache(_ path: String) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = fdatasync(fd)  // dirty pages (a fresh link) are not dropped until written
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
    }

    /// VmRSS of a process in KiB (from /proc/PID/status).
    static func rssKiB(pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.dropFirst(6).filter { $0.isNumber }
            return Int(digits)
        }
        return nil
    }

    /// User + system CPU seconds of a process so far (from /proc/PID/stat).
    static func cpuSeconds(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state(0) ppid(1) ... utime(11) stime(12)
        guard fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) else { return nil }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func machine() -> (cpus: Int, model: String, kernel: String) {
        let cpus = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        var model = "unknown"
        if let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("model name") {
                model = line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? model
                break
            }
        }
        var u = utsname()
        uname(&u)
        let release = withUnsafeBytes(of: &u.release) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return (cpus, model, release)
    }

    /// A random token of URL-safe characters.
    static func token(_ n: Int = 32) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<n).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
    }
}

/// Runs `body` on a new thread (a real pthread, so the load generator never waits on a shared pool).
func startThread(name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
    let t = Thread { body() }
    t.name = name
    t.stackSize = 8 << 20
    t.start()
    return t
}

/// A one-shot flag a thread can wait on.
final class Completion: @unchecked Sendable {
    private let cond = NSCondition()
    private var done = false
    func signal() {
        cond.lock()
        done = true
        cond.broadcast()
        cond.unlock()
    }
    /// `false` on timeout.
    @discardableResult
    func wait(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        cond.lock()
        defer { cond.unlock() }
        while !done {
            if !cond.wait(until: deadline) { return done }
        }
        return true
    }
}

// MARK: - Byte scanning (the clients read a frame without parsing it all)

extension UnsafeRawBufferPointer {
    /// Offset just past the first occurrence of `needle`, or nil.
    @inline(__always)
    func offset(after needle: StaticString, from start: Int = 0) -> Int? {
        let n = needle.utf8CodeUnitCount
        let p = needle.utf8Start
        guard count >= n, start <= count - n else { return nil }
        let first = p[0]
        var i = start
        let last = count - n
        while i <= last {
            if self[i] == first {
                var j = 1
                while j < n && self[i + j] == p[j] { j += 1 }
                if j == n { return i + n }
            }
            i += 1
        }
        return nil
    }

    /// Unsigned decimal at `i` (stops at the first non-digit).
    @inline(__always)
    func decimal(at i: Int) -> UInt64? {
        var v: UInt64 = 0
        var k = i
        while k < count, self[k] >= 48, self[k] <= 57 {
            v = v &* 10 &+ UInt64(self[k] - 48)
            k += 1
        }
        return k > i ? v : nil
    }

    /// The send timestamp the publisher embedded after an `@` (the first `@` of the frame).
    @inline(__always)
    func embeddedStamp() -> UInt64? {
        guard let at = firstIndex(of: UInt8(ascii: "@")) else { return nil }
        return decimal(at: at + 1)
    }
}
