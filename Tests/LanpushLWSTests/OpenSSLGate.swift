import Foundation

/// Keeps this test process's lws contexts from being created while a test's `wss://` handshake is under way.
///
/// lws 4.1 keeps the slot where an OpenSSL connection finds its lws connection (`SSL_get_ex_data`) in one
/// process-wide index, and takes a new index every time a context initialises OpenSSL
/// (`LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT`, in `lws_context_init_ssl_library`). A handshake that began before such a
/// context was created looks its connection up under the new index in the certificate check, finds nothing
/// ("OpenSSL_client_verify_callback: can't get wsi from ssl privdata") and fails. A gateway has one context, made
/// once at start, so this never happens to it; the test suite makes hundreds, in parallel, next to its few `wss://`
/// handshakes, and one of them failed that way in a full run. The creations that initialise OpenSSL and the
/// handshakes therefore take turns here (every context this target's tests make goes through `creating`).
enum OpenSSLGate {
    private static let lock = NSLock()

    /// Creates a context; while `initialisesOpenSSL`, not during a handshake.
    static func creating<T>(_ initialisesOpenSSL: Bool, _ make: () throws -> T) rethrows -> T {
        guard initialisesOpenSSL else { return try make() }
        lock.lock()
        defer { lock.unlock() }
        return try make()
    }

    /// Runs `handshake` (start a `wss://` connection and wait for its outcome) with no context being created.
    static func handshaking<T>(_ handshake: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try handshake()
    }
}
