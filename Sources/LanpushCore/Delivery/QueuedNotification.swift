/// A plain notification (or the clear of one) waiting for a device to acknowledge it. Not coalesced.
public struct QueuedNotification: Sendable, Hashable {
    public enum Body: Sendable, Hashable {
        case notification(NotifyMessage)
        case clear(tag: String)
    }

    public var seq: UInt64
    public var body: Body
    public var acceptedAt: Double
    /// What it weighs in the device's queue: the size of its frame (the queue is bounded in bytes).
    public let bytes: Int

    public init(seq: UInt64, body: Body, acceptedAt: Double) {
        self.seq = seq
        self.body = body
        self.acceptedAt = acceptedAt
        switch body {
        case .notification(let n): self.bytes = NotificationFrame.count(seq: seq, n)
        case .clear(let tag): self.bytes = 40 + tag.utf8.count
        }
    }

    public var event: OutboundEvent {
        switch body {
        case .notification(let n): return .notification(seq: seq, n)
        case .clear(let tag): return .clear(seq: seq, tag: tag)
        }
    }
}
