import CLibWebSockets

/// Which event loop an lws context runs on.
public enum LWSEventLoopKind: String, Sendable {
    /// lws's libuv plugin on a loop the adapter owns (epoll on Linux). Falls back to ``poll`` when the plugin
    /// (Debian's `libwebsockets-evlib-uv`) cannot be loaded.
    case libuv
    /// lws's built-in loop: one `poll()` over every connection per turn.
    case poll
}

/// The loop an lws context is serviced by.
///
/// Why not lws's own loop: it calls `poll()` over every open connection on every turn, so with 1,000 idle
/// sessions each wake-up (an HTTP request, a cross-thread wake, an ack) costs a scan of 1,000 sockets in the
/// kernel — measured at ~60 % of the daemon's CPU at 1,000 updates/s (docs/BENCHMARKS.md). With an event
/// library each socket is registered with epoll once and a turn costs only the sockets that are ready.
///
/// Why libuv and not libev (both plugins ship with Debian's lws 4.1.6): lws 4.1's libev glue re-arms its
/// timer with `ev_timer_set` on a running watcher, which libev ignores, so a timer earlier than the one
/// already armed fires late (seconds late, measured); libuv's `uv_timer_start` re-arms correctly.
///
/// The loop is *foreign* to lws (created here, handed over in `foreign_loops`): lws installs no signal
/// handlers of its own (the daemon owns its signals) and never runs the loop by itself, so ``runOnce(_:)``
/// returns after every turn and the owner decides when to stop. lws closes its libuv handles
/// asynchronously: ``destroy()`` runs the loop until they are closed — call it right after
/// `lws_context_destroy` and before freeing anything lws points into.
///
/// Threading: loop thread only, like the context it serves (creation on the creating thread before `run`).
final class EventLoop {
    private(set) var kind: LWSEventLoopKind = .poll
    private var loop: UnsafeMutableRawPointer?
    private let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    init() {
        foreignLoops = .allocate(capacity: 1)
        foreignLoops.initialize(to: nil)
    }

    deinit {
        destroy()
        foreignLoops.deinitialize(count: 1)
        foreignLoops.deallocate()
    }

    /// Creates the context on the wanted loop (``LWSEventLoopKind/poll`` when libuv is unavailable).
    /// `info` must describe a single-threaded context.
    func createContext(_ info: inout lws_context_creation_info, want: LWSEventLoopKind, fdBudget: Int) -> OpaquePointer? {
        if want == .libuv, let uvLoop = lanpush_uv_loop_new() {
            var withLoop = info
            withLoop.options |= lanpush_opt_libuv()
            foreignLoops.pointee = uvLoop
            withLoop.foreign_loops = foreignLoops
            if let ctx = createContextWithFDBudget(&withLoop, budget: fdBudget) {
                loop = uvLoop
                kind = .libuv
                return ctx
            }
            foreignLoops.pointee = nil
            lanpush_uv_loop_finish(uvLoop)
        }
        kind = .poll
        return createContextWithFDBudget(&info, budget: fdBudget)
    }

    /// One turn: waits for at least one event (a socket, a timer, `lws_cancel_service`) and handles every
    /// ready one. Returns false when lws reports a fatal service error (poll loop only).
    func runOnce(_ ctx: OpaquePointer) -> Bool {
        if let loop {
            lanpush_uv_run_once(loop)
            return true
        }
        return lws_service(ctx, 0) >= 0
    }

    /// The read end of lws's cancel pipe on the libuv loop; `nil` on the poll loop (which closes it once).
    func eventPipeDescriptor() -> Int32? {
        guard let loop else { return nil }
        let fd = lanpush_uv_event_pipe_fd(loop)
        return fd >= 0 ? fd : nil
    }

    /// After `lws_context_destroy`: lets lws finish closing its handles, then frees the loop. Idempotent.
    func destroy() {
        guard let l = loop else { return }
        loop = nil
        foreignLoops.pointee = nil
        lanpush_uv_loop_finish(l)
    }
}
