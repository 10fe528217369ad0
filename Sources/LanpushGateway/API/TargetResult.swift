import LanpushCore

/// One target's line in `POST /v1/push`'s answer: `{"target", "result"}`, plus `"relay": true` when it went to the
/// relay as well as to its LAN sessions.
struct TargetResult: Equatable {
    var target: String
    var word: Word
    var relay: Bool

    /// What became of the push for the target.
    enum Word {
        case delivered, queued, relay, noRelay, unknownTarget

        /// As the answer spells it; no character in it needs escaping.
        var text: StaticString {
            switch self {
            case .delivered: "delivered"
            case .queued: "queued"
            case .relay: "relay"
            case .noRelay: "no_relay"
            case .unknownTarget: "unknown_target"
            }
        }
    }

    init(target: String, word: Word, relay: Bool) {
        self.target = target
        self.word = word
        self.relay = relay
    }

    /// What `Ingest` did for the target (`nil`: no such device).
    init(target: String, routed: Ingest.Routed?) {
        self.target = target
        guard let routed else {
            (word, relay) = (.unknownTarget, false)
            return
        }
        if routed.refused {
            word = .noRelay
        } else if routed.lan == .delivered {
            word = .delivered
        } else {
            word = routed.relay ? .relay : .queued
        }
        // Delivered or queued on the LAN and sent to the relay as well.
        relay = routed.relay && routed.lan != .none && word != .relay
    }

    var json: JSONValue {
        var o: [String: JSONValue] = ["target": .string(target), "result": .string(word.text.description)]
        if relay { o["relay"] = true }
        return .object(o)
    }

    /// The 202's body, `{"results":[...],"warnings":[...]}`, byte for byte what serialising it as a `JSONValue`
    /// gives (members in sorted order), written directly: an update to every device answers one line per device,
    /// and building a dictionary per line to serialise it was ~7 % of the server's time fanning out to 100 devices.
    static func answer(_ results: [TargetResult], warnings: [JSONValue]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(16 + results.count * 48)
        Self.append(#"{"results":["#, to: &out)
        for (i, r) in results.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            Self.append(r.relay ? #"{"relay":true,"result":""# : #"{"result":""#, to: &out)
            Self.append(r.word.text, to: &out)
            Self.append(#"","target":"#, to: &out)
            JSONWriter.writeString(r.target, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        if !warnings.isEmpty {
            Self.append(#","warnings":"#, to: &out)
            JSONWriter.write(.array(warnings), into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
