import Foundation
import LanpushCore

/// A client of the LAN protocol (lanpush.v2, or v1 from an older gateway): keeps a device's activities and
/// notifications, acknowledges what the app handled, resumes by replay after any disconnect and reconnects with
/// backoff (docs/CLIENTS.md). The same behaviour as the TypeScript library, on Swift concurrency:
///
///     let client = LanpushClient(LanpushConfiguration(url: url, token: token, store: FileStore(directory: dir)))
///     await client.start()
///     for await event in client.events { … }
public actor LanpushClient {
    public nonisolated let configuration: LanpushConfiguration
    /// The events, one consumer. The client waits for it: see `ClientEvent`.
    public nonisolated let events: ClientEvents

    let channel = EventChannel()
    let reducer: StateReducer
    var backoff: Backoff

    /// The device's state (device role).
    public internal(set) var state = DeviceState.empty
    /// Observers: every watched device's state.
    public internal(set) var devices: [String: DeviceState] = [:]
    public internal(set) var status = ConnectionStatus.offline
    /// The device this client is (from `auth_ok`), once known.
    public internal(set) var deviceId: String?
    /// The ping interval (seconds) the gateway granted in `auth_ok` (`Configuration.keepalive`); `nil` until then, or
    /// from a gateway that does not say.
    public internal(set) var keepalive: Int?

    var runTask: Task<Void, Never>?
    var sleepTask: Task<Void, Never>?
    var session: Session?
    var stopping = false
    var started = false
    var loaded = false
    var wantSnapshot = false
    /// User actions taken while not authenticated: sent once a session is (the latest per key).
    var outgoing: [(key: String, frame: JSONValue)] = []

    public init(_ configuration: LanpushConfiguration) {
        self.configuration = configuration
        self.events = ClientEvents(channel: channel)
        self.reducer = StateReducer(maxNotifications: configuration.maxNotifications)
        self.backoff = configuration.backoff
    }

    /// Activities in the order a phone shows them (an observer names the device).
    public func activities(device: String? = nil) -> [ClientActivity] {
        (device.map { devices[$0] ?? .empty } ?? state).sortedActivities
    }

    /// Connects and keeps connecting until `stop()` or a rejected token. A client runs once: after it stopped (or
    /// its events ended), make a new one.
    public func start() {
        guard runTask == nil, !started else { return }
        started = true
        runTask = Task { await self.run() }
    }

    /// Stops for good: frames already handled are acknowledged, the session is closed (1000), the events end.
    public func stop() async {
        stopping = true
        // The event in the app's hands counts as handled; queued ones never reach it and are not acknowledged.
        channel.finish()
        session?.connection.inbox.interrupt()
        sleepTask?.cancel()
        await runTask?.value
    }

    /// The user dismissed the activity: it becomes `dismissed` for every session of the device.
    public func dismiss(tag: String) async {
        await sendOrKeep(key: "dismissed:\(tag)", ClientFrame.dismissed(tag: tag))
    }

    /// The activity's ActivityKit push token (relay path). `expiresAt`: Unix seconds.
    public func sendLiveActivityToken(tag: String, token: String, expiresAt: Double? = nil) async {
        await sendOrKeep(key: "token:\(tag)", ClientFrame.liveActivityToken(tag: tag, token: token, expiresAt: expiresAt))
    }

    /// The app's push-to-start token (relay path).
    public func sendPushToStartToken(_ token: String) async {
        await sendOrKeep(key: "push_to_start", ClientFrame.pushToStartToken(token))
    }

    /// Forgets a held plain notification (the user read it); local only.
    public func removeNotification(seq: UInt64) async {
        state.notifications.removeAll { $0.seq == seq }
        await persist()
    }

    // MARK: Internals shared with the session

    func sendOrKeep(key: String, _ frame: JSONValue) async {
        if let session, session.authed, !session.connection.inbox.isClosed {
            if (try? await session.connection.send(frame.serialized())) != nil { return }
        }
        outgoing.removeAll { $0.key == key }
        outgoing.append((key, frame))
        if outgoing.count > 256 { outgoing.removeFirst() }
    }

    /// Hands an event to the app and waits until it was handled; false when the client stopped first.
    @discardableResult
    func emit(_ event: ClientEvent) async -> Bool {
        await channel.deliver(event)
    }

    func setStatus(_ new: ConnectionStatus, code: Int? = nil, reason: String = "", retryIn: Double? = nil, connectFailed: Bool = false) async {
        guard new != status || retryIn != nil else { return }
        let previous = status
        status = new
        await emit(.status(StatusChange(
            status: new, previous: previous, code: code, reason: reason, retryIn: retryIn, connectFailed: connectFailed)))
    }

    /// Saves the state; false (and an error event) when the store failed, so nothing it should cover is acknowledged.
    @discardableResult
    func persist() async -> Bool {
        guard !configuration.isObserver, let store = configuration.store else { return true }
        do {
            try await store.save(key: configuration.resolvedStoreKey, state: state)
            return true
        } catch {
            await emit(.error("saving the state failed: \(error)"))
            return false
        }
    }

    func loadIfNeeded() async {
        guard !loaded else { return }
        loaded = true
        if configuration.isObserver { return }
        if let store = configuration.store {
            do {
                if let stored = try await store.load(key: configuration.resolvedStoreKey) {
                    state = stored
                    return
                }
            } catch {
                await emit(.error("loading the state failed: \(error)"))
            }
        }
        if let initial = configuration.initialState { state = initial }
    }
}
