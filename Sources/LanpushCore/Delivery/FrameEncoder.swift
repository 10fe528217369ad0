/// Encodes frames for sessions, once per distinct frame: one change fanned out to many devices gives every
/// session the same frame but for its seq (each device counts its own), so the bytes of the last frame are kept and
/// the next one that differs only in its seq is spliced from them instead of built and encoded again.
///
/// Equal events encode to equal bytes (sorted keys), so a splice is byte for byte what the encoding would be.
/// One frame is kept, the last: fan-out writes every session of one change in the same pass. Not thread-safe:
/// one per loop.
public final class FrameEncoder {
    /// The last event encoded, with seq 0.
    private var last: OutboundEvent?
    private var lastBytes: [UInt8] = []
    /// Where the seq's digits are in `lastBytes`.
    private var seqRange: Range<Int> = 0..<0
    /// Frames spliced rather than encoded (for tests and benchmarks).
    public private(set) var spliced = 0

    public init() {}

    public func encode(_ event: OutboundEvent) -> [UInt8] {
        guard let seq = event.spliceableSeq else { return event.json.serializedBytes() }
        let key = event.withSeq(0)
        if key == last {
            spliced += 1
            var out = [UInt8]()
            out.reserveCapacity(lastBytes.count + 8)
            out.append(contentsOf: lastBytes[..<seqRange.lowerBound])
            JSONWriter.writeNumber(Double(seq), into: &out)
            out.append(contentsOf: lastBytes[seqRange.upperBound...])
            return out
        }
        var out = [UInt8]()
        out.reserveCapacity(256)
        guard let range = JSONWriter.write(event.json, into: &out, marking: "seq") else {
            last = nil
            return out
        }
        last = key
        lastBytes = out
        seqRange = range
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
