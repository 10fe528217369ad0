/// A plain notification's frame, written and weighed without building its object:
/// `{"data":…,"message":…,"seq":…,"title":…,"type":"notification"}` — the same in both protocol versions, the members
/// in the order `JSONWriter`'s sorted encoding of ``OutboundEvent/notification(seq:_:)`` gives them, `message` and
/// `title` only when present. It is the frame HA's notifications make most, and every notification accepted is
/// weighed for the queue's bound: building and sorting a five-member object for either cost more than the writing.
enum NotificationFrame {
    /// Writes the frame; returns where the seq's digits are (for ``FrameEncoder``'s splices).
    static func write(seq: UInt64, _ n: NotifyMessage, into out: inout [UInt8]) -> Range<Int> {
        out.append(contentsOf: #"{"data":"#.utf8)
        JSONWriter.write(.object(n.data), into: &out)
        if let message = n.message {
            out.append(contentsOf: #","message":"#.utf8)
            JSONWriter.writeString(message, into: &out)
        }
        out.append(contentsOf: #","seq":"#.utf8)
        let start = out.count
        JSONWriter.writeNumber(Double(seq), into: &out)
        let range = start..<out.count
        if let title = n.title {
            out.append(contentsOf: #","title":"#.utf8)
            JSONWriter.writeString(title, into: &out)
        }
        out.append(contentsOf: #","type":"notification"}"#.utf8)
        return range
    }

    /// How many bytes ``write(seq:_:into:)`` writes, counted without writing them.
    static func count(seq: UInt64, _ n: NotifyMessage) -> Int {
        var count = #"{"data":,"seq":,"type":"notification"}"#.utf8.count
        count += JSONWriter.count(.object(n.data)) + JSONWriter.countNumber(Double(seq))
        if let message = n.message { count += #","message":"#.utf8.count + JSONWriter.countString(message) }
        if let title = n.title { count += #","title":"#.utf8.count + JSONWriter.countString(title) }
        return count
    }
}
