import Foundation
import LanpushCore

/// lanpush's own per-push_token counters for the UTC day, shaped as the relay's `rateLimits`: `attempts`,
/// `successful`, `errors`, `total`, `maximum` (the configured quota), `remaining` (the relay's last word, else the
/// quota minus what was relayed) and `resetsAt` (the next UTC midnight). HA reads `successful`, `maximum`, `errors` and `resetsAt`; a missing key crashes its handler, so all keys
/// are always present.
struct RateLimitCounters {
    struct Counts {
        var day: Int
        var attempts = 0
        var successful = 0
        var errors = 0
        var relayed = 0
    }

    let maximum: Int
    /// Tokens counted at most: the registered ones (a handful) and proxied ones, whose senders are rate-limited; past
    /// it the tokens of earlier days go, then the least used.
    static let maxTokens = 4096
    private var counts: [String: Counts] = [:]
    /// `resetsAt` of the current day, formatted once a day (a formatter per answer was a visible cost of HA's
    /// ingest path).
    private var resetsAt: (day: Int, text: String) = (-1, "")

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Tokens with counters (tests check that only known ones get any).
    var tokenCount: Int { counts.count }

    static func utcDay(_ now: Double) -> Int { Int((now / 86_400).rounded(.down)) }

    private mutating func touch(_ token: String, now: Double) -> Counts {
        let day = Self.utcDay(now)
        if let c = counts[token], c.day == day { return c }
        if counts[token] == nil, counts.count >= Self.maxTokens {
            counts = counts.filter { $0.value.day == day }
            if counts.count >= Self.maxTokens, let least = counts.min(by: { $0.value.attempts < $1.value.attempts })?.key {
                counts.removeValue(forKey: least)
            }
        }
        return Counts(day: day)
    }

    mutating func record(_ token: String, success: Bool, relayed: Bool = false, now: Double) {
        var c = touch(token, now: now)
        c.attempts += 1
        if success { c.successful += 1 } else { c.errors += 1 }
        if relayed { c.relayed += 1 }
        counts[token] = c
    }

    /// `remaining`: the relay's own last word for this token, when it has answered one.
    mutating func json(for token: String, remaining relayRemaining: Int? = nil, now: Double) -> JSONValue {
        let c = counts[token].flatMap { $0.day == Self.utcDay(now) ? $0 : nil } ?? Counts(day: Self.utcDay(now))
        let remaining = relayRemaining ?? max(0, maximum - c.relayed)
        let day = Self.utcDay(now)
        if resetsAt.day != day {
            resetsAt = (day, Self.iso8601(Date(timeIntervalSince1970: Double(day + 1) * 86_400)))
        }
        return [
            "attempts": .number(Double(c.attempts)), "successful": .number(Double(c.successful)),
            "errors": .number(Double(c.errors)), "total": .number(Double(c.attempts)),
            "maximum": .number(Double(maximum)), "remaining": .number(Double(remaining)),
            "resetsAt": .string(resetsAt.text),
        ]
    }

    static func iso8601(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: date)
    }
}
