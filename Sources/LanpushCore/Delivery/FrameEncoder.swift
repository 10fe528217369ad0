/// Encodes frames for sessions, once per distinct frame: one change fanned out to many devices gives every
/// session the same frame but for its seq (each device counts its own), so the bytes of a frame are kept and the
/// next one that differs only in its seq is spliced from them instead of built and encoded again.
///
/// Equal events encode to equal bytes (sorted keys), so a splice is byte for byte what the encoding would be.
/// Frames are kept per protocol version (sessions of both versions may follow the same devices), per kind of event and
/// per the id of the event's state (`ClientView.stateID`): at saturation a session is written many tags in one turn
/// and the next session the same tags in the same order, so keeping only the last frame missed at every frame. The key
/// only finds a candidate: a kept frame is used only if the event equals it but for the seq. Past ``capacity`` frames
/// the table starts again empty.
/// Not thread-safe: one per loop.
public final class FrameEncoder {
    /// An event encoded in one version, its bytes and where its seq's digits are. A class: read from the table
    /// through one reference, where a struct would be copied out of the dictionary (every string and dictionary in
    /// the event retained and released) at each frame.
    private final class Kept {
        let event: OutboundEvent
        let bytes: [UInt8]
        let seqRange: Range<Int>

        init(event: OutboundEvent, bytes: [UInt8], seqRange: Range<Int>) {
            self.event = event
            self.bytes = bytes
            self.seqRange = seqRange
        }

        /// Whether `other` is this frame but for its seq; the kept event is compared where it lies (read from the
        /// outside, it was copied out first, every string and dictionary in it retained and released, at each frame).
        func isFrame(of other: OutboundEvent) -> Bool { event.differsOnlyInSeq(from: other) }

        /// These bytes with `seq` in place of the kept one, written in one pass into an array of the final size.
        /// `seq` below 2^53 (where its text is its digits).
        func spliced(_ seq: UInt64) -> [UInt8] {
            let digits = JSONWriter.countNumber(Double(seq))
            let head = seqRange.lowerBound
            let tail = bytes.count - seqRange.upperBound
            return [UInt8](unsafeUninitializedCapacity: head + digits + tail) { out, count in
                bytes.withUnsafeBufferPointer { kept in
                    _ = out.initialize(fromContentsOf: kept[..<head])
                    var x = seq
                    for i in stride(from: head + digits - 1, through: head, by: -1) {
                        out[i] = UInt8(ascii: "0") &+ UInt8(x % 10)
                        x /= 10
                    }
                    _ = UnsafeMutableBufferPointer(rebasing: out[(head + digits)...])
                        .initialize(fromContentsOf: kept[seqRange.upperBound...])
                }
                count = head + digits + tail
            }
        }
    }

    public static let capacity = 128
    /// Per protocol version, by the event's kind and state.
    private var kept: [[FrameKey: Kept]] = Array(repeating: [:], count: ProtocolVersion.allCases.count)
    /// Frames spliced rather than encoded (for tests and benchmarks).
    public private(set) var spliced = 0

    public init() {}

    public func encode(_ event: OutboundEvent, _ version: ProtocolVersion = .v1) -> [UInt8] {
        guard let seq = event.spliceableSeq else { return event.json(version).serializedBytes() }
        let key = event.frameKey
        let v = version.slot
        // Below 2^53 a seq is written as its digits; above, as the number's shortest double text (never spliced).
        if seq < 9_007_199_254_740_992, let frame = kept[v][key], frame.isFrame(of: event) {
            spliced += 1
            return frame.spliced(seq)
        }
        var out = [UInt8]()
        out.reserveCapacity(256)
        let range: Range<Int>?
        if case .notification(let seq, let message) = event {
            range = NotificationFrame.write(seq: seq, message, into: &out)
        } else {
            let frame = event.json(version)
            if case .array(let items) = frame, let type = items.first?.stringValue {
                JSONWriter.write(frame, into: &out)
                let start = CompactFrame.seqOffset(type: type)
                range = start..<(start + JSONWriter.countNumber(Double(seq)))
            } else {
                range = JSONWriter.write(frame, into: &out, marking: "seq")
            }
        }
        guard let range else {
            kept[v].removeValue(forKey: key)
            return out
        }
        if kept[v].count >= Self.capacity { kept[v].removeAll(keepingCapacity: true) }
        kept[v][key] = Kept(event: event, bytes: out, seqRange: range)
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
    /// Where the encoder looks for the event's kept frame: its kind and its state's id (0 where it has none).
    /// Events that are one frame but for the seq share it when they come from one fan-out.
    var frameKey: FrameKey {
        switch self {
        case .start(_, _, _, let view, _): FrameKey(kind: 1, state: view.stateID)
        case .update(_, _, _, let view, _, _, _): FrameKey(kind: 2, state: view.stateID)
        case .end(_, _, _, let view, _): FrameKey(kind: 3, state: view.stateID)
        case .lifecycle, .notification, .clear, .snapshot, .notificationsDropped: FrameKey(kind: 0, state: 0)
        }
    }

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

/// An event's kind and state id: where `FrameEncoder` keeps its frame.
struct FrameKey: Hashable {
    let kind: UInt8
    let state: UInt64
}
