import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Gives the OS back the memory the process freed but glibc's allocator kept.
///
/// glibc returns freed heap memory to the OS only from the top of an arena. Under churn (sessions coming and going,
/// histories trimmed, commit batches) the free space ends up below live blocks, and the resident set steps up each
/// time a burst needs more than the holes offer, never coming back down: a 10,000-session soak grew by 8-19 MiB
/// steps that one `malloc_trim(0)` took back at once (153 → 130 MiB). `malloc_trim(0)` hands every whole free page
/// back with `MADV_DONTNEED`; what is live is untouched.
extension Platform {
    /// One pass over every arena; `true` when some memory went back to the OS.
    @discardableResult
    public static func releaseFreeMemory() -> Bool {
        guard let trim = mallocTrim else { return false }
        return trim(0) == 1
    }

    /// Has every thread allocate from glibc's main arena (`M_ARENA_MAX` 1), unless `MALLOC_ARENA_MAX` says otherwise;
    /// `true` when the setting took. Call it first in `main`, before another thread allocates.
    ///
    /// glibc gives each new thread an arena of its own. The store's writer thread builds a burst's transactions in
    /// its arena, and what it freed at the arena's top stays resident: `malloc_trim` gives back only the main arena's
    /// top, and a non-main arena trims its own only past a threshold glibc raises as large blocks come and go (~0.8
    /// MiB of a 1 MiB arena after `fast-100` with the store). With one arena the periodic `releaseFreeMemory()`
    /// reaches everything freed. The loop and the writer then share the arena's lock for blocks the per-thread cache
    /// does not serve; durable throughput did not move (docs/BENCHMARKS.md).
    @discardableResult
    public static func useOneMallocArena() -> Bool {
        guard getenv("MALLOC_ARENA_MAX") == nil, let mallopt = mallocOption else { return false }
        return mallopt(mArenaMax, 1) == 1
    }

    /// `M_ARENA_MAX` in glibc's `<malloc.h>`.
    private static let mArenaMax: Int32 = -8

    /// glibc's `malloc_trim` (declared in `<malloc.h>`, which Swift's Glibc module does not bring in); `nil` with
    /// a C library that has none, where there is nothing to do.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = libcFunction("malloc_trim")

    /// glibc's `mallopt`, from the same header.
    private static let mallocOption: (@convention(c) (Int32, Int32) -> Int32)? = libcFunction("mallopt")

    private static func libcFunction<F>(_ name: String) -> F? {
        #if canImport(Glibc)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
            return unsafeBitCast(symbol, to: F.self)
        #else
            return nil
        #endif
    }

    /// `releaseFreeMemory()` every `seconds`, on a queue of its own: the pass holds each arena's lock while it
    /// walks it (a few milliseconds with a large heap), so it is spread out, not run on the event loop's tick.
    /// Keep the returned source alive; it stops when released.
    public static func releaseFreeMemory(every seconds: Double) -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "lanpush.free-memory", qos: .utility))
        timer.schedule(deadline: .now() + seconds, repeating: seconds, leeway: .seconds(1))
        timer.setEventHandler { releaseFreeMemory() }
        timer.resume()
        return timer
    }

    /// The process's resident set (`VmRSS`), in KiB; `nil` where /proc is not there.
    public static func residentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }
}
