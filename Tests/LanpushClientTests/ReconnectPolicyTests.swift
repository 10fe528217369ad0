import Foundation
import LanpushClient
import LanpushCore
import Testing

/// The jittered backoff and the state store (the close codes are the shared vectors: ClientVectorTests).
@Suite struct ReconnectPolicyTests {
    @Test func backoffDoublesWithJitterAndResets() {
        var b = Backoff(initial: 0.5, maximum: 30)
        #expect(b.next(random: 0) == 0.5)
        #expect(b.next(random: 0) == 1)
        #expect(b.next(random: 0.999_999) > 1)
        #expect(b.next(random: 1) == 2, "at most half of each delay is random")
        for _ in 0..<20 { _ = b.next(random: 0) }
        #expect(b.next(random: 0) == 30)
        b.reset()
        #expect(b.next(random: 0) == 0.5)
    }

    @Test func theFileStoreKeepsAndForgets() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lanpush-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = FileStore(directory: dir)
        let store: any StateStore = file
        let state = DeviceState(
            epoch: "e1", seq: 7,
            activities: ["w": ClientActivity(tag: "w", attributes: .init(tag: "w", title: "W", startedAt: 1), state: ["message": "a"], phase: .ended, dismissalDate: 9)],
            notifications: [HeldNotification(seq: 3, title: "Door", data: ["tag": "door"])])
        #expect(try await store.load(key: "ws://x/v1/stream") == nil)
        try await store.save(key: "ws://x/v1/stream", state: state)
        #expect(try await store.load(key: "ws://x/v1/stream") == state)
        try "{not json".write(to: file.file(for: "broken"), atomically: true, encoding: .utf8)
        #expect(try await store.load(key: "broken") == nil, "unreadable counts as nothing stored")
        try await store.clear(key: "ws://x/v1/stream")
        #expect(try await store.load(key: "ws://x/v1/stream") == nil)
    }
}
