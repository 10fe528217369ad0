import LanpushCore

/// The relay bodies of a device's queued notifications, by seq: what a hand-over sends for each notification the
/// device's sessions had not acknowledged when it left the LAN (an activity keeps its own, `Activity.relayBody`).
///
/// A list in the order the notifications were queued, so in ascending seq: each notification appends one, and
/// those acknowledged since go from the front — no table hashed per notification (that was ~2 % of an HTTP
/// notification's instructions), and none rebuilt to drop the acknowledged ones.
struct NotificationRelayBodies {
    private var entries: [(seq: UInt64, body: DeferredJSON)] = []

    var count: Int { entries.count }

    /// The body of the notification `seq`, if it still has one.
    subscript(seq: UInt64) -> DeferredJSON? {
        index(of: seq).map { entries[$0].body }
    }

    /// Keeps `body` for the notification `seq` (replacing the one it had). Nearly always the newest: an append.
    mutating func keep(_ body: DeferredJSON, for seq: UInt64) {
        guard let last = entries.last, seq <= last.seq else { return entries.append((seq, body)) }
        let i = position(of: seq)
        if i < entries.count && entries[i].seq == seq { entries[i].body = body } else { entries.insert((seq, body), at: i) }
    }

    /// Forgets the bodies of every notification before `oldest` (acknowledged or dropped).
    mutating func forget(before oldest: UInt64) {
        guard let first = entries.first, first.seq < oldest else { return }
        let keep = entries.firstIndex { $0.seq >= oldest } ?? entries.count
        entries.removeFirst(keep)
    }

    /// Forgets the body of the notification `seq` (the relay delivered it).
    mutating func remove(_ seq: UInt64) {
        if let i = index(of: seq) { entries.remove(at: i) }
    }

    private func index(of seq: UInt64) -> Int? {
        let i = position(of: seq)
        return i < entries.count && entries[i].seq == seq ? i : nil
    }

    /// Where `seq` is or would go (binary search: the seqs ascend).
    private func position(of seq: UInt64) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].seq < seq { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
