import LanpushCore
import Testing

@testable import LanpushGateway

@Suite struct NotificationRelayBodiesTests {
    private func body(_ message: String) -> DeferredJSON { DeferredJSON(["message": .string(message)]) }

    /// Bodies are found by seq, replaced by a second keep of the same seq, forgotten from the front once
    /// acknowledged, and removed one by one once relayed; a seq older than the newest still goes in its place.
    @Test func bodiesAreKeptBySeqAndForgottenOnceAcknowledged() {
        var bodies = NotificationRelayBodies()
        for seq in [3, 5, 8] as [UInt64] { bodies.keep(body("n\(seq)"), for: seq) }
        #expect(bodies.count == 3 && bodies[5]?.value == ["message": "n5"] && bodies[4] == nil)
        bodies.keep(body("n5 again"), for: 5)
        bodies.keep(body("n4"), for: 4)
        #expect(bodies.count == 4 && bodies[5]?.value == ["message": "n5 again"] && bodies[4]?.value == ["message": "n4"])
        bodies.forget(before: 5)
        #expect(bodies.count == 2 && bodies[3] == nil && bodies[4] == nil && bodies[5] != nil)
        bodies.remove(8)
        bodies.remove(9)
        #expect(bodies.count == 1 && bodies[8] == nil)
        bodies.forget(before: 100)
        #expect(bodies.count == 0)
    }
}
