import CLWSLogFilter
import CLibWebSockets
import Foundation
import Testing

/// The lines lws emitted while the test's emit function was set.
private let emitted = Locked<[String]>([])

/// The filter in front of lws's log call (Sources/CLWSLogFilter): lws must call it, not its own, and it must pass on
/// exactly the levels lws was told to print.
@Suite("lws log filter")
struct LogFilterTests {
    @Test func lwsCallsTheFilterAndOnlyTheLevelsSetGetThrough() throws {
        // The process's definition of `_lws_log` — the one lws's own calls bind to — is the filter, not lws's.
        let lws = try #require(dlopen("libwebsockets.so.17", RTLD_NOW | RTLD_NOLOAD))
        defer { dlclose(lws) }
        let lwsOwn = try #require(dlsym(lws, "_lws_log"))
        let bound = try #require(dlsym(nil, "_lws_log"))
        #expect(bound != lwsOwn)

        // ERR and WARN are what every server and client here sets: other tests running meanwhile leave it so.
        lanpush_lws_set_log_level(Int32(LLL_ERR | LLL_WARN)) { _, line in
            guard let line else { return }
            let text = String(cString: line)
            emitted.update { $0.append(text) }
        }
        defer { lanpush_lws_set_log_level(Int32(LLL_ERR | LLL_WARN), lwsl_emit_stderr) }
        lanpush_lws_log_line(Int32(LLL_PARSER), "log filter test: parser\n")
        lanpush_lws_log_line(Int32(LLL_NOTICE), "log filter test: notice\n")
        lanpush_lws_log_line(Int32(LLL_ERR), "log filter test: error\n")
        lanpush_lws_log_line(Int32(LLL_WARN), "log filter test: warning\n")
        let mine = emitted.get().filter { $0.contains("log filter test") }
        #expect(mine.count == 2 && mine[0].contains("error") && mine[1].contains("warning"), "\(mine)")

        // Through the filter every argument arrives as lws passed it: registers, the stack, a floating-point one.
        lanpush_lws_log_sample(Int32(LLL_PARSER))
        lanpush_lws_log_sample(Int32(LLL_ERR))
        let samples = emitted.get().filter { $0.contains("log filter sample") }
        #expect(samples.count == 1 && samples[0].hasSuffix("log filter sample: -1 two 3 4 5 6 7.5 eight\n"), "\(samples)")
    }
}
