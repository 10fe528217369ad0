import Testing

@testable import LanpushPlatform

#if canImport(Glibc)
    import Glibc
#endif

/// Memory freed below the top of the heap stays resident until it is handed back: 48 MiB of 64 KiB blocks, freed but
/// for one block above them all, are still counted in the resident set, and `releaseFreeMemory` gives them back.
@Suite struct FreeMemoryTests {
    /// Under ThreadSanitizer or AddressSanitizer (`scripts/test-long tsan` / `asan`) `malloc` is the sanitizer's own
    /// allocator, whose memory glibc's `malloc_trim` neither knows nor returns.
    #if canImport(Glibc)
        static let glibcAllocates = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") == nil
            && dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil
    #else
        static let glibcAllocates = false
    #endif

    @Test(.enabled(if: glibcAllocates, "a sanitizer's allocator, not glibc's"))
    func freedMemoryBelowLiveBlocksGoesBackToTheOS() throws {
        #if canImport(Glibc)
            // Below glibc's mmap threshold (128 KiB, only ever raised), so the blocks come from the heap.
            let size = 64 << 10
            let blocks = (0..<768).map { _ -> UnsafeMutableRawPointer in
                let p = malloc(size)!
                memset(p, 0x5a, size)  // touched: resident
                return p
            }
            let pin = malloc(size)!  // a live block above them: the arena cannot shrink from its top
            memset(pin, 1, size)
            for p in blocks { free(p) }
            let before = try #require(Platform.residentKiB())
            #expect(Platform.releaseFreeMemory())
            let after = try #require(Platform.residentKiB())
            #expect(before - after > 32 << 10, "resident \(before) KiB before, \(after) KiB after")
            free(pin)
        #endif
    }

    @Test func theResidentSetIsRead() throws {
        let kib = try #require(Platform.residentKiB())
        #expect(kib > 1024)
    }
}
