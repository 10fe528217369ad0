/// One publisher session's side of the stream (docs/PROTOCOL.md, "Publishers"): numbers the items as they arrive,
/// keeps what must be said about them, says how far they are accepted once their commits complete, and whether the
/// gateway may read more.
///
/// Pure: the caller applies each item (the gateway's one ingest) and reports rejections, warnings and commits. What
/// it holds per unaccepted item is nothing but the count: the bound on what a publisher can make the gateway keep is
/// `window` items awaiting their commit and `window` answers awaiting a reader (``wantsInput``).
public struct PublisherStream: Sendable {
    /// Unaccepted items (and unwritten answers) a publisher may have before the gateway stops reading its socket.
    public static let defaultWindow = 1024

    /// The WebSocket subprotocol a publisher asks for to be read in large pieces (the gateway reads a device's
    /// session ~500 bytes a loop turn, which keeps 10,000 idle sessions small and holds a stream to ~3 items a turn).
    /// Only a publisher authenticates on it; its frames are v1's.
    public static let subprotocol = "lanpush.publisher"

    /// The gateway's receive buffer for ``subprotocol``: ~100 items of a typical size per read.
    public static let receiveBuffer = 16 * 1024

    public let window: Int
    /// The number of the last item read (items are numbered 1, 2, 3, … in arrival order; pings are not items).
    public private(set) var items: UInt64 = 0
    /// Every item up to this one is handled and committed (or needed no commit).
    public private(set) var committed: UInt64 = 0
    /// The `through` of the last `accepted` handed out.
    private var announced: UInt64 = 0
    /// Rejections, warnings and pongs not yet handed out, oldest first from `head`.
    private var replies: [PublisherReply] = []
    private var head = 0

    public init(window: Int = PublisherStream.defaultWindow) {
        self.window = max(1, window)
    }

    /// What the caller must do about a frame.
    public enum Input: Sendable, Equatable {
        /// Apply item `number` now; `body` is a `POST /v1/push` body.
        case item(number: UInt64, id: JSONValue?, body: [String: JSONValue])
        /// Nothing to apply: a ping (answered), or a frame refused as an item of its own.
        case none
    }

    /// One text message of the publisher. A frame that is not a `push` or a `ping` still takes an item number (the
    /// publisher meant it as one) and is rejected as that item, so the publisher's count and the gateway's agree.
    public mutating func receive(_ bytes: [UInt8]) -> Input {
        switch PublisherFrame.decode(bytes) {
        case .success(.ping):
            replies.append(.pong)
            return .none
        case .success(.push(let id, let body)):
            items += 1
            return .item(number: items, id: id, body: body)
        case .failure(let refusal):
            items += 1
            reject(items, id: refusal.id, refusal.error)
            return .none
        }
    }

    /// Item `item` changed nothing.
    public mutating func reject(_ item: UInt64, id: JSONValue?, _ error: FieldError) {
        let error = error.bounded
        replies.append(.rejected(item: item, id: id, error))
    }

    /// Item `item` was applied with a caveat.
    public mutating func warn(_ item: UInt64, id: JSONValue?, _ warning: FieldWarning) {
        var warning = warning
        warning.message = FieldError.bounded(warning.message)
        replies.append(.warning(item: item, id: id, warning))
    }

    /// Longest message of a rejection or warning, in UTF-8 bytes (`FieldError.maxMessageBytes`): a window of answers
    /// waits in the gateway until the publisher reads them.
    public static let maxMessageBytes = FieldError.maxMessageBytes

    /// A commit that covers every item up to `through` completed (in memory: the turn ended).
    public mutating func committed(through: UInt64) {
        committed = max(committed, min(through, items))
    }

    /// The next frame to send: rejections, warnings and pongs in order, then `accepted` when it moved (one frame
    /// for every commit since the last, however many items they held).
    public mutating func nextReply() -> PublisherReply? {
        if head < replies.count {
            let reply = replies[head]
            head += 1
            if head == replies.count {
                replies.removeAll(keepingCapacity: replies.count <= 64)
                head = 0
            }
            return reply
        }
        guard committed > announced else { return nil }
        announced = committed
        return .accepted(through: committed)
    }

    /// Whether anything is waiting to be sent.
    public var hasReplies: Bool { head < replies.count || committed > announced }

    /// Whether the gateway may read the publisher's next frame: fewer than `window` items wait for their commit and
    /// fewer than `window` answers wait to be written (a publisher that does not read stops being read).
    public var wantsInput: Bool {
        items - committed < UInt64(window) && replies.count - head < window
    }
}
