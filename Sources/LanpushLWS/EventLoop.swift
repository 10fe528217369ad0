import CLibWebSockets

/// Which event loop an lws context runs on.
public enum LWSEventLoopKind: String, Sendable {
    /// lws's libev plugin on a loop the adapter owns (epoll on Linux), with the adapter's own timers. Falls back
    /// to ``libuv``, then ``poll``, when the plugin (Debian's `libwebsockets-evlib-ev`) cannot be loaded.
    case libev
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
/// Why libev first: lws changes a socket's interest (POLLIN/POLLOUT) several times per HTTP request — on at the
/// end of a transaction, off at the next writable pass, in again when a header table is attached. libuv's
/// `uv_poll_start` stops the watcher first, which removes the descriptor from epoll at once and adds it back at
/// the next poll: six `epoll_ctl` per keep-alive request, four of them a removal or an insertion. libev keeps
/// descriptors registered, applies only the net change of a turn before it polls, and modifies in place: two
/// `epoll_ctl(MOD)` per request.
///
/// What libev needs around it: lws 4.1's libev glue re-arms its one timer with `ev_timer_set` on a running
/// watcher, which libev ignores, so an lws timer earlier than the one armed waits until the armed one fires or
/// until lws next handles I/O. The adapter's own timers (``LoopTimers``) therefore arm a libev timer directly,
/// and a nudge every ``lwsTimerNudgeSeconds`` (`lws_cancel_service`, which lws handles as I/O) bounds how late
/// lws's own timeouts — header, keep-alive, close handshake, all whole seconds — can run.
///
/// The loop is *foreign* to lws (created here, handed over in `foreign_loops`): lws installs no signal
/// handlers of its own (the daemon owns its signals) and never runs the loop by itself, so ``runOnce(_:)``
/// returns after every turn and the owner decides when to stop. Call ``destroy()`` right after
/// `lws_context_destroy` and before freeing anything lws points into: lws closes its libuv handles
/// asynchronously (the loop runs until they are closed); on libev it stops its watchers inside the destroy.
///
/// Threading: loop thread only, like the context it serves (creation on the creating thread before `run`).
final class EventLoop {
    /// How late lws's own timers may run on libev while no I/O comes.
    static let lwsTimerNudgeSeconds = 1.0

    private(set) var kind: LWSEventLoopKind = .poll
    private var uvLoop: UnsafeMutableRawPointer?
    private var evLoop: UnsafeMutableRawPointer?
    private var nudge: UnsafeMutablePointer<lanpush_ev_timer_t>?
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

    /// The libev loop when that is the kind in use: the adapter's timers arm on it directly.
    var libevLoop: UnsafeMutableRawPointer? { evLoop }

    /// Creates the context on the wanted loop, or the next one down (libev, libuv, poll) when a plugin cannot be
    /// loaded. `info` must describe a single-threaded context.
    func createContext(_ info: inout lws_context_creation_info, want: LWSEventLoopKind, fdBudget: Int) -> OpaquePointer? {
        if want == .libev, let ev = lanpush_ev_loop_new() {
            if let ctx = create(&info, on: ev, option: lanpush_opt_libev(), fdBudget: fdBudget) {
                evLoop = ev
                kind = .libev
                nudge = lanpush_ev_nudge_new(ev, UnsafeMutableRawPointer(ctx), Self.lwsTimerNudgeSeconds)
                return ctx
            }
            lanpush_ev_loop_free(ev)
        }
        if want != .poll, let uv = lanpush_uv_loop_new() {
            if let ctx = create(&info, on: uv, option: lanpush_opt_libuv(), fdBudget: fdBudget) {
                uvLoop = uv
                kind = .libuv
                return ctx
            }
            lanpush_uv_loop_finish(uv)
        }
        kind = .poll
        return createContextWithFDBudget(&info, budget: fdBudget)
    }

    private func create(
        _ info: inout lws_context_creation_info, on loop: UnsafeMutableRawPointer, option: UInt64, fdBudget: Int
    ) -> OpaquePointer? {
        var withLoop = info
        withLoop.options |= option
        foreignLoops.pointee = loop
        withLoop.foreign_loops = foreignLoops
        if let ctx = createContextWithFDBudget(&withLoop, budget: fdBudget) { return ctx }
        foreignLoops.pointee = nil
        return nil
    }

    /// One turn: waits for at least one event (a socket, a timer, `lws_cancel_service`) and handles every
    /// ready one. Returns false when lws reports a fatal service error (poll loop only).
    func runOnce(_ ctx: OpaquePointer) -> Bool {
        if let evLoop {
            lanpush_ev_run_once(evLoop)
            return true
        }
        if let uvLoop {
            lanpush_uv_run_once(uvLoop)
            return true
        }
        return lws_service(ctx, 0) >= 0
    }

    /// The read end of lws's cancel pipe on the libuv loop, which closes it twice at teardown (PipeCloseGuard.swift);
    /// `nil` on the other loops (each closes it once).
    func eventPipeDescriptor() -> Int32? {
        guard let uvLoop else { return nil }
        let fd = lanpush_uv_event_pipe_fd(uvLoop)
        return fd >= 0 ? fd : nil
    }

    /// After `lws_context_destroy`: lets lws finish closing its handles, then frees the loop. Idempotent.
    func destroy() {
        foreignLoops.pointee = nil
        if let ev = evLoop {
            evLoop = nil
            lanpush_ev_timer_free(ev, nudge)
            nudge = nil
            lanpush_ev_loop_free(ev)
        }
        if let uv = uvLoop {
            uvLoop = nil
            lanpush_uv_loop_finish(uv)
        }
    }
}
