import Testing

@testable import LanpushCore

@Suite struct QueuedNotificationTests {
    /// A notification is weighed by counting, not by building its frame: the count must be the frame's size.
    @Test(arguments: NotificationFrameTests.messages)
    func itsWeightIsItsFramesSize(_ message: NotifyMessage) {
        for seq: UInt64 in [0, 7, 42_000, 9_007_199_254_740_991] {
            let queued = QueuedNotification(seq: seq, body: .notification(message), acceptedAt: 0)
            #expect(queued.bytes == OutboundEvent.notification(seq: seq, message).frameBytes)
            #expect(queued.bytes == OutboundEvent.notification(seq: seq, message).json.serializedBytes().count)
        }
    }
}
