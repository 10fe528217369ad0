import CAvahiClient

/// Publishes one DNS-SD service (by default `_lanpush._tcp`) through avahi-daemon, and keeps it published.
///
/// Behaviour:
/// - Uses an `AvahiThreadedPoll` and `AVAHI_CLIENT_NO_FAIL`: `start()` succeeds whether or not avahi-daemon
///   runs; the service appears as soon as the daemon does.
/// - avahi-daemon restart: the client enters `AVAHI_CLIENT_FAILURE` (`AVAHI_ERR_DISCONNECTED`); the publisher
///   frees the client (and its entry group) and creates a new one, which re-publishes by itself.
/// - No D-Bus system bus at all: `avahi_client_new` fails even with `NO_FAIL`; the publisher retries on a
///   timer, backing off from `retryInterval` (default 5 s) to `maxRetryInterval` (default 4 min), and logs one
///   warning per outage (another only if the reason changes) and one line when the bus is back, not one per retry.
/// - Service name collision (`AVAHI_ENTRY_GROUP_COLLISION`, or `AVAHI_ERR_COLLISION` from a local
///   registration): takes `avahi_alternative_service_name` ("name" → "name #2" → ...) and logs it.
///   A host name collision (`AVAHI_CLIENT_S_COLLISION`) is the daemon's business: the entry group is reset
///   and the service re-registered under the same service name with the daemon's new host name, as
///   Avahi's documentation prescribes.
/// - `stop()` withdraws the service (entry group reset + free: the daemon sends goodbye packets), frees the
///   client and stops and frees the poll. A publisher can be started again after `stop()`.
///
/// Threading:
/// - `start()`, `stop()`, `currentName`, `state` and `status` may be called from any thread.
///   `start()`/`stop()` are serialised; `stop()` blocks until the Avahi thread has exited.
/// - All Avahi objects (client, entry group, retry timer) are touched only on the Avahi poll thread — from
///   Avahi callbacks, which run with the poll lock held — or by `start()`/`stop()` while that thread is not
///   running. Public methods never take the poll lock, so nothing here can deadlock against a callback.
/// - The `log` closure is called on the Avahi thread (and on the caller's thread during `start()`), with the
///   poll lock held: it must be quick and must not call `start()` or `stop()` (reading `state` is fine).
/// - While started, the publisher keeps itself alive (the C callbacks reach it through an `Unmanaged`
///   pointer); call `stop()` to release it. `deinit` stops a publisher that was never started or is stopped.
public final class ServicePublisher: @unchecked Sendable {
    public let requestedName: String
    public let type: String
    public let port: UInt16
    public let txt: [(String, String)]
    public let retryInterval: Double
    public let maxRetryInterval: Double

    private let log: @Sendable (LogLevel, String) -> Void

    // Guarded by `lifecycle`: serialises start()/stop(); `poll` and `retained` change only under it.
    private let lifecycle = SyncLock()
    private var poll: OpaquePointer?  // AvahiThreadedPoll*
    private var retained: Unmanaged<ServicePublisher>?

    // Owned by the Avahi thread (callbacks, poll lock held) or by start()/stop() while that thread is not running.
    private var client: OpaquePointer?  // AvahiClient*
    private var group: OpaquePointer?  // AvahiEntryGroup*
    private var retryTimer: OpaquePointer?  // AvahiTimeout*
    private var workingName: String
    private var busReport = BusOutageReport()
    private var busBackoff: RetryBackoff
    // Failures Avahi reports once the bus is reachable (entry group, registration); reset when the service is up.
    private var publishBackoff: RetryBackoff
    private var daemonOutageLogged = false

    // Guarded by `statusLock` (a leaf lock: nothing else is taken while holding it).
    private let statusLock = SyncLock()
    private var _state: State = .stopped
    private var _name: String

    /// - Parameters:
    ///   - name: the service instance name (truncated to 63 bytes, one DNS label).
    ///   - type: the DNS-SD service type.
    ///   - port: the TCP port the service listens on.
    ///   - txt: TXT record entries `key=value`, published in this order.
    ///   - retryInterval: seconds before the first retry while D-Bus is unreachable or after a failure; each
    ///     further failure doubles the wait.
    ///   - maxRetryInterval: the longest wait between two attempts.
    ///   - log: receives diagnostics; see the threading notes on the type.
    public init(
        name: String,
        type: String = "_lanpush._tcp",
        port: UInt16,
        txt: [(String, String)],
        retryInterval: Double = 5,
        maxRetryInterval: Double = 240,
        log: @escaping @Sendable (LogLevel, String) -> Void
    ) {
        let label = truncatedToDNSLabel(name)
        self.requestedName = label
        self.type = type
        self.port = port
        self.txt = txt
        self.retryInterval = max(0.05, retryInterval)
        self.maxRetryInterval = max(self.retryInterval, maxRetryInterval)
        busBackoff = RetryBackoff(initial: self.retryInterval, maximum: self.maxRetryInterval)
        publishBackoff = busBackoff
        self.log = log
        self.workingName = label
        self._name = label
    }

    deinit {
        // A started publisher is retained by itself until stop(), so here it is never running.
        precondition(poll == nil, "ServicePublisher deallocated while started")
    }

    // MARK: - Public surface

    /// The name the service is published under (the requested one, or Avahi's alternative after a collision).
    public var currentName: String { statusLock.withLock { _name } }

    public var state: State { statusLock.withLock { _state } }

    public var status: Status {
        statusLock.withLock { Status(state: _state, name: _name, type: type, port: port) }
    }

    /// Starts publishing. Returns at once; the service appears when avahi-daemon is (or becomes) available.
    /// Calling `start()` on a started publisher does nothing.
    public func start() {
        lifecycle.lock()
        defer { lifecycle.unlock() }
        guard poll == nil else { return }

        guard let newPoll = avahi_threaded_poll_new() else {
            setStatus(.failed(reason: "cannot create the Avahi event loop", retrying: false))
            log(.error, "mDNS: cannot create the Avahi event loop; \(type) will not be published")
            return
        }
        poll = newPoll
        retained = Unmanaged.passRetained(self)
        workingName = requestedName
        busReport = BusOutageReport()
        busBackoff.reset()
        publishBackoff.reset()
        daemonOutageLogged = false
        setStatus(.waitingForDaemon, name: requestedName)

        // The poll thread is not running yet: this thread owns every Avahi object until
        // avahi_threaded_poll_start. The first client callback runs inside avahi_client_new, right here.
        connect()

        if avahi_threaded_poll_start(newPoll) < 0 {
            log(.error, "mDNS: cannot start the Avahi event loop thread; \(type) will not be published")
            teardown(newPoll)
            setStatus(.failed(reason: "cannot start the Avahi event loop thread", retrying: false))
        }
    }

    /// Withdraws the service and releases every Avahi resource. Blocks until the Avahi thread has exited.
    /// Must not be called from the `log` closure. Calling `stop()` on a stopped publisher does nothing.
    public func stop() {
        lifecycle.lock()
        defer { lifecycle.unlock() }
        guard let currentPoll = poll else { return }

        // Joins the Avahi thread: from here on this thread owns every Avahi object.
        avahi_threaded_poll_stop(currentPoll)
        let wasPublished = group != nil
        teardown(currentPoll)
        setStatus(.stopped)
        if wasPublished {
            log(.info, "mDNS: withdrew '\(workingName)' (\(type))")
        }
    }

    // MARK: - Teardown (lifecycle lock held, Avahi thread not running)

    private func teardown(_ currentPoll: OpaquePointer) {
        if let timer = retryTimer {
            lp_avahi_timeout_free(avahi_threaded_poll_get(currentPoll), timer)
            retryTimer = nil
        }
        freeClient()
        avahi_threaded_poll_free(currentPoll)
        poll = nil
        let me = retained
        retained = nil
        me?.release()  // balances passRetained in start(); `self` is still retained by the caller.
    }

    // MARK: - Avahi thread (or start/stop with the thread not running)

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Frees the entry group (withdrawing the service) and the client.
    private func freeClient() {
        if let g = group {
            avahi_entry_group_reset(g)
            avahi_entry_group_free(g)
            group = nil
        }
        if let c = client {
            avahi_client_free(c)
            client = nil
        }
    }

    /// Creates the Avahi client. On success the client's callback drives everything else; without a
    /// D-Bus system bus, schedules another attempt.
    private func connect() {
        guard let currentPoll = poll else { return }
        var error: Int32 = 0
        let newClient = avahi_client_new(
            avahi_threaded_poll_get(currentPoll),
            AVAHI_CLIENT_NO_FAIL,
            { c, clientState, userdata in
                guard let c, let userdata else { return }
                Unmanaged<ServicePublisher>.fromOpaque(userdata).takeUnretainedValue()
                    .clientStateChanged(c, clientState)
            },
            userdata,
            &error
        )
        guard let newClient else {
            // avahi_client_new freed the half-made client and anything a callback created on it.
            group = nil
            setStatus(.waitingForBus)
            let delay = busBackoff.delayAfterFailure()
            if busReport.failed(error: error) {
                log(
                    .warning,
                    "mDNS: cannot reach the D-Bus system bus at \(String(cString: lp_dbus_system_bus_address())) "
                        + "(avahi: \(avahiErrorText(error))); \(type) is not published — serving without discovery, "
                        + "retrying in \(formatSeconds(delay)), then less often, up to every "
                        + "\(formatSeconds(maxRetryInterval))")
            }
            scheduleRetry(after: delay)
            return
        }
        client = newClient
        busBackoff.reset()
        if busReport.reached() {
            log(.info, "mDNS: D-Bus system bus reachable again")
        }
    }

    private func clientStateChanged(_ c: OpaquePointer, _ clientState: AvahiClientState) {
        switch clientState {
        case AVAHI_CLIENT_S_RUNNING:
            if daemonOutageLogged {
                daemonOutageLogged = false
                log(.info, "mDNS: avahi-daemon is available again")
            }
            publish(on: c)

        case AVAHI_CLIENT_S_REGISTERING:
            // The daemon is (re-)establishing its host records; ours follow once it is running again.
            if let g = group { avahi_entry_group_reset(g) }
            setStatus(.registering)

        case AVAHI_CLIENT_S_COLLISION:
            if let g = group { avahi_entry_group_reset(g) }
            setStatus(.registering)
            log(
                .warning,
                "mDNS: host name collision on the network; avahi-daemon picks a new host name and '\(workingName)' "
                    + "is re-announced with it")

        case AVAHI_CLIENT_CONNECTING:
            setStatus(.waitingForDaemon)
            if !daemonOutageLogged {
                daemonOutageLogged = true
                log(
                    .warning,
                    "mDNS: avahi-daemon is not running; \(type) is not published — serving without discovery, "
                        + "it will be published when avahi-daemon starts")
            }

        case AVAHI_CLIENT_FAILURE:
            let error = avahi_client_errno(c)
            setStatus(.waitingForDaemon)
            if !daemonOutageLogged {
                daemonOutageLogged = true
                log(
                    .warning,
                    "mDNS: lost avahi-daemon (\(avahiErrorText(error))); '\(workingName)' is no longer announced — "
                        + "reconnecting")
            }
            // The client is dead. Free it (and its entry group) outside this callback, then create a new one:
            // with NO_FAIL it waits for the daemon and re-publishes by itself.
            scheduleRetry(after: 0)

        default:
            log(.debug, "mDNS: unexpected Avahi client state \(clientState.rawValue)")
        }
    }

    /// Registers the service on a running client, taking alternative names on local collisions.
    private func publish(on c: OpaquePointer) {
        if group == nil {
            group = avahi_entry_group_new(
                c,
                { g, groupState, userdata in
                    guard let g, let userdata else { return }
                    Unmanaged<ServicePublisher>.fromOpaque(userdata).takeUnretainedValue()
                        .groupStateChanged(g, groupState)
                },
                userdata
            )
            if group == nil {
                fail(avahi_client_errno(c), while: "creating the entry group")
                return
            }
        }
        guard let g = group else { return }
        guard avahi_entry_group_is_empty(g) != 0 else { return }  // already registered

        let txtList = makeStringList(txt)
        defer { avahi_string_list_free(txtList) }

        var attempts = 0
        while true {
            let result = avahi_entry_group_add_service_strlst(
                g, LP_AVAHI_IF_UNSPEC, LP_AVAHI_PROTO_UNSPEC, AvahiPublishFlags(0),
                workingName, type, nil, nil, port, txtList)
            if result == LP_AVAHI_ERR_COLLISION && attempts < 32 {
                // Another client of this same daemon already has the name.
                attempts += 1
                rename(reason: "is already registered with avahi-daemon")
                continue
            }
            if result < 0 {
                avahi_entry_group_reset(g)
                fail(result, while: "adding '\(workingName)'")
                return
            }
            break
        }
        let result = avahi_entry_group_commit(g)
        if result < 0 {
            avahi_entry_group_reset(g)
            fail(result, while: "committing '\(workingName)'")
            return
        }
        setStatus(.registering, name: workingName)
        log(.debug, "mDNS: registering '\(workingName)' (\(type)) on port \(port)")
    }

    private func groupStateChanged(_ g: OpaquePointer, _ groupState: AvahiEntryGroupState) {
        switch groupState {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            publishBackoff.reset()
            setStatus(.established, name: workingName)
            log(.info, "mDNS: published '\(workingName)' (\(type)) on port \(port)")

        case AVAHI_ENTRY_GROUP_COLLISION:
            rename(reason: "is taken on the network")
            avahi_entry_group_reset(g)
            if let c = avahi_entry_group_get_client(g) {
                publish(on: c)
            }

        case AVAHI_ENTRY_GROUP_FAILURE:
            let error = avahi_entry_group_get_client(g).map { avahi_client_errno($0) } ?? LP_AVAHI_ERR_DISCONNECTED
            fail(error, while: "publishing '\(workingName)'")

        case AVAHI_ENTRY_GROUP_REGISTERING:
            setStatus(.registering, name: workingName)

        default:  // AVAHI_ENTRY_GROUP_UNCOMMITED
            break
        }
    }

    private func rename(reason: String) {
        let old = workingName
        if let alternative = avahi_alternative_service_name(old) {
            workingName = String(cString: alternative)
            avahi_free(alternative)
        } else {
            workingName = old + " #2"
        }
        setStatus(.registering, name: workingName)
        log(.warning, "mDNS: service name '\(old)' \(reason); publishing as '\(workingName)'")
    }

    /// Reports a failure; errors a retry cannot cure (invalid name, type, TXT...) stop the attempts.
    private func fail(_ error: Int32, while doing: String) {
        let permanent = avahiErrorIsPermanent(error)
        setStatus(.failed(reason: avahiErrorText(error), retrying: !permanent))
        if permanent {
            log(.error, "mDNS: Avahi refused \(doing): \(avahiErrorText(error)); \(type) will not be published")
        } else {
            let delay = publishBackoff.delayAfterFailure()
            log(.error, "mDNS: Avahi failed \(doing): \(avahiErrorText(error)); retrying in \(formatSeconds(delay))")
            scheduleRetry(after: delay)
        }
    }

    /// Arms the one retry timer: on expiry the client (if any) is freed and a new one created.
    private func scheduleRetry(after seconds: Double) {
        guard let currentPoll = poll else { return }
        let api = avahi_threaded_poll_get(currentPoll)
        let ms = UInt32(min(max(seconds, 0), 3600) * 1000)
        if let timer = retryTimer {
            lp_avahi_timeout_update_ms(api, timer, ms)
        } else {
            retryTimer = lp_avahi_timeout_new_ms(
                api, ms,
                { _, userdata in
                    guard let userdata else { return }
                    Unmanaged<ServicePublisher>.fromOpaque(userdata).takeUnretainedValue().retryTimerFired()
                },
                userdata)
        }
    }

    private func retryTimerFired() {
        // A fired timeout stays allocated but disarmed; scheduleRetry re-arms it.
        freeClient()
        connect()
    }

    // MARK: - Status

    private func setStatus(_ newState: State, name: String? = nil) {
        statusLock.withLock {
            _state = newState
            if let name { _name = name }
        }
    }
}
