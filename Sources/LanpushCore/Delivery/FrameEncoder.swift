/// Encodes frames for sessions, once per distinct frame: one change fanned out to many devices gives every
/// session the same frame but for its seq (each device counts its own), so the bytes of the last frame are kept and
/// the next one that differs only in its seq is spliced from them instead of built and encoded again.
///
/// Equal events encode to equal bytes (sorted keys), so a splice is byte for byte what the encoding would be.
/// One frame is kept per protocol version, the last: fan-out writes every session of one change in the same pass,
/// and sessions of both versions may follow the same devices. Not thread-safe: one per loop.
public final class FrameEncoder {
    /// The last event encoded in one version, its bytes and where its seq's digits are.
    private struct Last {
        var event: OutboundEvent?
        var bytes: [UInt8] = []
        var seqRange: Range<Int> = 0..<0
    }

    private var last: [Last] = Array(repeating: Last(), count: ProtocolVersion.allCases.count)
    /// Frames spliced rather than encoded (for tests and benchmarks).
    public private(set) var spliced = 0

    public init() {}

    public func encode(_ event: OutboundEvent, _ version: ProtocolVersion = .v1) -> [UInt8] {
        guard let seq = event.spliceableSeq else { return event.json(version).serializedBytes() }
        let slot = version.slot
        // Read in place: a copy of the kept event or its bytes would retain every string and dictionary in them,
        // once per session of a fan-out.
        if last[slot].event?.differsOnlyInSeq(from: event) == true {
            spliced += 1
            let range = last[slot].seqRange
            var out = [UInt8]()
            out.reserveCapacity(last[slot].bytes.count + 8)
            last[slot].bytes.withUnsafeBufferPointer { kept in
                out.append(contentsOf: UnsafeBufferPointer(rebasing: kept[..<range.lowerBound]))
                JSONWriter.writeNumber(Double(seq), into: &out)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: kept[range.upperBound...]))
            }
            return out
        }
        var out = [UInt8]()
        out.reserveCapacity(256)
        let frame = event.json(version)
        let range: Range<Int>?
        if case .array(let items) = frame, let type = items.first?.stringValue {
            JSONWriter.write(frame, into: &out)
            let start = CompactFrame.seqOffset(type: type)
            range = start..<(start + JSONWriter.countNumber(Double(seq)))
        } else {
            range = JSONWriter.write(frame, into: &out, marking: "seq")
        }
        guard let range else {
            last[slot].event = nil
            return out
        }
        last[slot] = Last(event: event, bytes: out, seqRange: range)
        return out
    }
}
extension ProtocolVersion {
    /// The version's place among the frames the encoder keeps (a switch, so a new version must take its own).
    fileprivate var slot: Int {
        switch self {
        case .v1: 0
        case .v2: 1
        }
    }
}

extension OutboundEvent {
    /// The seq of a frame that carries it as its top-level `seq` (every frame but a snapshot's and a drop report).
    var spliceableSeq: UInt64? {
        switch self {
        case .snapshot, .notificationsDropped: nil
        default: seq
        }
    }

    /// Whether the two are one frame but for their seq (snapshots and drop reports never are: their seq is not the
    /// frame's own). Compared member by member, without making either event again.
    func differsOnlyInSeq(from other: OutboundEvent) -> Bool {
        switch self {
        case .start(_, let tag, let attributes, let view, let alert):
            guard case .start(_, let tag2, let attributes2, let view2, let alert2) = other else { return false }
            return tag == tag2 && view == view2 && attributes == attributes2 && alert == alert2
        case .update(_, let tag, let patch, let view, let silent, let alert, let staleDateRemoved):
            guard case .update(_, let tag2, let patch2, let view2, let silent2, let alert2, let staleDateRemoved2) = other
            else { return false }
            return tag == tag2 && patch == patch2 && view == view2 && silent == silent2 && alert == alert2
                && staleDateRemoved == staleDateRemoved2
        case .end(_, let tag, let patch, let view, let staleDateRemoved):
            guard case .end(_, let tag2, let patch2, let view2, let staleDateRemoved2) = other else { return false }
            return tag == tag2 && patch == patch2 && view == view2 && staleDateRemoved == staleDateRemoved2
        case .lifecycle(_, let tag, let phase):
            guard case .lifecycle(_, let tag2, let phase2) = other else { return false }
            return tag == tag2 && phase == phase2
        case .notification(_, let message):
            guard case .notification(_, let message2) = other else { return false }
            return message == message2
        case .clear(_, let tag):
            guard case .clear(_, let tag2) = other else { return false }
            return tag == tag2
        case .snapshot, .notificationsDropped:
            return false
        }
    }
}
