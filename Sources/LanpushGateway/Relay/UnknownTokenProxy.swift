import LanpushCore

/// Relay bodies for a push_token no device registered: forwarded to `relay.upstream` only when
/// `relay.proxy_unknown_tokens` is on (a phone whose own registration points at lanpush), and then at most
/// `relay.proxy_per_minute` per source address. Off, anyone on the LAN could spend the household's relay quota and
/// reputation with made-up tokens. What it keeps is bounded: the per-address window, and the live activities it
/// started per (token, tag), which Apple's 8 h ceiling ends and `maxActivities` caps. Loop thread only.
final class UnknownTokenProxy {
    enum Decision: Equatable {
        case proxy
        /// `relay.proxy_unknown_tokens` is off.
        case off
        /// The source address sent its `proxy_per_minute` this minute; it may again in `wait` seconds.
        case throttled(wait: Double)
    }

    static let maxActivities = 10_000

    let enabled: Bool
    private var perAddress: AddressWindow
    /// `push_token|tag` pairs whose start went to the relay (so the next live update is an update), with when.
    private(set) var activities: [String: Double] = [:]
    private var sweptAt: Double = 0

    init(enabled: Bool, perMinute: Int) {
        self.enabled = enabled
        perAddress = AddressWindow(limit: perMinute, window: 60)
    }

    /// Whether a body from `peer` is forwarded now (and counted against its minute when it is).
    func admit(from peer: String, now: Double) -> Decision {
        guard enabled else { return .off }
        if let wait = perAddress.wait(peer, now: now) { return .throttled(wait: wait) }
        perAddress.record(peer, now: now)
        return .proxy
    }

    /// The relay kind of a forwarded body: HA's `data.event` when it sent one; otherwise a live update starts an
    /// activity unless this proxy relayed a start for the (token, tag) within Apple's 8 h.
    func kind(of command: PushCommand, token: String, now: Double) -> RelayItem.Kind {
        forgetExpired(now: now)
        let key = "\(token)|\(command.tag ?? "")"
        let started = activities[key].map { now - $0 < Lifecycle.maximumDuration } ?? false
        let kind = RelayItem.Kind(command, activityLive: started)
        switch kind {
        case .start:
            if activities[key] == nil, activities.count >= Self.maxActivities,
               let oldest = activities.min(by: { $0.value < $1.value })?.key
            {
                activities.removeValue(forKey: oldest)
            }
            activities[key] = now
        case .end: activities[key] = nil
        case .update, .notification: break
        }
        return kind
    }

    /// At most once a minute: the pairs past the 8 h ceiling go (the phone ended those activities itself).
    private func forgetExpired(now: Double) {
        guard now - sweptAt >= 60 else { return }
        sweptAt = now
        activities = activities.filter { now - $0.value < Lifecycle.maximumDuration }
    }
}
