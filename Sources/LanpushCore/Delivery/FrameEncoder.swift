/// Encodes frames for sessions, once per distinct frame: one change fanned out to many devices gives every
/// session the same frame but for its seq (each device counts its own), so the bytes of the last frame are kept and
/// the next one that differs only in its seq is spliced from them instead of built and encoded again.
///
/// Equal events encode to equal bytes (sorted keys), so a splice is byte for byte what the encoding would be.
/// One frame is kept per protocol version, the last: fan-out writes every session of one change in the same pass,
/// and sessions of both versions may follow the same devices. Not thread-safe: one per loop.
public final class FrameEncoder {
    /// The last event encoded in one version (with seq 0), its bytes and where its seq's digits are.
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
        let slot = ProtocolVersion.allCases.firstIndex(of: version)!
        let key = event.withSeq(0)
        if key == last[slot].event {
            spliced += 1
            let kept = last[slot]
            var out = [UInt8]()
            out.reserveCapacity(kept.bytes.count + 8)
            out.append(contentsOf: kept.bytes[..<kept.seqRange.lowerBound])
            JSONWriter.writeNumber(Double(seq), into: &out)
            out.append(contentsOf: kept.bytes[kept.seqRange.upperBound...])
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
        last[slot] = Last(event: key, bytes: out, seqRange: range)
        return out
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

    /// The same frame with another seq (snapshots and drop reports unchanged).
    func withSeq(_ seq: UInt64) -> OutboundEvent {
        switch self {
        case .start(_, let tag, let attributes, let view, let alert):
            .start(seq: seq, tag: tag, attributes: attributes, view: view, alert: alert)
        case .update(_, let tag, let patch, let view, let silent, let alert, let staleDateRemoved):
            .update(
                seq: seq, tag: tag, patch: patch, view: view, silent: silent, alert: alert,
                staleDateRemoved: staleDateRemoved)
        case .end(_, let tag, let patch, let view, let staleDateRemoved):
            .end(seq: seq, tag: tag, patch: patch, view: view, staleDateRemoved: staleDateRemoved)
        case .lifecycle(_, let tag, let phase): .lifecycle(seq: seq, tag: tag, phase: phase)
        case .notification(_, let message): .notification(seq: seq, message)
        case .clear(_, let tag): .clear(seq: seq, tag: tag)
        case .snapshot, .notificationsDropped: self  // not spliced: their seq is not the frame's own
        }
    }
}
