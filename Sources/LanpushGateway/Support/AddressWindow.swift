/// Events per peer address within a sliding window (failed authentications, proxied relay requests): how many an
/// address had in the last `window` seconds, and when the oldest of the last `limit` leaves it.
///
/// Bounded whatever the LAN sends: at most `limit` times are kept per address (older ones cannot matter), and at
/// most `maxAddresses` addresses; past that, addresses with nothing left in the window go first, then the quietest
/// (an IPv6 host can use as many source addresses as it likes). Loop thread only.
struct AddressWindow {
    let limit: Int
    let window: Double
    let maxAddresses: Int
    private var times: [String: [Double]] = [:]

    init(limit: Int, window: Double, maxAddresses: Int = 4096) {
        self.limit = max(1, limit)
        self.window = max(1, window)
        self.maxAddresses = max(1, maxAddresses)
    }

    var addresses: Int { times.count }

    /// Seconds until `address` is below `limit` again; `nil` when it is now.
    mutating func wait(_ address: String, now: Double) -> Double? {
        guard var kept = times[address] else { return nil }
        kept.removeAll { $0 <= now - window }
        times[address] = kept.isEmpty ? nil : kept
        guard kept.count >= limit else { return nil }
        return kept[kept.count - limit] + window - now
    }

    /// One event from `address`; returns how many it had in the window with it (at most `limit` + 1: only the
    /// last `limit` are kept).
    @discardableResult
    mutating func record(_ address: String, now: Double) -> Int {
        if times[address] == nil, times.count >= maxAddresses { makeRoom(now: now) }
        var kept = times[address, default: []]
        kept.removeAll { $0 <= now - window }
        kept.append(now)
        let count = kept.count
        if kept.count > limit { kept.removeFirst(kept.count - limit) }
        times[address] = kept
        return count
    }

    private mutating func makeRoom(now: Double) {
        times = times.filter { $0.value.contains { $0 > now - window } }
        while times.count >= maxAddresses, let quietest = times.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) })?.key {
            times.removeValue(forKey: quietest)
        }
    }
}
