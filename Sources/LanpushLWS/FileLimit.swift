import CLibWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// Creates an lws context with an fd budget *and* lws's fast fd table.
///
/// lws 4.1 sizes its fd→connection table from the soft RLIMIT_NOFILE at `lws_create_context`. When
/// `fd_limit_per_thread` is below that limit it marks the table "unrelated to ulimit" and from then on
/// `wsi_from_fd` scans it linearly on every socket event (measured: ~6k instructions per event with 1,000
/// sessions, growing with every session; docs/BENCHMARKS.md). The budget itself is wanted: lws stops
/// accepting at the budget, and a budget below the process limit keeps `accept()` from ever failing with
/// EMFILE (lws 4.1 spins on that).
///
/// So the context is created while the soft limit equals the budget (lws then indexes its table directly),
/// and the previous limit is restored right after: lws refuses connections at the budget, while the rest of the
/// process (SQLite, logs, other sockets) keeps the headroom above it. A socket whose number lands at or above
/// the budget is refused by lws (closed at once), never crashes or spins.
///
/// Only the creating thread touches the limit, for the duration of `lws_create_context`.
func createContextWithFDBudget(_ info: inout lws_context_creation_info, budget: Int) -> OpaquePointer? {
    var limit = rlimit()
    let resource = Int32(RLIMIT_NOFILE.rawValue)
    // Small budgets (a CLI's few connections) scan a small table anyway, and a low temporary limit could sit
    // below fds the process already holds (lws then cannot make its own pipe): leave those alone.
    guard budget >= 1024, getrlimit(resource, &limit) == 0, limit.rlim_cur > rlim_t(budget) else {
        return lws_create_context(&info)
    }
    let saved = limit
    limit.rlim_cur = rlim_t(budget)
    guard setrlimit(resource, &limit) == 0 else { return lws_create_context(&info) }
    var withSaved = saved
    defer { _ = setrlimit(resource, &withSaved) }
    return lws_create_context(&info)
}
