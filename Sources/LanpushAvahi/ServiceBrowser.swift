import CAvahiClient

/// One service found by `ServiceBrowser`.
public struct DiscoveredService: Sendable, Equatable, Hashable {
    /// Service instance name, e.g. "Home gateway".
    public let name: String
    /// Service type, e.g. "_lanpush._tcp".
    public let type: String
    /// Browse domain, normally "local".
    public let domain: String
    /// The target host name from the SRV record, e.g. "nas.local".
    public let hostName: String
    /// The preferred address (IPv4 first) as text.
    public let address: String
    /// Every address the service resolved to (over all interfaces and protocols), IPv4 first.
    public let addresses: [String]
    public let port: UInt16
    /// TXT record entries; a bare `key` maps to "".
    public let txt: [String: String]

    public init(
        name: String, type: String, domain: String, hostName: String, address: String, addresses: [String],
        port: UInt16, txt: [String: String]
    ) {
        self.name = name
        self.type = type
        self.domain = domain
        self.hostName = hostName
        self.address = address
        self.addresses = addresses
        self.port = port
        self.txt = txt
    }
}

/// One-shot DNS-SD browsing through avahi-daemon (for `lanpush discover`).
///
/// Threading: `browse` blocks the calling thread for at most about `timeout` seconds and may be called from
/// any thread, concurrently; each call runs its own Avahi client and threaded poll, torn down before it returns.
public enum ServiceBrowser {
    /// Browses for `type` and resolves every instance found. Returns when avahi-daemon reports it has
    /// listed everything it knows ("all for now") and every resolution has finished, or after `timeout`
    /// seconds, whichever comes first; sorted by name. Returns [] when avahi-daemon cannot be reached:
    /// use `browseResult` to tell that apart from "nothing found".
    public static func browse(type: String = "_lanpush._tcp", timeout: Double) -> [DiscoveredService] {
        (try? browseResult(type: type, timeout: timeout).get()) ?? []
    }

    /// Like `browse`, but reports why browsing was impossible (no D-Bus, avahi-daemon not running, ...).
    public static func browseResult(
        type: String = "_lanpush._tcp", timeout: Double
    ) -> Result<[DiscoveredService], AvahiError> {
        guard let poll = avahi_threaded_poll_new() else {
            return .failure(AvahiError(code: Int32(AVAHI_ERR_NO_MEMORY)))
        }
        let session = BrowseSession()
        return withExtendedLifetime(session) {
            let userdata = Unmanaged.passUnretained(session).toOpaque()
            var error: Int32 = 0
            // Without NO_FAIL: fail at once when the daemon is not running.
            guard
                let client = avahi_client_new(
                    avahi_threaded_poll_get(poll), AvahiClientFlags(0),
                    { c, clientState, userdata in
                        guard let c, let userdata else { return }
                        Unmanaged<BrowseSession>.fromOpaque(userdata).takeUnretainedValue()
                            .clientStateChanged(c, clientState)
                    },
                    userdata, &error)
            else {
                avahi_threaded_poll_free(poll)
                return .failure(AvahiError(code: error))
            }
            let browser = avahi_service_browser_new(
                client, LP_AVAHI_IF_UNSPEC, LP_AVAHI_PROTO_UNSPEC, type, nil, AvahiLookupFlags(0),
                { b, interface, proto, event, name, type, domain, _, userdata in
                    guard let b, let userdata else { return }
                    Unmanaged<BrowseSession>.fromOpaque(userdata).takeUnretainedValue()
                        .browserEvent(b, interface, proto, event, name, type, domain)
                },
                userdata)
            guard browser != nil else {
                let code = avahi_client_errno(client)
                avahi_client_free(client)
                avahi_threaded_poll_free(poll)
                return .failure(AvahiError(code: code))
            }

            session.sync.setDeadline(secondsFromNow: max(0, timeout))
            if avahi_threaded_poll_start(poll) < 0 {
                avahi_client_free(client)
                avahi_threaded_poll_free(poll)
                return .failure(AvahiError(code: Int32(AVAHI_ERR_FAILURE)))
            }
            session.sync.withLock {
                while !session.finished {
                    if session.sync.waitUntilDeadline() { break }
                }
            }
            avahi_threaded_poll_stop(poll)
            avahi_client_free(client)  // frees the browser and any resolver still running
            avahi_threaded_poll_free(poll)

            return session.sync.withLock {
                if let failure = session.failure, session.found.isEmpty { return .failure(failure) }
                return .success(session.results())
            }
        }
    }
}

/// State of one `browse` call. Fields are guarded by `sync`; Avahi objects are touched only on the poll
/// thread (callbacks) or by `browseResult` while that thread is not running.
private final class BrowseSession: @unchecked Sendable {
    struct Key: Hashable {
        let interface: Int32
        let proto: Int32
        let name: String
        let type: String
        let domain: String
    }

    struct Instance {
        let hostName: String
        let address: String
        let isIPv4: Bool
        let port: UInt16
        let txt: [String: String]
    }

    let sync = SyncLock()
    var found: [Key: Instance] = [:]
    var pendingResolvers = 0
    var allForNow = false
    var failure: AvahiError?

    /// Whether the caller may stop waiting (sync held).
    var finished: Bool { failure != nil || (allForNow && pendingResolvers == 0) }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    func clientStateChanged(_ c: OpaquePointer, _ clientState: AvahiClientState) {
        if clientState == AVAHI_CLIENT_FAILURE {
            finish(with: AvahiError(code: avahi_client_errno(c)))
        }
    }

    func browserEvent(
        _ b: OpaquePointer, _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let type, let domain, let c = avahi_service_browser_get_client(b) else { return }
            sync.withLock { pendingResolvers += 1 }
            let resolver = avahi_service_resolver_new(
                c, interface, proto, name, type, domain, LP_AVAHI_PROTO_UNSPEC, AvahiLookupFlags(0),
                { r, interface, proto, event, name, type, domain, hostName, address, port, txt, _, userdata in
                    guard let r, let userdata else { return }
                    Unmanaged<BrowseSession>.fromOpaque(userdata).takeUnretainedValue()
                        .resolved(interface, proto, event, name, type, domain, hostName, address, port, txt)
                    avahi_service_resolver_free(r)
                },
                userdata)
            if resolver == nil {
                sync.withLock {
                    pendingResolvers -= 1
                    if finished { sync.broadcast() }
                }
            }

        case AVAHI_BROWSER_REMOVE:
            guard let name, let type, let domain else { return }
            let key = Key(
                interface: interface, proto: proto, name: String(cString: name), type: String(cString: type),
                domain: String(cString: domain))
            sync.withLock { _ = found.removeValue(forKey: key) }

        case AVAHI_BROWSER_ALL_FOR_NOW:
            sync.withLock {
                allForNow = true
                sync.broadcast()
            }

        case AVAHI_BROWSER_FAILURE:
            let code = avahi_service_browser_get_client(b).map { avahi_client_errno($0) } ?? Int32(AVAHI_ERR_FAILURE)
            finish(with: AvahiError(code: code))

        default:  // AVAHI_BROWSER_CACHE_EXHAUSTED
            break
        }
    }

    func resolved(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiResolverEvent,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?,
        _ hostName: UnsafePointer<CChar>?, _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
        _ txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        var instance: (Key, Instance)?
        if event == AVAHI_RESOLVER_FOUND, let name, let type, let domain, let address {
            var buffer = [CChar](repeating: 0, count: Int(LP_AVAHI_ADDRESS_STR_MAX) + 1)
            avahi_address_snprint(&buffer, buffer.count, address)
            let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let key = Key(
                interface: interface, proto: proto, name: String(cString: name), type: String(cString: type),
                domain: String(cString: domain))
            instance = (
                key,
                Instance(
                    hostName: hostName.map { String(cString: $0) } ?? "",
                    address: text,
                    isIPv4: address.pointee.proto == LP_AVAHI_PROTO_INET,
                    port: port,
                    txt: readStringList(txt))
            )
        }
        sync.withLock {
            if let (key, value) = instance { found[key] = value }
            pendingResolvers -= 1
            if finished { sync.broadcast() }
        }
    }

    private func finish(with error: AvahiError) {
        sync.withLock {
            if failure == nil { failure = error }
            sync.broadcast()
        }
    }

    /// One entry per (name, type, domain), merging the interfaces and protocols it was seen on (sync held).
    func results() -> [DiscoveredService] {
        struct ServiceKey: Hashable {
            let name: String
            let type: String
            let domain: String
        }
        var grouped: [ServiceKey: [(Key, Instance)]] = [:]
        for (key, value) in found {
            grouped[ServiceKey(name: key.name, type: key.type, domain: key.domain), default: []].append((key, value))
        }
        var services: [DiscoveredService] = []
        for (serviceKey, entries) in grouped {
            let ordered = entries.sorted { a, b in
                if a.1.isIPv4 != b.1.isIPv4 { return a.1.isIPv4 }
                if a.0.interface != b.0.interface { return a.0.interface < b.0.interface }
                return a.1.address < b.1.address
            }
            let best = ordered[0].1
            var addresses: [String] = []
            for entry in ordered where !addresses.contains(entry.1.address) {
                addresses.append(entry.1.address)
            }
            services.append(
                DiscoveredService(
                    name: serviceKey.name, type: serviceKey.type, domain: serviceKey.domain,
                    hostName: best.hostName, address: best.address, addresses: addresses, port: best.port,
                    txt: best.txt))
        }
        return services.sorted { ($0.name, $0.type, $0.domain) < ($1.name, $1.type, $1.domain) }
    }
}
