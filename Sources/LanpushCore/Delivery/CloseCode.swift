/// The WebSocket close codes a lanpush session ends with (docs/PROTOCOL.md, "Close codes"), named once for the
/// gateway that sends them and the clients that read them. RFC 6455's own codes where one fits; 4000-4999, the
/// range RFC 6455 leaves to applications, for lanpush's.
public enum CloseCode: UInt16, Sendable, CaseIterable {
    /// The gateway is stopping (or restarting): reconnect and resume.
    case goingAway = 1001
    /// A binary message: the protocol is text.
    case unsupportedData = 1003
    /// A message larger than `limits.max_body`.
    case messageTooBig = 1009
    /// The store failed to commit a publisher's items (after an `error` frame).
    case internalError = 1011
    /// No room: too many sessions, or too many unauthenticated ones from the address. Back off.
    case tryAgainLater = 1013
    /// The token is invalid (or was replaced, or the device removed), or no `auth` came in time. Do not retry with it.
    case authInvalid = 4001
    /// An event stayed unacknowledged past `session.ack_timeout`.
    case ackTimeout = 4002
    /// Sent by gateways before notification queues dropped their oldest entry instead; a client reconnects at once.
    case tooSlow = 4003
    /// Too many failed authentications from the address: "try again in N s".
    case throttled = 4029
}
