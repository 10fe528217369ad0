import Testing

@testable import LanpushCore

/// A plain notification's frame is written and weighed without its object: both must be the object's sorted
/// encoding, in both protocol versions, through the encoder too.
@Suite struct NotificationFrameTests {
    static let messages = [
        NotifyMessage(),
        NotifyMessage(message: "Washer done"),
        NotifyMessage(title: "Door"),
        NotifyMessage(title: "Door", message: "open", data: ["x": 1]),
        NotifyMessage(title: "Quote \" and \\ and \n", message: "Grüße, 東京 🚪", data: [:]),
        NotifyMessage(
            message: "nested",
            data: [
                "tag": "door", "push": ["sound": ["name": "default", "critical": 1, "volume": 0.25]],
                "actions": [["action": "OPEN", "title": "Open"], ["action": "IGNORE", "title": "\u{1}"]],
                "group": .null, "ok": true, "big": 1e300, "neg": -3.5, "seq": 3,
            ]),
    ]

    @Test(arguments: messages)
    func itsFrameIsItsObjectsSortedEncoding(_ message: NotifyMessage) {
        for seq: UInt64 in [0, 7, 42_000, 9_007_199_254_740_993] {
            let event = OutboundEvent.notification(seq: seq, message)
            var out = [UInt8]()
            let range = NotificationFrame.write(seq: seq, message, into: &out)
            #expect(out == event.json.serializedBytes())
            #expect(Array(out[range]) == JSONValue.number(Double(seq)).serializedBytes(), "the top-level seq, not data's")
            #expect(NotificationFrame.count(seq: seq, message) == out.count)
            for version in ProtocolVersion.allCases {
                #expect(FrameEncoder().encode(event, version) == event.json(version).serializedBytes())
            }
        }
    }
}
