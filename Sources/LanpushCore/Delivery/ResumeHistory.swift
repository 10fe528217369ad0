/// The device's bounded memory of recent changes, enough to resume a session by replay instead of a
/// snapshot: for each change, the tag it touched and what that tag looked like just before it.
///
/// A resume from `seq` replays only when every change after `seq` is still here and `seq` was a clean cut
/// for every session that was sent it (see `markUnsafe`).
public struct ResumeHistory: Sendable {
    public struct Entry: Sendable, Hashable {
        public var seq: UInt64
        public var tag: String?
        /// The tag's view before this change; `nil` when the client had nothing under the tag.
        public var before: ClientView?
    }

    public let capacity: Int
    private var entries: [Entry] = []
    private var head = 0
    /// Seqs after which a resume would be wrong: a session was sent a merged delta with this seq while
    /// older changes of other tags were still pending for it, so "I have seq" does not mean "I have all <= seq".
    private var unsafe: Set<UInt64> = []

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        entries.reserveCapacity(self.capacity)
    }

    public var count: Int { entries.count }

    /// Seq of the oldest change still held.
    public var oldestSeq: UInt64? {
        entries.isEmpty ? nil : entries[head].seq
    }

    public mutating func append(_ entry: Entry) {
        if entries.count < capacity {
            entries.append(entry)
        } else {
            unsafe.remove(entries[head].seq)
            entries[head] = entry
            head = (head + 1) % capacity
        }
    }

    public mutating func markUnsafe(_ seq: UInt64) {
        if let oldest = oldestSeq, seq >= oldest { unsafe.insert(seq) }
    }

    public mutating func reset() {
        entries.removeAll(keepingCapacity: true)
        head = 0
        unsafe.removeAll()
    }

    /// The changes after `seq`, oldest first, or `nil` when replay from `seq` is not possible.
    public func changes(after seq: UInt64, current: UInt64) -> [Entry]? {
        guard !unsafe.contains(seq) else { return nil }
        if seq == current { return [] }
        // The entry for `seq` itself must still be here: with it went its unsafe mark.
        guard seq < current, let oldest = oldestSeq, oldest <= seq else { return nil }
        var result = [Entry]()
        for i in 0..<entries.count {
            let entry = entries[(head + i) % entries.count]
            if entry.seq > seq { result.append(entry) }
        }
        return result
    }
}
