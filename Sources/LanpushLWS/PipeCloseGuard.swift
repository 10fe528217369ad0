#if canImport(Glibc)
    import Glibc
#endif

/// Keeps lws's second close of its cancel pipe from closing somebody else's descriptor.
///
/// lws 4.1 on libuv closes its cancel pipe (what `lws_cancel_service` signals: an eventfd on Linux) twice when a
/// context is destroyed: `lws_destroy_event_pipe` asks libuv to close the pipe's handle and closes the pipe's
/// descriptors at once (`lws_plat_pipe_close`), and libuv's close callback for that handle, run later from the
/// loop, closes the same number again (`__lws_close_free_wsi_final`). A descriptor another thread opens in between
/// gets the lowest free number — often that one — and lws closes it under that thread: a relay request's socket, a
/// database file, a directory being read.
///
/// The guard takes the number back as soon as lws has let it go, with a placeholder of its own (a pipe, so that its
/// inode tells it apart), so the second close lands on the placeholder. It tries right after `lws_context_destroy`
/// returns and, on a server's context, before that at every callback the teardown makes (lws closes the pipe first,
/// then every connection, each with a callback), which narrows the window to the time between two callbacks. A
/// client-only context (`WSClientLoop`) is guarded only from when `lws_context_destroy` returns. Whoever takes the
/// number even sooner still loses it: that is lws's bug, made rare, not gone.
///
/// Loop thread only (the thread that destroys the context).
final class PipeCloseGuard {
    private let number: Int32
    /// The pipe's identity, to tell "lws has not closed it yet" from "someone else holds the number now" (every
    /// eventfd shares one inode: another eventfd on the number just keeps the guard waiting, which is harmless).
    private let pipeIdentity: (dev: UInt, ino: UInt)
    private var armed = true
    /// What goes onto the number: the read end of a pipe of the guard's own, made before lws lets the number go
    /// (made after, it would itself take the lowest free number — that one — and be closed with it).
    private var source: Int32
    private let sourceIdentity: (dev: UInt, ino: UInt)
    /// The placeholder holds the number.
    private var holding = false

    /// `nil` when `descriptor` cannot be read or no pipe can be made (then nothing is guarded).
    init?(descriptor: Int32) {
        guard let id = Self.identity(of: descriptor) else { return nil }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        close(ends[1])
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        guard let sid = Self.identity(of: ends[0]) else {
            close(ends[0])
            return nil
        }
        number = descriptor
        pipeIdentity = id
        source = ends[0]
        sourceIdentity = sid
    }

    deinit { release() }

    /// Puts the placeholder on the number if lws has closed it; once it holds (or someone else does), a no-op.
    func tryHold() {
        guard armed else { return }
        if let current = Self.identity(of: number) {
            // Still lws's pipe: not closed yet, try again later. Anything else: taken already, nothing to save.
            if current != pipeIdentity { armed = false }
            return
        }
        armed = false
        // F_DUPFD: the lowest free number at or above `number`, taken atomically; `number` itself while still free.
        let dup = fcntl(source, F_DUPFD_CLOEXEC, number)
        if dup == number {
            holding = true
        } else if dup >= 0 {
            close(dup)
        }
    }

    /// After the loop has run lws's close callbacks: closes the placeholder if lws did not (a later lws that closes
    /// once); if lws did, the number may already be someone else's and is left alone.
    func release() {
        armed = false
        if holding, let current = Self.identity(of: number), current == sourceIdentity { close(number) }
        holding = false
        if source >= 0 {
            close(source)
            source = -1
        }
    }

    private static func identity(of fd: Int32) -> (dev: UInt, ino: UInt)? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return (UInt(st.st_dev), UInt(st.st_ino))
    }
}
