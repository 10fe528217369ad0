/// Paces the traffic of gone devices to HA's push relay so Apple's Live Activity limits and the relay's daily
/// quota are never hit. Pure: the caller passes the time and does
/// the I/O — `submit` what was accepted, send what `due` returns, report each answer with `complete`.
///
/// Lanes. Each (device, tag) is a slot holding at most one request in flight and the latest state waiting:
/// - **start** goes at once within the device's start budget (`startsPerHour` per `startWindow`, sliding);
///   beyond it, it waits (never dropped). It uses the slot's first interval: the next update may go one
///   `minUpdateInterval` after it. An update arriving while its start waits merges into the start.
/// - **update** goes at most once per `minUpdateInterval` per slot (counted from the last start/update sent);
///   a newer update replaces a waiting one (latest state wins, silent only if both were), so the final state
///   of a burst always goes out at the next slot time.
/// - **end** goes at once (after the slot's request in flight, if any), supersedes a waiting update and — with
///   `endCarriesFinalState` — carries that update's state. An end of a start never sent drops both.
/// - **notification**s (and clears of plain notifications) queue in order per device, one in flight at a time,
///   and go at once.
/// Due items of a device leave in arrival order.
///
/// Device gates (quota read from every answer's `rateLimits`):
/// - `remaining <= quotaReserve` (reserve mode): starts, ends and notifications go as usual; the device's
///   updates are thinned to one per `max(minUpdateInterval * reserveIntervalFactor, (resetsAt - now) /
///   (remaining - quotaFloor))` across all its slots (the rest of the day's quota spread until the reset), and
///   stop altogether while `remaining <= quotaFloor` (kept for starts and ends).
/// - quota left `<= 0`: nothing goes until `resetsAt` (next UTC midnight when unknown) — the relay would answer 429.
///   What is left is the lower of the relay's `remaining` (decremented when a request leaves, replaced by every
///   answer that carries it, forgotten once `resetsAt` passes) and `dailyQuota` less the requests the device sent
///   this UTC day — every request counts, so a push_url that never says `rateLimits` (or one that loops back into
///   lanpush) is bounded too.
/// - 429: nothing for the device before `resetsAt` (without one: backoff as for a failure); the item waits, but a
///   plain notification or command that waited past `maxHold` is dropped (`takeExpired`), as the relay itself drops
///   what it answers 429. A slot keeps its latest state.
/// - invalid token (403, or 500 `InvalidToken`): the device's token is marked invalid; its queued items are dropped,
///   later `submit`s refused, until `revalidate` (a new registration).
/// - failure (other 5xx, 408, timeout, network): the item's own lane — its slot, or the notification queue — backs
///   off `jitter(min(backoffCap, backoffBase * 2^(n-1)))` after its n-th consecutive failure (full jitter by
///   default); the item goes back to the head of its lane and merges with anything newer that arrived meanwhile.
///   The device's other lanes go on. A failed start gives its budget back and a failed update its interval. Any
///   answer other than a failure resets the lane's count.
/// - 500 `PayloadTooLarge`, any other 4xx, 508: the item is dropped (counted in `stats.droppedRejected`); the
///   device carries on.
public struct RelayPacer: Sendable {
    /// Maps the capped backoff delay to the delay actually waited (full jitter: uniform in `0...delay`).
    public typealias Jitter = @Sendable (Double) -> Double

    public var limits: RelayLimits
    private let jitter: Jitter
    private(set) var devices: [String: DeviceState] = [:]
    private var ordinal: UInt64 = 0
    /// When `due` next looks at idle devices too, to forget what they no longer need.
    private var sweepAt = -Double.infinity
    /// Items waiting (not counting requests in flight), across all devices; at most `limits.maxItems`.
    public private(set) var queuedCount = 0
    public private(set) var stats = RelayStats()
    /// Bumps on every change of what `pendingItems` returns: the durable outbox is stale when it moved.
    public private(set) var generation: UInt64 = 0
    /// Notifications dropped for waiting past `maxHold`, until `takeExpired`.
    private var expired: [RelayItem] = []

    public init(limits: RelayLimits = RelayLimits(), jitter: @escaping Jitter = { .random(in: 0...max(0, $0)) }) {
        self.limits = limits
        self.jitter = jitter
    }

    // MARK: Input

    /// Queues an accepted change for the relay. Refused (`accepted == false`) while the device's token is
    /// invalid. May supersede waiting items of the slot and, past `maxItems`, drop the oldest items anywhere.
    @discardableResult
    public mutating func submit(_ item: RelayItem, now: Double) -> RelaySubmission {
        stats.submitted += 1
        if devices[item.device]?.tokenInvalid == true {
            stats.droppedForbidden += 1
            return RelaySubmission(accepted: false, superseded: 0, dropped: [])
        }
        ordinal += 1
        let entry = Entry(item: item, ordinal: ordinal, queuedAt: now)
        let limits = self.limits
        let superseded = mutate(item.device, now: now) { d in d.enqueue(entry, limits: limits) }
        queuedCount += 1 - superseded
        stats.superseded += UInt64(superseded)
        generation += 1
        let dropped = enforceBound(now: now)
        return RelaySubmission(accepted: true, superseded: superseded, dropped: dropped)
    }

    /// Puts items from the durable outbox back (after a restart), in the order `pendingItems` gave them.
    /// The start budget, intervals and backoff start afresh; items of a device marked invalid are refused.
    public mutating func restore(_ items: [RelayItem], now: Double) {
        for item in items { submit(item, now: now) }
    }

    // MARK: Sending

    /// Everything that may leave now, in arrival order; each is marked in flight until `complete`.
    /// Call it after every `submit` / `complete` and whenever `nextDeadline` passes.
    public mutating func due(now: Double) -> [RelayItem] {
        var out = [(UInt64, RelayItem)]()
        let limits = self.limits
        // Keys first: iterating the dictionary while mutating it would copy every device's queues.
        let ready = devices.compactMap { ($0.value.wake ?? .infinity) <= now ? $0.key : nil }
        for key in ready {
            let sent = devices[key]!.dispatch(now: now, limits: limits)
            out.append(contentsOf: sent)
            queuedCount -= sent.count
            if devices[key]!.isForgettable(now: now, limits: limits) { devices.removeValue(forKey: key) }
        }
        stats.sent += UInt64(out.count)
        if now >= sweepAt { sweep(now: now) }
        return out.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The relay's answer to an item `due` returned. Returns what the outcome dropped (a 403 drops the item
    /// and every queued item of the device; another 4xx drops the item).
    @discardableResult
    public mutating func complete(_ item: RelayItem, outcome: RelayOutcome, now: Double) -> RelayCompletion {
        guard devices[item.device] != nil else { return RelayCompletion() }
        switch outcome {
        case .success: stats.succeeded += 1
        case .rateLimited: stats.rateLimited += 1
        case .forbidden: stats.forbidden += 1
        case .rejected, .payloadTooLarge: stats.rejected += 1
        case .failed: stats.failed += 1
        }
        let limits = self.limits
        let jitter = self.jitter
        var result = mutate(item.device, now: now) { d in
            d.complete(item, outcome: outcome, now: now, limits: limits, jitter: jitter)
        }
        queuedCount += result.queuedDelta
        if result.queuedDelta != 0 || !result.completion.dropped.isEmpty || result.wasInFlight { generation += 1 }
        switch outcome {
        case .forbidden: stats.droppedForbidden += UInt64(result.completion.dropped.count)
        case .rejected, .payloadTooLarge: stats.droppedRejected += UInt64(result.completion.dropped.count)
        default: break
        }
        stats.superseded += UInt64(result.superseded)
        result.completion.dropped.sort { $0.seq < $1.seq }
        // A retried item is queued again: the bound holds for it too.
        result.completion.overflow = enforceBound(now: now)
        return result.completion
    }

    // MARK: Hand-over and token state

    /// The device is back on the LAN and takes its slots back: every queued item is dropped and returned.
    /// A request in flight may still complete (its answer still updates the quota) but is never retried.
    @discardableResult
    public mutating func cancel(device: String, now: Double) -> [RelayItem] {
        guard devices[device] != nil else { return [] }
        let dropped = mutate(device, now: now) { d in d.cancelAll() }
        queuedCount -= dropped.count
        stats.cancelled += UInt64(dropped.count)
        if !dropped.isEmpty { generation += 1 }
        return dropped
    }

    /// Marks the device's token invalid as a 403 does (e.g. restored from the store); returns what it dropped.
    @discardableResult
    public mutating func markTokenInvalid(device: String, now: Double) -> [RelayItem] {
        let dropped = mutate(device, now: now) { d in
            d.tokenInvalid = true
            return d.cancelAll()
        }
        queuedCount -= dropped.count
        stats.droppedForbidden += UInt64(dropped.count)
        generation += 1
        return dropped
    }

    /// The device registered a new token: relay traffic may flow again.
    public mutating func revalidate(device: String, now: Double) {
        guard devices[device]?.tokenInvalid == true else { return }
        mutate(device, now: now) { d in d.tokenInvalid = false }
        generation += 1
    }

    // MARK: Queries

    /// The earliest time `due` may have something, as computed at the last call that changed a device
    /// (`nil`: nothing waits, or everything waits for an answer). May be in the past: call `due` then.
    public var nextDeadline: Double? {
        devices.values.compactMap(\.wake).min()
    }

    /// Everything not yet answered — waiting items and requests in flight (not those cancelled by a
    /// hand-over) — in arrival order: what the durable outbox holds.
    public var pendingItems: [RelayItem] {
        var all = [(UInt64, RelayItem)]()
        for d in devices.values {
            for e in d.notifications { all.append((e.ordinal, e.item)) }
            if let e = d.notificationInFlight, !d.notificationInFlightCancelled { all.append((e.ordinal, e.item)) }
            for slot in d.slots.values {
                if let e = slot.inFlight, !slot.inFlightCancelled { all.append((e.ordinal, e.item)) }
                for e in slot.pending { all.append((e.ordinal, e.item)) }
            }
        }
        return all.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// What the pacer knows of one device (for `GET /v1/devices`); `nil` if it never saw the device.
    public func status(of device: String, now: Double) -> RelayDeviceStatus? {
        guard let d = devices[device] else { return nil }
        let quotaLive = (d.resetsAt ?? .infinity) > now
        return RelayDeviceStatus(
            remaining: quotaLive ? d.remaining : nil,
            resetsAt: quotaLive ? d.resetsAt : nil,
            tokenInvalid: d.tokenInvalid,
            queued: d.queuedCount,
            inFlight: d.inFlightCount,
            backoffUntil: d.lanes.compactMap(\.until).filter { $0 > now }.max(),
            holdUntil: d.holdUntil.flatMap { $0 > now ? $0 : nil },
            consecutiveFailures: d.lanes.map(\.failures).max() ?? 0,
            startsInWindow: d.startTimes.filter { $0 > now - limits.startWindow }.count,
            sentToday: d.sentToday(now: now))
    }

    /// Devices whose token the relay refused (403), sorted: for a gauge and `GET /v1/devices`.
    public var invalidTokenDevices: [String] {
        devices.filter { $0.value.tokenInvalid }.keys.sorted()
    }

    /// Devices the pacer holds any state for.
    public var knownDevices: [String] { devices.keys.sorted() }

    // MARK: Internals

    /// Runs `body` on the device's state in place (no copy of its queues), then refreshes its wake time
    /// and forgets the device once it holds nothing worth keeping.
    @discardableResult
    private mutating func mutate<R>(_ device: String, now: Double, _ body: (inout DeviceState) -> R) -> R {
        let limits = self.limits
        let result = body(&devices[device, default: DeviceState()])
        devices[device]!.refreshWake(now: now, limits: limits)
        if devices[device]!.isForgettable(now: now, limits: limits) { devices.removeValue(forKey: device) }
        return result
    }

    /// What waited past `maxHold` and was dropped since the last call (count and log it).
    public mutating func takeExpired() -> [RelayItem] {
        defer { expired.removeAll() }
        return expired
    }

    /// Once a minute: drops notifications held past `maxHold`, lets idle devices drop expired slots and timers, and
    /// forgets those left with nothing.
    private mutating func sweep(now: Double) {
        sweepAt = now + 60
        let limits = self.limits
        for key in Array(devices.keys) {
            let dropped = devices[key]!.dropExpired(now: now, maxHold: limits.maxHold)
            if !dropped.isEmpty {
                expired += dropped
                queuedCount -= dropped.count
                stats.droppedExpired += UInt64(dropped.count)
                generation += 1
            }
            devices[key]!.refreshWake(now: now, limits: limits)
            if devices[key]!.isForgettable(now: now, limits: limits) { devices.removeValue(forKey: key) }
        }
    }

    /// Drops the oldest notification first, then the oldest update, start, end, until within `maxItems`.
    private mutating func enforceBound(now: Double) -> [RelayItem] {
        var dropped = [RelayItem]()
        while queuedCount > max(0, limits.maxItems) {
            guard let victim = oldestVictim() else { break }
            let item = mutate(victim.device, now: now) { d in d.remove(victim.lane) }
            queuedCount -= 1
            stats.droppedOverflow += 1
            dropped.append(item)
        }
        return dropped
    }

    private func oldestVictim() -> (device: String, lane: Lane)? {
        var best: (ordinal: UInt64, device: String)?
        for (key, d) in devices {
            if let e = d.notifications.first, e.ordinal < (best?.ordinal ?? .max) { best = (e.ordinal, key) }
        }
        if let best { return (best.device, .notifications) }
        for kind in [RelayItem.Kind.update, .start, .end] {
            var found: (ordinal: UInt64, device: String, tag: String, index: Int)?
            for (key, d) in devices {
                for (tag, slot) in d.slots {
                    for (i, e) in slot.pending.enumerated() where e.item.kind == kind && e.ordinal < (found?.ordinal ?? .max) {
                        found = (e.ordinal, key, tag, i)
                    }
                }
            }
            if let found { return (found.device, .slot(found.tag, index: found.index)) }
        }
        return nil
    }
}

/// What `submit` did.
public struct RelaySubmission: Sendable, Hashable {
    /// `false`: the device's token is invalid (a 403 earlier); nothing was queued.
    public var accepted: Bool
    /// Waiting items of the slot this one replaced or absorbed (coalesced updates).
    public var superseded: Int
    /// Items dropped anywhere to stay within `maxItems` (also counted in `stats.droppedOverflow`).
    public var dropped: [RelayItem]
}

/// What `complete` did.
public struct RelayCompletion: Sendable, Hashable {
    /// This answer made the device's token invalid (a 403 on a token not yet marked).
    public var tokenInvalidated = false
    /// Items dropped by this answer: a 403 drops the item and all the device's queued items, another 4xx the item.
    public var dropped: [RelayItem] = []
    /// The item goes again later (failure or 429).
    public var retrying = false
    /// Items dropped to stay within `maxItems` when the retried item was queued again (also counted in
    /// `stats.droppedOverflow`).
    public var overflow: [RelayItem] = []
}

/// Cumulative counters since the pacer was created.
public struct RelayStats: Sendable, Hashable {
    public var submitted: UInt64 = 0
    /// Replaced by a newer state of their slot (or absorbed into a waiting start / end) before being sent.
    public var superseded: UInt64 = 0
    /// Requests handed out by `due`.
    public var sent: UInt64 = 0
    public var succeeded: UInt64 = 0
    public var failed: UInt64 = 0
    public var rateLimited: UInt64 = 0
    public var forbidden: UInt64 = 0
    public var rejected: UInt64 = 0
    /// Dropped to stay within `maxItems`.
    public var droppedOverflow: UInt64 = 0
    /// Dropped or refused because the device's token is invalid.
    public var droppedForbidden: UInt64 = 0
    /// Dropped after a 4xx other than 403 / 429, a 508, or a 500 `PayloadTooLarge`.
    public var droppedRejected: UInt64 = 0
    /// Plain notifications and commands dropped after waiting past `maxHold`.
    public var droppedExpired: UInt64 = 0
    /// Dropped because the device came back on the LAN.
    public var cancelled: UInt64 = 0

    public init() {}
}

/// One device as the pacer sees it (`GET /v1/devices`).
public struct RelayDeviceStatus: Sendable, Hashable {
    /// The relay's last word on the day's quota (decremented per request sent); `nil` when unknown or reset.
    public var remaining: Int?
    /// Unix seconds.
    public var resetsAt: Double?
    public var tokenInvalid: Bool
    public var queued: Int
    public var inFlight: Int
    /// Unix seconds; set while one of the device's lanes backs off after failures (the latest of them).
    public var backoffUntil: Double?
    /// Unix seconds; set while a 429 (or an exhausted quota) holds the device.
    public var holdUntil: Double?
    /// The most consecutive failures of any of its lanes.
    public var consecutiveFailures: Int
    public var startsInWindow: Int
    /// Requests sent this UTC day (against `RelayLimits.dailyQuota`).
    public var sentToday: Int = 0

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "token_invalid": .bool(tokenInvalid), "queued": .number(Double(queued)),
            "in_flight": .number(Double(inFlight)), "failures": .number(Double(consecutiveFailures)),
            "starts_in_window": .number(Double(startsInWindow)), "sent_today": .number(Double(sentToday)),
        ]
        if let remaining { o["remaining"] = .number(Double(remaining)) }
        if let resetsAt { o["resets_at"] = .number(resetsAt.rounded()) }
        if let backoffUntil { o["backoff_until"] = .number(backoffUntil) }
        if let holdUntil { o["hold_until"] = .number(holdUntil.rounded()) }
        return .object(o)
    }
}
