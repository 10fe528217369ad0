/// How a session ended, as far as the client could tell: the close code and reason (absent when the transport
/// cannot report them, or the link just died), and what the gateway said just before.
public struct CloseInfo: Sendable, Hashable {
    public var code: Int?
    public var reason: String
    /// `auth_invalid` was received on this session (its message).
    public var authInvalid: String?
    /// The last `error` frame's message on this session.
    public var lastError: String?

    public init(code: Int? = nil, reason: String = "", authInvalid: String? = nil, lastError: String? = nil) {
        self.code = code
        self.reason = reason
        self.authInvalid = authInvalid
        self.lastError = lastError
    }
}

/// What a closed session means for the next attempt (docs/PROTOCOL.md "Close codes"). The frame the gateway sent
/// just before closing decides when a transport cannot report the code.
public enum CloseAction: Sendable, Hashable {
    /// 4001 / `auth_invalid`: the token is wrong; retrying cannot help.
    case authRejected(message: String)
    /// 1001 (gateway restart), 4002 (ack timeout), 4003 (too slow): come back at once and resume.
    case reconnectNow
    /// 4029: rate-limited; the reason says for how long ("try again in N s").
    case wait(seconds: Double)
    /// 1013 (too many sessions) and everything else: back off, at least `minimum` seconds.
    case backoff(minimum: Double)

    /// Minimum delay before retrying when the gateway has no room for another session.
    public static let tooManySessionsDelay = 5.0

    public static func classify(_ info: CloseInfo) -> CloseAction {
        let reason = info.reason
        if info.authInvalid != nil || info.code == 4001 {
            let message = [info.authInvalid, reason].compactMap { $0 }.first { !$0.isEmpty } ?? "auth invalid"
            return .authRejected(message: message)
        }
        let wait = retrySeconds(in: reason)
        if info.code == 4029 || wait != nil { return .wait(seconds: wait ?? 30) }
        if info.code == 1013 || mentionsTooManySessions(reason) || mentionsTooManySessions(info.lastError ?? "") {
            return .backoff(minimum: tooManySessionsDelay)
        }
        if info.code == 1001 || info.code == 4002 || info.code == 4003 { return .reconnectNow }
        if info.code == nil, ["ack timeout", "too slow", "shutdown", "going away"].contains(where: { mentions(reason, $0) }) {
            return .reconnectNow
        }
        return .backoff(minimum: 0)
    }

    /// "… try again in N s" → N.
    static func retrySeconds(in reason: String) -> Double? {
        let lower = reason.lowercased()
        guard let range = lower.range(of: "try again in") else { return nil }
        let rest = lower[range.upperBound...].drop { $0 == " " }
        let number = rest.prefix { $0.isNumber || $0 == "." }
        guard !number.isEmpty, rest.dropFirst(number.count).drop(while: { $0 == " " }).first == "s" else { return nil }
        return Double(number)
    }

    private static func mentions(_ text: String, _ phrase: String) -> Bool { text.lowercased().contains(phrase) }

    /// "too many sessions", "too many unauthenticated sessions from this address": both are 1013's reasons.
    private static func mentionsTooManySessions(_ text: String) -> Bool {
        text.lowercased().contains(/too many [a-z ]*sessions/)
    }
}
