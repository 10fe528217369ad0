import CLibWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// Who may open a connection: at most ``LWSServerOptions/pendingPerAddress`` connections per peer address may be
/// still sending their request headers, and at most ``LWSServerOptions/connectionsPerAddress`` HTTP connections
/// per address may be open at all (idle keep-alive ones included); past either, the next one from the address is
/// refused at `accept`. A connection that becomes a WebSocket leaves the second count: sessions have limits of their
/// own (the gateway's).
///
/// Why at `accept`: lws 4.1 gives every new connection a header table at once and keeps it until the headers are
/// parsed (or the header timeout), so connections that send nothing hold tables the real clients need. Counting
/// per address keeps one host from filling the pool; the header timeout bounds how long any connection can hold
/// one.
///
/// A connection counts from `LWS_CALLBACK_FILTER_NETWORK_CONNECTION` (the only place lws shows the address before
/// any byte is read) until its first request's headers are parsed or it goes away. lws gives the filter a socket,
/// not yet a connection: the count is keyed by socket until `LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED` names the
/// connection.
///
/// Loop thread only.
struct ConnectionAdmission {
    /// A peer address in 16 bytes (IPv4 as its IPv4-mapped IPv6 form, so both spellings count together).
    struct PeerKey: Hashable {
        var high: UInt64
        var low: UInt64
    }

    let limit: Int
    /// Open HTTP connections per address (``LWSServerOptions/connectionsPerAddress``).
    let openLimit: Int
    private var pendingByPeer: [PeerKey: Int] = [:]
    private var openByPeer: [PeerKey: Int] = [:]
    /// Open HTTP connections, bound to their peer at `bind`.
    private var openConnections: [OpaquePointer: PeerKey] = [:]
    /// Accepted sockets not yet bound to a connection.
    private var acceptedSockets: [Int32: PeerKey] = [:]
    /// Connections still sending their first request's headers, with the time their header timeout passes.
    private var pendingConnections: [OpaquePointer: (key: PeerKey, deadline: Int64)] = [:]

    init(limit: Int, openLimit: Int = .max) {
        self.limit = limit
        self.openLimit = openLimit
    }

    /// `LWS_CALLBACK_FILTER_NETWORK_CONNECTION`: `false` refuses the socket (lws closes it).
    mutating func admit(_ args: UnsafeMutableRawPointer?) -> Bool {
        guard let args else { return true }
        let filter = args.assumingMemoryBound(to: lws_filter_network_conn_args.self)
        let fd = Int32(filter.pointee.accept_fd)
        // A socket number lws never bound to a connection (its adoption failed) is free again: forget it.
        if let stale = acceptedSockets.removeValue(forKey: fd) {
            release(stale)
            Self.decrement(&openByPeer, stale)
        }
        guard let key = Self.key(&filter.pointee.cli_addr) else { return true }
        let pending = pendingByPeer[key, default: 0]
        let open = openByPeer[key, default: 0]
        guard pending < limit, open < openLimit else { return false }
        pendingByPeer[key] = pending + 1
        openByPeer[key] = open + 1
        acceptedSockets[fd] = key
        return true
    }

    /// `LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED`: the accepted socket is now the connection `wsi`, whose
    /// headers are due by `deadline` (lws's microsecond clock).
    mutating func bind(_ wsi: OpaquePointer, deadline: Int64) {
        guard !acceptedSockets.isEmpty,
            let key = acceptedSockets.removeValue(forKey: Int32(lws_get_socket_fd(wsi)))
        else { return }
        pendingConnections[wsi] = (key, deadline)
        openConnections[wsi] = key
    }

    /// The connection closed, or became a WebSocket: it no longer counts among its address's open connections.
    /// Idempotent.
    mutating func connectionDone(_ wsi: OpaquePointer) {
        headersDone(wsi)
        guard !openConnections.isEmpty, let key = openConnections.removeValue(forKey: wsi) else { return }
        Self.decrement(&openByPeer, key)
    }

    /// Open HTTP connections over every address.
    var openTotal: Int { openByPeer.values.reduce(0, +) }

    /// Connections still sending their first request's headers.
    var hasPending: Bool { !pendingConnections.isEmpty }

    /// Removes and returns the connections whose headers were due by `now`.
    mutating func takeExpired(now: Int64) -> [OpaquePointer] {
        var expired: [OpaquePointer] = []
        for (wsi, entry) in pendingConnections where entry.deadline <= now { expired.append(wsi) }
        for wsi in expired { headersDone(wsi) }
        return expired
    }

    /// The connection's headers are parsed, or it is gone. Idempotent.
    mutating func headersDone(_ wsi: OpaquePointer) {
        guard !pendingConnections.isEmpty, let entry = pendingConnections.removeValue(forKey: wsi) else { return }
        release(entry.key)
    }

    /// Connections still sending their first request's headers, over every address.
    var pendingTotal: Int { pendingByPeer.values.reduce(0, +) }

    private mutating func release(_ key: PeerKey) {
        Self.decrement(&pendingByPeer, key)
    }

    private static func decrement(_ counts: inout [PeerKey: Int], _ key: PeerKey) {
        guard let n = counts[key] else { return }
        if n <= 1 { counts.removeValue(forKey: key) } else { counts[key] = n - 1 }
    }

    private static func key(_ storage: UnsafeMutablePointer<sockaddr_storage>) -> PeerKey? {
        switch Int32(storage.pointee.ss_family) {
        case AF_INET:
            return storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                PeerKey(high: 0, low: 0xFFFF_0000_0000 | UInt64(UInt32(bigEndian: sin.pointee.sin_addr.s_addr)))
            }
        case AF_INET6:
            return storage.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                withUnsafeBytes(of: sin6.pointee.sin6_addr) { raw in
                    PeerKey(
                        high: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                        low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                }
            }
        default:
            return nil
        }
    }
}
