import Testing

@testable import LanpushLWS

/// The adapter's own keepalive (instead of lws's per-connection validity timers): a PING after `interval` without a
/// PONG, a hang-up `timeout` after it, a PONG starting the interval again — each step at most a tick late.
@Suite struct KeepaliveWheelTests {
    @Test func aSilentPeerIsPingedThenHungUp() {
        var wheel = KeepaliveWheel(interval: 10, timeout: 5)
        wheel.confirmed(1, now: 100)
        #expect(wheel.sweep(now: 109.9).isEmpty)
        #expect(wheel.sweep(now: 110.25).map(\.step) == [.ping])
        #expect(wheel.sweep(now: 115).isEmpty)
        #expect(wheel.sweep(now: 115.5).map { $0.id } == [1])
        #expect(wheel.isEmpty)
        #expect(wheel.sweep(now: 200).isEmpty)
    }

    @Test func aPongStartsTheIntervalAgain() {
        var wheel = KeepaliveWheel(interval: 10, timeout: 5)
        wheel.confirmed(1, now: 100)
        #expect(wheel.sweep(now: 110.25).map(\.step) == [.ping])
        wheel.confirmed(1, now: 110.3)
        #expect(wheel.sweep(now: 116).isEmpty, "answered: no hang-up")
        #expect(wheel.sweep(now: 120.6).map(\.step) == [.ping])
        #expect(wheel.count == 1)
    }

    @Test func aRemovedConnectionIsForgotten() {
        var wheel = KeepaliveWheel(interval: 1, timeout: 1)
        wheel.confirmed(1, now: 0)
        wheel.confirmed(2, now: 0)
        wheel.remove(1)
        #expect(wheel.sweep(now: 1.25).map(\.id) == [2])
    }

    /// A sweep that comes late (a busy or suspended loop) still takes every step that fell due, once.
    @Test func aLateSweepTakesEveryDueStepOnce() {
        var wheel = KeepaliveWheel(interval: 2, timeout: 1)
        for id in 1...50 { wheel.confirmed(UInt64(id), now: Double(id) / 100) }
        let late = wheel.sweep(now: 1000)
        #expect(late.count == 50 && late.allSatisfy { $0.step == .ping })
        #expect(wheel.sweep(now: 1001.5).count == 50)
        #expect(wheel.isEmpty)
    }

    /// Memory follows the connections: PONGs leave stale entries behind only until their bucket is swept.
    @Test func manyPongsDoNotPileUp() {
        var wheel = KeepaliveWheel(interval: 1, timeout: 1)
        var now = 0.0
        for _ in 0..<1000 {
            wheel.confirmed(7, now: now)
            now += 0.3
            _ = wheel.sweep(now: now)
        }
        #expect(wheel.count == 1)
        #expect(wheel.entries <= 8)
    }
}
