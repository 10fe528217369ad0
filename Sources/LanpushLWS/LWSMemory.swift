import CLibWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// An lws protocol callback, as lws calls it.
typealias LWSCallback = @convention(c) (
    OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int
) -> Int32

/// C memory lws keeps pointers into — names, the protocols array, the retry (keepalive) policy — allocated once
/// and freed together by ``release()``.
///
/// lws copies none of what a context, a vhost or a client connection is created with: it reads these for the
/// whole life of the object. So they are freed only after `lws_context_destroy` and after the event loop has
/// finished closing its handles (``LoopContext/destroy(willDestroy:didDestroy:)``), or, for one client
/// connection's strings, when lws destroys that connection.
///
/// Loop thread only (or the creating thread before the loop runs).
final class LWSMemory {
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private var protocolTables: [(UnsafeMutablePointer<lws_protocols>, count: Int)] = []
    private var retryPolicies: [UnsafeMutablePointer<lws_retry_bo_t>] = []
    private var retryTables: [UnsafeMutablePointer<UInt32>] = []

    init() {}

    deinit { release() }

    /// A NUL-terminated copy of `s`.
    func string(_ s: String) -> UnsafePointer<CChar> {
        guard let p = strdup(s) else { fatalError("out of memory") }
        strings.append(p)
        return UnsafePointer(p)
    }

    /// A protocols array: one protocol per name, all on the same callback (ids from `id` on), and lws's
    /// terminating empty entry.
    func protocols(
        names: [String], callback: LWSCallback, perSessionDataSize: Int, rxBufferSize: Int, id: UInt32,
        txPacketSize: Int, rxBufferSizes: [String: Int] = [:]
    ) -> UnsafePointer<lws_protocols> {
        let table = UnsafeMutablePointer<lws_protocols>.allocate(capacity: names.count + 1)
        for (i, name) in names.enumerated() {
            var proto = lws_protocols()
            proto.name = string(name)
            proto.callback = callback
            proto.per_session_data_size = perSessionDataSize
            proto.rx_buffer_size = rxBufferSizes[name] ?? rxBufferSize
            proto.id = id + UInt32(i)
            proto.user = nil
            proto.tx_packet_size = txPacketSize
            (table + i).initialize(to: proto)
        }
        (table + names.count).initialize(to: lws_protocols())
        protocolTables.append((table, names.count + 1))
        return UnsafePointer(table)
    }

    /// lws's validity policy: a PING after `pingSeconds` without a PONG, hang up after `hangupSeconds`.
    func retryPolicy(pingSeconds: Int, hangupSeconds: Int) -> UnsafePointer<lws_retry_bo_t> {
        let table = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
        table.initialize(to: 1000)
        var retry = lws_retry_bo_t()
        retry.retry_ms_table = UnsafePointer(table)
        retry.retry_ms_table_count = 1
        retry.conceal_count = 1
        retry.secs_since_valid_ping = UInt16(clamping: pingSeconds)
        retry.secs_since_valid_hangup = UInt16(clamping: hangupSeconds)
        retry.jitter_percent = 0
        let policy = UnsafeMutablePointer<lws_retry_bo_t>.allocate(capacity: 1)
        policy.initialize(to: retry)
        retryTables.append(table)
        retryPolicies.append(policy)
        return UnsafePointer(policy)
    }

    /// Frees everything; only once lws can no longer read it. Idempotent.
    func release() {
        for p in strings { free(p) }
        strings.removeAll()
        for (t, count) in protocolTables {
            t.deinitialize(count: count)
            t.deallocate()
        }
        protocolTables.removeAll()
        for p in retryPolicies {
            p.deinitialize(count: 1)
            p.deallocate()
        }
        retryPolicies.removeAll()
        for t in retryTables {
            t.deinitialize(count: 1)
            t.deallocate()
        }
        retryTables.removeAll()
    }
}
