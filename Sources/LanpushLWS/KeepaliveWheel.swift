/// When each server WebSocket is due for its next keepalive step — a PING after `interval` without a PONG, a
/// hang-up `timeout` after that PING — in buckets of ``tick`` seconds.
///
/// Why not lws's validity policy: lws 4.1 keeps one timer per connection for it in the context's single sorted
/// list, and every timer any connection sets (each HTTP request's timeouts, each re-armed validity) is inserted with
/// a linear walk of that list — 8.5 % of the CPU with 1,000 sessions at 1,000 requests/s (docs/BENCHMARKS.md).
/// Here a PONG costs an append to a bucket and a sweep costs the connections due in it.
///
/// Lazy deletion: a connection that ponged again has a newer entry; the older one is skipped when its bucket is
/// swept (its generation is no longer the connection's), so memory follows the number of connections.
/// Pure (the time is a parameter); loop thread only.
struct KeepaliveWheel {
    enum Step: Equatable {
        /// Due for a PING (no PONG for `interval`).
        case ping
        /// Pinged `timeout` ago and still no PONG: hang up.
        case hangUp
    }

    struct Due {
        var tick: Int64
        var pinged: Bool
        /// Which of the connection's bucket entries is live (the others are left behind by later placements).
        var generation: UInt32 = 0
    }

    private struct Entry {
        var id: UInt64
        var generation: UInt32
    }

    /// Seconds per bucket: a step comes at most this much (plus the sweep's own delay) late.
    static let tick = 0.25

    let interval: Double
    let timeout: Double
    private var buckets: [[Entry]]
    private var due: [UInt64: Due] = [:]
    /// Connections pinged on an interval of their own (a phone that asked for fewer wake-ups).
    private var intervals: [UInt64: Double] = [:]
    /// The last tick swept: every step due in it or before has been taken.
    private var swept: Int64?

    init(interval: Double, timeout: Double) {
        self.interval = max(Self.tick, interval)
        self.timeout = max(Self.tick, timeout)
        // Far enough ahead that a bucket is swept before a step due later is placed in it again.
        let span = Int((max(self.interval, self.timeout) / Self.tick).rounded(.up)) + 2
        buckets = Array(repeating: [], count: span)
    }

    var isEmpty: Bool { due.isEmpty }

    var count: Int { due.count }

    /// Bucket entries held, stale ones included (tests check that they do not pile up).
    var entries: Int { buckets.reduce(0) { $0 + $1.count } }

    /// The tick a step due at `seconds` belongs to: the first one that ends at or after it.
    private static func tick(dueAt seconds: Double) -> Int64 { Int64((seconds / tick).rounded(.up)) }

    /// The last tick that has fully passed at `seconds`.
    private static func tick(passedAt seconds: Double) -> Int64 { Int64((seconds / tick).rounded(.down)) }

    /// A connection opened, or its peer answered a PING (`now` in seconds): the next PING is `interval` away.
    mutating func confirmed(_ id: UInt64, now: Double) {
        if swept == nil { swept = Self.tick(passedAt: now) }
        let wait = intervals[id] ?? interval
        place(id, Due(tick: Self.tick(dueAt: now + wait), pinged: false, generation: (due[id]?.generation ?? 0) &+ 1))
    }

    /// The connection is pinged every `seconds` from now on (its next PING `seconds` from `now`). A step due later
    /// than the ring spans waits in its bucket for the round it is due in.
    mutating func setInterval(_ id: UInt64, _ seconds: Double, now: Double) {
        guard due[id] != nil else { return }
        intervals[id] = max(Self.tick, seconds)
        confirmed(id, now: now)
    }

    mutating func remove(_ id: UInt64) {
        due.removeValue(forKey: id)
        intervals.removeValue(forKey: id)
    }

    /// Every step due at or before `now`; a connection given `.ping` is due for `.hangUp` `timeout` later unless
    /// ``confirmed(_:now:)`` comes first. A connection given `.hangUp` is forgotten.
    mutating func sweep(now: Double) -> [(id: UInt64, step: Step)] {
        guard let from = swept else { return [] }
        let last = Self.tick(passedAt: now)
        guard last > from else { return [] }
        var out: [(id: UInt64, step: Step)] = []
        // Each slot once, however late the sweep (a suspended machine wakes hours later).
        for t in (from + 1)...min(last, from + Int64(buckets.count)) {
            let slot = Int(t.modulo(buckets.count))
            let entries = buckets[slot]
            guard !entries.isEmpty else { continue }
            buckets[slot].removeAll(keepingCapacity: true)
            for entry in entries {
                let id = entry.id
                // Gone, or moved on (a PONG placed a newer entry): nothing to do here.
                guard var d = due[id], d.generation == entry.generation else { continue }
                if d.tick > last {
                    buckets[slot].append(entry)  // due in a later round of the ring
                    continue
                }
                if d.pinged {
                    due.removeValue(forKey: id)
                    intervals.removeValue(forKey: id)
                    out.append((id, .hangUp))
                } else {
                    d.pinged = true
                    d.tick = max(Self.tick(dueAt: now + timeout), last + 1)
                    d.generation &+= 1
                    place(id, d)
                    out.append((id, .ping))
                }
            }
        }
        swept = last
        return out
    }

    private mutating func place(_ id: UInt64, _ d: Due) {
        due[id] = d
        buckets[Int(d.tick.modulo(buckets.count))].append(Entry(id: id, generation: d.generation))
    }
}

extension Int64 {
    fileprivate func modulo(_ n: Int) -> Int64 {
        let m = self % Int64(n)
        return m < 0 ? m + Int64(n) : m
    }
}
