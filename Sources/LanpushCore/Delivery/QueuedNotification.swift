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
        case .notification(let n): self.bytes = Self.frameBytes(seq: seq, n)
        case .clear(let tag): self.bytes = 40 + tag.utf8.count
        }
    }

    /// The size of `OutboundEvent.notification(seq:_:)`'s frame, counted without building it: every notification
    /// accepted is weighed, and building the frame's object only to measure it cost as much as writing it out.
    /// The frame is `{"data":…,"message":…,"seq":…,"title":…,"type":"notification"}`, keys sorted as `JSONWriter`
    /// writes them, `message` and `title` only when present.
    static func frameBytes(seq: UInt64, _ n: NotifyMessage) -> Int {
        var count = #"{"data":,"seq":,"type":"notification"}"#.utf8.count
        count += JSONWriter.count(.object(n.data)) + JSONWriter.countNumber(Double(seq))
        if let message = n.message { count += #","message":"#.utf8.count + JSONWriter.countString(message) }
        if let title = n.title { count += #","title":"#.utf8.count + JSONWriter.countString(title) }
        return count
    }

    public var event: OutboundEvent {
        switch body {
        case .notification(let n): return .notification(seq: seq, n)
        case .clear(let tag): return .clear(seq: seq, tag: tag)
        }
    }
}
