/// The device's bounded memory of recent changes, enough to resume a session by replay instead of a
/// snapshot: for each change, the tag it touched and what that tag looked like just before it.
///
/// A resume from `seq` replays only when every change after `seq` is still here and `seq` was a clean cut
/// for every session that was sent it (see `markUnsafe`).
///
/// Bounded twice: by `capacity` entries, and from outside by bytes (`dropOldest(whileBytesAbove:)`, driven by the
/// gateway-wide `ResumeHistoryBudget`); and what every session of the device has acknowledged goes at once
/// (`dropOlder(than:)`). Either way the oldest entries go first, so what stays is always a suffix of the device's
/// changes and a resume from before it gets a snapshot.
public struct ResumeHistory: Sendable {
    public struct Entry: Sendable, Hashable {
        public var seq: UInt64
        public var tag: String?
        /// The tag's view before this change; `nil` when the client had nothing under the tag.
        public var before: ClientView?
        /// A resume from this seq would be wrong (`markUnsafe`). Kept on the entry, so the mark goes with it.
        public internal(set) var unsafe = false
        /// What the entry is reckoned to weigh in memory, fixed when it is made (the budget sums these, so a
        /// trim subtracts exactly what the append added).
        public let bytes: Int

        /// `stateBytes`: the size of `before`'s state as JSON when the caller has it (the ledger's activity keeps
        /// it), else it is counted here.
        public init(seq: UInt64, tag: String?, before: ClientView?, stateBytes: Int? = nil) {
            self.seq = seq
            self.tag = tag
            self.before = before
            self.bytes = Self.estimate(
                tag: tag, stateBytes: before.map { view in stateBytes ?? JSONValue.object(view.state).serializedCount })
        }

        /// The slot it takes in the history's array plus its strings' and dictionaries' heap headers: measured
        /// against RSS in the soak, an entry with a small view costs about this much beyond its frame's bytes.
        public static let overhead = MemoryLayout<Entry>.stride + 96

        /// Sized like the notification queue is: the bytes of the frame that would carry the view (its
        /// whole state as the patch), which grows with the state as its memory does. Counted without building the
        /// frame — an entry is made for every device an update goes to — as the state's JSON inside the envelope
        /// `{"type":"update","seq":0,"tag":…,"patch":…,"phase":"active"}` (exact for an active view without a stale
        /// date or relevance score; a few bytes under for one with them).
        static func estimate(tag: String?, stateBytes: Int?) -> Int {
            let tagBytes = tag?.utf8.count ?? 0
            guard let stateBytes else { return overhead + tagBytes }
            return overhead + envelope + tagBytes + stateBytes
        }

        static let envelope = #"{"type":"update","seq":0,"tag":"","patch":,"phase":"active"}"#.utf8.count
    }

    public let capacity: Int
    /// Live entries are `entries[head...]`, oldest first. Dropping only moves `head`; once the dead prefix is as
    /// long as the live part the live entries move down in place, and the array keeps its room unless that is well
    /// beyond what it holds (`compact()`).
    private var entries: [Entry] = []
    private var head = 0
    /// The sum of the live entries' `bytes`.
    public private(set) var bytes = 0

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    public var count: Int { entries.count - head }

    /// Seq of the oldest change still held.
    public var oldestSeq: UInt64? {
        head < entries.count ? entries[head].seq : nil
    }

    /// Takes `entry` over: a copy into the array would retain the view it holds, and the caller's release it again.
    public mutating func append(_ entry: consuming Entry) {
        appendedSinceQuietCheck = true
        bytes += entry.bytes
        entries.append(entry)
        if count > capacity { dropOldest() }
    }

    /// Drops the oldest entries until the history weighs at most `limit` bytes (possibly nothing is left: a
    /// client already at the newest seq still resumes, see `changes(after:current:)`).
    public mutating func dropOldest(whileBytesAbove limit: Int) {
        while bytes > limit, count > 0 { dropOldest() }
    }

    /// Drops the entries older than `seq`: a replay from `seq` or later reads none of them. The entry of `seq`
    /// itself stays, since a resume from `seq` needs it there (with its unsafe mark, if any).
    public mutating func dropOlder(than seq: UInt64) {
        while let oldest = oldestSeq, oldest < seq { dropOldest() }
    }

    /// Its unsafe mark goes with the entry: a resume from that seq now fails on the missing entry instead.
    private mutating func dropOldest() {
        bytes -= entries[head].bytes
        // Releases the view's storage now, in place (a copy of the entry would retain and release all it holds).
        entries[head].before = nil
        entries[head].tag = nil
        head += 1
        if head == entries.count {
            entries.removeAll(keepingCapacity: entries.capacity <= Self.keptRoom)
            head = 0
        } else if head >= 16, head * 2 >= entries.count {
            compact()
        }
    }

    /// Moves the live entries to the front. In place, keeping the array's room: a device whose clients keep up
    /// appends a change and drops one at each acknowledgement, and an array rebuilt at the exact size of what is left
    /// grew again by reallocation within the next few changes — for every device an update goes to (~2 % of a
    /// fan-out's instructions, and fresh memory written each time). Room well beyond what is held (after a burst) is
    /// given back, so a history's memory stays within a few times its entries' and never above `keptRoom` slots idle.
    private mutating func compact() {
        entries.removeFirst(head)
        head = 0
        if entries.capacity > max(4 * entries.count, Self.keptRoom) {
            var smaller: [Entry] = []
            smaller.reserveCapacity(2 * entries.count)
            smaller.append(contentsOf: entries)
            entries = smaller
        }
    }

    /// The room a busy history keeps for entries it does not hold (~6.5 KiB): what a device whose clients fall a few
    /// dozen changes behind cycles through. A quiet one gives it back (`releaseRoomIfQuiet()`).
    static let keptRoom = 64

    /// Whether anything was appended since `releaseRoomIfQuiet()` last looked.
    private var appendedSinceQuietCheck = false

    /// Called periodically (the loop's tick): a history nothing was appended to since the last call shrinks its
    /// array to what it holds, so the room a burst left is not kept by every device that has gone quiet since.
    public mutating func releaseRoomIfQuiet() {
        if appendedSinceQuietCheck {
            appendedSinceQuietCheck = false
            return
        }
        guard head > 0 || entries.capacity > entries.count + 4 else { return }
        entries = entries.isEmpty ? [] : Array(entries[head...])
        head = 0
    }

    /// The array's room, in entries (what `compact()` keeps).
    package var storageCapacity: Int { entries.capacity }

    /// A resume from `seq` would be wrong: a session was sent a merged delta with this seq while older changes of
    /// other tags were still pending for it, so "I have seq" does not mean "I have all <= seq". The mark is kept on
    /// the entry (a set of marked seqs cost a hash for every entry dropped, once per change of every device).
    public mutating func markUnsafe(_ seq: UInt64) {
        if let i = index(of: seq) { entries[i].unsafe = true }
    }

    /// Where the entry of `seq` is. Every change of the device records one, so seqs run without gaps and the entry
    /// is found by its distance from the oldest; a search otherwise.
    private func index(of seq: UInt64) -> Int? {
        guard let oldest = oldestSeq, seq >= oldest else { return nil }
        if seq - oldest < UInt64(count) {
            let guess = head + Int(seq - oldest)
            if entries[guess].seq == seq { return guess }
        }
        var low = head, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].seq < seq { low = mid + 1 } else { high = mid }
        }
        return low < entries.count && entries[low].seq == seq ? low : nil
    }

    public mutating func reset() {
        entries.removeAll()
        head = 0
        bytes = 0
    }

    /// How many unsafe marks are held.
    public var unsafeCount: Int { entries[head...].reduce(0) { $0 + ($1.unsafe ? 1 : 0) } }

    /// The changes after `seq`, oldest first, or `nil` when replay from `seq` is not possible.
    public func changes(after seq: UInt64, current: UInt64) -> [Entry]? {
        let at = index(of: seq)
        if let at, entries[at].unsafe { return nil }
        if seq == current { return [] }
        // The entry for `seq` itself must still be here: with it went its unsafe mark.
        guard seq < current, let at else { return nil }
        return Array(entries[(at + 1)...])
    }
}
