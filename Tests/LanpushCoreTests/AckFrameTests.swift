import Testing

@testable import LanpushCore

/// The ack fast path reads only plain ack frames, and reads them as the general parser and the seq rule would.
@Suite struct AckFrameTests {
    private func seq(_ text: String) -> UInt64? { AckFrame.seq(Array(text.utf8)) }

    /// What the general path makes of a frame: the seq of an ack it accepts, `nil` for anything else.
    private func general(_ bytes: [UInt8]) -> UInt64? {
        guard let object = try? JSONValue.parse(bytes).objectValue, object.count == 2,
            object["type"] == .string("ack"), let n = object["seq"]?.numberValue, n.isFinite, n >= 0,
            n <= 9_007_199_254_740_992, n == n.rounded(.down)
        else { return nil }
        return UInt64(n)
    }

    /// What the clients send (JavaScript's and Swift's compact JSON, Python's default separators), either order.
    @Test func readsTheFramesClientsSend() {
        #expect(seq(#"{"type":"ack","seq":42}"#) == 42)
        #expect(seq(#"{"type": "ack", "seq": 42}"#) == 42)
        #expect(seq(#"{"seq":7,"type":"ack"}"#) == 7)
        #expect(seq(" \n{ \"type\" :\t\"ack\" ,\r\n \"seq\" : 0 } \n") == 0)
        #expect(seq(#"{"type":"ack","seq":9007199254740992}"#) == 9_007_199_254_740_992)
    }

    /// Anything else goes to the general parser: the fast path has no opinion on it.
    @Test func leavesEveryOtherFrameToTheGeneralParser() {
        let others = [
            #"{"type":"ack","seq":9007199254740993}"#,  // past 2^53
            #"{"type":"ack","seq":99999999999999999999}"#,
            #"{"type":"ack","seq":2.0}"#, #"{"type":"ack","seq":2e0}"#, #"{"type":"ack","seq":2E0}"#,
            #"{"type":"ack","seq":-1}"#, #"{"type":"ack","seq":01}"#, #"{"type":"ack","seq":"1"}"#,
            #"{"type":"ack","seq":1,"seq":2}"#, #"{"type":"ack","type":"ack","seq":1}"#,
            #"{"type":"ack","seq":1,"x":0}"#, #"{"type":"ack"}"#, #"{"seq":1}"#, #"{"type":"ping","seq":1}"#,
            #"{"typ\u0065":"ack","seq":1}"#, #"{"type":"\u0061ck","seq":1}"#, #"{"type":"ack","seq":1}x"#,
            #"{"type":"ack","seq":1,}"#, #"{"type":"ack","seq":1"#, #"{"type":"ack" "seq":1}"#, "", "{", "[]",
            "\u{FEFF}{\"type\":\"ack\",\"seq\":1}", #"{"type":"ack","seq":1}"# + "\u{0B}",
        ]
        for text in others { #expect(seq(text) == nil, "\(text)") }
    }

    /// Every frame a byte's change away from plain acks: where the fast path answers, the general path gives the same
    /// seq; where the general path reads a plain two-member ack with a seq below 2^53, the fast path reads it too
    /// unless it has escapes, a fraction, an exponent or a minus sign (`-0` is a seq of 0 to the general path, and
    /// `9007199254740993` is 2^53 once a Double: left to it).
    @Test func agreesWithTheGeneralParserOnMutations() {
        let bases = [#"{"type":"ack","seq":1234}"#, #"{"seq": 9007199254740992, "type": "ack"}"#, #" { "type" : "ack" , "seq" : 0 } "#]
        let alphabet = Array(#"{}[]":,. 0123456789eE+-\tyapsckqu"#.utf8) + [0x09, 0x0A, 0x0D, 0x0B, 0x00, 0xC3]
        var checked = 0
        var answered = 0
        for base in bases.map({ Array($0.utf8) }) {
            for i in 0...base.count {
                for byte in alphabet {
                    var variants = [base]
                    if i < base.count {
                        variants[0][i] = byte
                        variants.append(base.enumerated().filter { $0.offset != i }.map(\.element))  // deleted
                    }
                    var inserted = base
                    inserted.insert(byte, at: i)
                    variants.append(inserted)
                    for bytes in variants {
                        checked += 1
                        let fast = AckFrame.seq(bytes)
                        let slow = general(bytes)
                        if let fast {
                            answered += 1
                            #expect(slow == fast, "\(String(decoding: bytes, as: UTF8.self))")
                        } else if let slow, slow < AckFrame.largest, !bytes.contains(UInt8(ascii: "\\")), !bytes.contains(UInt8(ascii: ".")),
                            !bytes.contains(UInt8(ascii: "-")), !Self.hasExponent(bytes)
                        {
                            Issue.record("a plain ack left to the general parser: \(String(decoding: bytes, as: UTF8.self))")
                        }
                    }
                }
            }
        }
        #expect(checked > 5_000)
        #expect(answered > 100, "the mutations include plain acks (whitespace, other digits)")
    }

    /// A digit followed by `e` or `E`: a number with an exponent.
    private static func hasExponent(_ bytes: [UInt8]) -> Bool {
        zip(bytes, bytes.dropFirst()).contains { a, b in
            a >= UInt8(ascii: "0") && a <= UInt8(ascii: "9") && (b == UInt8(ascii: "e") || b == UInt8(ascii: "E"))
        }
    }
}
