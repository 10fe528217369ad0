import Testing

@testable import LanpushCore

@Suite struct QueuedNotificationTests {
    /// A notification is weighed by counting, not by building its frame: the count must be the frame's size.
    @Test(arguments: [
        NotifyMessage(),
        NotifyMessage(message: "Washer done"),
        NotifyMessage(title: "Door", message: "open", data: ["x": 1]),
        NotifyMessage(title: "Quote \" and \\ and \n", message: "Grüße, 東京 🚪", data: [:]),
        NotifyMessage(
            message: "nested",
            data: [
                "tag": "door", "push": ["sound": ["name": "default", "critical": 1, "volume": 0.25]],
                "actions": [["action": "OPEN", "title": "Open"], ["action": "IGNORE", "title": "\u{1}"]],
                "group": .null, "ok": true, "big": 1e300, "neg": -3.5,
            ]),
    ])
    func itsWeightIsItsFramesSize(_ message: NotifyMessage) {
        for seq: UInt64 in [0, 7, 42_000, 9_007_199_254_740_991] {
            let queued = QueuedNotification(seq: seq, body: .notification(message), acceptedAt: 0)
            #expect(queued.bytes == OutboundEvent.notification(seq: seq, message).frameBytes)
            #expect(queued.bytes == OutboundEvent.notification(seq: seq, message).json.serializedBytes().count)
        }
    }
}
