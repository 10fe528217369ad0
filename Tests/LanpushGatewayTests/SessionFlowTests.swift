import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// Flow control of a lanpush.v1 session: cumulative acks, the ack timeout (4002), the window of unacknowledged
/// frames and the merging beyond it, a socket that chokes, and seqs no JSON integer holds.
@Suite struct SessionFlowTests {
    static func config(window: Int = 32, ackTimeout: Double = 10) -> GatewayConfig {
        var c = TestGateway.defaultConfig()
        c.session.window = window
        c.session.ackTimeout = ackTimeout
        return c
    }

    @Test func anEventLeftUnacknowledgedPastTheAckTimeoutCloses4002() throws {
        let gw = try TestGateway(config: Self.config(ackTimeout: 10))
        let s = gw.connect("phone")
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        #expect(s.frames("start").count == 1)
        gw.advance(by: 10)
        #expect(s.closeCode == nil)
        gw.advance(by: 0.25)
        #expect(s.closeCode == 4002)
    }

    @Test func anAckInTimeKeepsTheSessionOpen() throws {
        let gw = try TestGateway(config: Self.config(ackTimeout: 10))
        let s = gw.connect("phone")
        for i in 0..<5 {
            gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "step \(i)"))
            gw.advance(by: 8)
            s.ack()
        }
        gw.advance(by: 60)
        #expect(s.closeCode == nil)
    }

    /// The tick visits only the sessions a timeout can close: a session whose frames are all acknowledged leaves
    /// them at the next tick (with many idle sessions, walking each one four times a second held the loop), and its
    /// next frame brings it back, so the ack timeout still counts from that frame.
    @Test func aSessionWithEverythingAcknowledgedIsNotTimedUntilItsNextFrame() throws {
        let gw = try TestGateway(config: Self.config(ackTimeout: 10))
        let s = gw.connect("phone")
        let t = gw.connect("tablet")
        #expect(gw.core.sessions.timed == [s.id, t.id])  // pending until the tick: the auth timeout
        gw.advance(by: 0.25)
        #expect(gw.core.sessions.timed.isEmpty)
        gw.push(Payload.liveUpdate(["phone", "tablet"], tag: "washer", message: "Washing"))
        #expect(gw.core.sessions.timed == [s.id, t.id])
        s.ack()
        gw.advance(by: 0.25)
        #expect(gw.core.sessions.timed == [t.id])
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Rinsing"))
        #expect(gw.core.sessions.timed == [s.id, t.id])
        gw.advance(by: 10)
        #expect(s.closeCode == nil && t.closeCode == 4002)
        gw.advance(by: 0.25)
        #expect(s.closeCode == 4002)
    }

    @Test func aQuietDeviceThatNeverAcksTheSnapshotStaysConnected() throws {
        let gw = try TestGateway(config: Self.config(ackTimeout: 1))
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        let s = gw.connect("phone")
        #expect(s.types.suffix(2) == ["snapshot", "synced"])
        gw.advance(by: 60)
        #expect(s.closeCode == nil)
        #expect(gw.device("phone")?["connected"] == true)
    }

    @Test func aClosedAckTimeoutMakesTheDeviceGoneAndItResumesAfterwards() throws {
        let gw = try TestGateway(config: Self.config(ackTimeout: 2))
        let s = gw.connect("phone")
        s.register("tok-phone")
        gw.relayBody("tok-phone", title: "Washer", message: "Washing", data: Payload.live("washer"))
        #expect(gw.relayRequests.isEmpty)
        gw.advance(by: 2.25)
        #expect(s.closeCode == 4002)
        gw.completeCloses()
        s.read()
        // What it never acknowledged drains to the relay, and the client resumes from what it applied.
        #expect(gw.relayed("washer").map(\.kind) == [.start])
        #expect(gw.device("phone")?["path"] == "relay")
        let r = gw.connect("phone", resume: (try #require(s.epoch), 0))
        r.read()
        #expect(r.state("washer") == ["message": "Washing", "title": "Washer"])
    }

    @Test func aReaderThatDoesNotAckHasAtMostTheWindowInFlightAndGetsMergedFrames() throws {
        let gw = try TestGateway(config: Self.config(window: 4, ackTimeout: 1000))
        let s = gw.connect("phone")
        for i in 0..<8 { gw.push(Payload.liveUpdate(["phone"], tag: "t\(i)", message: "v0")) }
        #expect(s.events.map { $0["tag"] } == ["t0", "t1", "t2", "t3"])
        // Ten more changes of a tag that waits, and of one in flight: nothing more goes out.
        for v in 1...10 {
            gw.push(Payload.liveUpdate(["phone"], tag: "t6", message: "v\(v)"))
            gw.push(Payload.liveUpdate(["phone"], tag: "t1", message: "v\(v)"))
        }
        #expect(s.events.count == 4)
        // Acking frees the window: every waiting tag goes as one frame with its newest state.
        while s.events.count < 100 {
            let before = s.events.count
            s.ack()
            if s.events.count == before { break }
            #expect(s.events.count - before <= 4)
        }
        #expect(s.events.count == 4 + 5)  // t4, t5, t6 (one start with v10), t7, t1 (one update with v10)
        #expect(s.events.filter { $0["tag"] == "t6" }.map { $0["state"]?["message"] } == ["v10"])
        #expect(s.events.filter { $0["tag"] == "t1" }.last?["patch"] == ["message": "v10"])
        #expect(s.state("t6") == ["message": "v10", "title": "Washer"] && s.state("t1") == ["message": "v10", "title": "Washer"])
        #expect(s.closeCode == nil)
    }

    /// Acks as clients write them — compact, with Python's spaces, members in either order, or with a seq the plain
    /// form does not take (`2.0`) — all free the window the same way; a negative seq is refused as before.
    @Test func everyFormOfAnAckFreesTheWindow() throws {
        let gw = try TestGateway(config: Self.config(window: 1, ackTimeout: 1000))
        let s = gw.connect("phone")
        for i in 1...5 { gw.push(Payload.liveUpdate(["phone"], tag: "t\(i)", message: "v")) }
        let forms: [(UInt64) -> String] = [
            { #"{"type":"ack","seq":\#($0)}"# }, { #"{"type": "ack", "seq": \#($0)}"# },
            { #"{"seq":\#($0),"type":"ack"}"# }, { #"{"type":"ack","seq":\#($0).0}"# },
        ]
        for (i, form) in forms.enumerated() {
            #expect(s.events.count == i + 1)
            s.read()
            s.send(text: form(s.seq))
        }
        #expect(s.events.count == 5 && s.errors.isEmpty)
        s.send(text: #"{"type":"ack","seq":-1}"#)
        #expect(s.errors == ["ack: 'seq' must be an integer from 0 to 2^53"])
        #expect(s.closeCode == nil)
    }

    /// An ack asks for a write only when it gives credit to a session that had none: one with credit had written all
    /// it had (or has a write coming), so a second writable callback per frame would find nothing to send.
    @Test func anAckAsksForAWriteOnlyWhenItFreesCredit() throws {
        let gw = try TestGateway(config: Self.config(window: 2, ackTimeout: 1000))
        let s = gw.connect("phone")
        gw.push(Payload.liveUpdate(["phone"], tag: "a", message: "v1"))
        var asked = s.transport.writeRequests
        s.ack()
        #expect(s.transport.writeRequests == asked)
        for tag in ["a", "b", "c"] { gw.push(Payload.liveUpdate(["phone"], tag: tag, message: "v2")) }
        #expect(s.events.count == 3)  // two in flight, c waits for credit
        asked = s.transport.writeRequests
        s.ack()
        #expect(s.transport.writeRequests == asked + 1)
        #expect(s.events.count == 4 && s.events.last?["tag"] == "c")
    }

    /// One update to many devices: every session is sent its patch, computed once for all of them.
    @Test func aFanOutComputesOnePatchForEverySession() throws {
        let devices = (0..<20).map { "d\($0)" }
        let gw = try TestGateway(config: TestGateway.defaultConfig(devices: devices))
        let sessions = devices.map { gw.connect($0) }
        gw.push(Payload.liveUpdate(devices, tag: "washer", message: "Washing"))
        let reused = gw.core.patches.reused
        gw.push(Payload.liveUpdate(devices, tag: "washer", message: "Rinsing"))
        for s in sessions {
            s.read()
            #expect(s.events.last?["patch"] == ["message": "Rinsing"])
            #expect(s.state("washer") == ["message": "Rinsing", "title": "Washer"])
        }
        #expect(gw.core.patches.reused - reused == devices.count - 1)
    }

    /// Several tags changed in one turn: each session is written all of them, one after the other, and the next
    /// session the same tags again — every patch and frame is still made once for all sessions, not once per session
    /// (remembering only the last pair and frame missed at every frame here).
    @Test func aTurnOfManyTagsComputesEachPatchAndFrameOnce() throws {
        let devices = (0..<20).map { "d\($0)" }
        let tags = (0..<5).map { "t\($0)" }
        let gw = try TestGateway(config: TestGateway.defaultConfig(devices: devices))
        let sessions = devices.map { gw.connect($0) }
        for tag in tags { gw.push(Payload.liveUpdate(devices, tag: tag, message: "Washing")) }
        for s in sessions { s.ack() }
        let reused = gw.core.patches.reused, spliced = gw.core.frames.spliced
        gw.holdWrites = true
        for tag in tags { gw.push(Payload.liveUpdate(devices, tag: tag, message: "Rinsing")) }
        gw.holdWrites = false
        gw.turn()
        for s in sessions {
            s.read()
            #expect(s.events.suffix(5).map { $0["tag"] } == tags.map { .string($0) })
            #expect(s.events.suffix(5).allSatisfy { $0["patch"] == ["message": "Rinsing"] })
        }
        #expect(gw.core.patches.reused - reused == tags.count * (devices.count - 1))
        #expect(gw.core.frames.spliced - spliced == tags.count * (devices.count - 1))
    }

    @Test func aChokedSocketHoldsFramesAndTakesThemOnceItDrains() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.transport.choked = true
        for i in 0..<3 { gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "step \(i)")) }
        #expect(s.events.isEmpty)
        s.drain()
        // The three changes of one tag waited as one slot: a single start with the newest state.
        #expect(s.events.map { $0["type"] } == ["start"])
        #expect(s.events.first?["state"] == ["message": "step 2", "title": "Washer"])
    }

    /// The socket fills in the middle of a flush: the session must ask to write again, or what is left waits for
    /// the next change or ack (and a client waiting for `synced` would wait forever).
    @Test func aSocketThatFillsMidFlushGetsTheRestOnceItDrains() throws {
        let gw = try TestGateway()
        for i in 0..<6 { gw.push(Payload.liveUpdate(["phone"], tag: "t\(i)", message: "m")) }
        gw.push(Payload.push(["phone"], message: "Door"))
        let s = gw.open()
        s.transport.chokeAfter = 2  // auth_ok and one more frame
        s.send(["type": "auth", "token": .string(TestGateway.token(for: "phone"))])
        s.send(["type": "subscribe"])
        #expect(s.types == ["auth_required", "auth_ok", "notification"])
        s.drain()
        #expect(s.types == ["auth_required", "auth_ok", "notification", "snapshot", "synced"])
        s.read()
        #expect(s.activities.count == 6)
    }

    /// The notification queue is bounded in bytes: past it the oldest undelivered one is dropped and the session is
    /// told in-band, never closed; the sender still gets its 2xx.
    @Test func anOverflowIsReportedInBandAndNeverClosesTheSession() throws {
        var config = Self.config(window: 2, ackTimeout: 1000)
        config.limits.notificationQueueBytes = 4096
        let gw = try TestGateway(config: config)
        let slow = gw.connect("tablet")
        for i in 0..<40 {
            #expect(gw.push(Payload.push(["tablet"], message: "n\(i) " + String(repeating: "x", count: 300))).status == 202)
        }
        let dropped = try #require(slow.frames("notifications_dropped").first)
        let count = try #require(dropped["count"]?.numberValue)
        #expect(count > 0 && dropped["through"]?.numberValue ?? 0 > 2)
        #expect(slow.closeCode == nil && slow.events.count == 2)
        // Acking on, it gets what the queue still holds: the newest notifications, never more than the bound.
        while true {
            let before = slow.events.count
            slow.ack()
            if slow.events.count == before { break }
        }
        // Every notification either arrived or was counted in a report, each once.
        let got = slow.frames("notification").compactMap { $0["message"]?.stringValue?.split(separator: " ").first }
        let reported = slow.frames("notifications_dropped").compactMap { $0["count"]?.numberValue }.reduce(0, +)
        #expect(got.first == "n0" && got.last == "n39" && got.count + Int(reported) == 40 && Set(got).count == got.count)
        #expect(slow.closeCode == nil)
        // A session starting afresh is not told about what was dropped before it came.
        slow.close()
        let fresh = gw.connect("tablet")
        gw.push(Payload.push(["tablet"], message: "after"))
        #expect(fresh.frames("notifications_dropped").isEmpty && fresh.frames("notification").last?["message"] == "after")
    }

    @Test(arguments: ["1e20", "18446744073709551616", "1e300", "-1", "1.5", "\"7\"", "null"])
    func aHostileSeqIsAnErrorAndEverySessionSurvives(seq: String) throws {
        let gw = try TestGateway()
        let bystander = gw.connect("tablet")
        let s = gw.open()
        s.send(["type": "auth", "token": .string(TestGateway.token(for: "phone"))])
        let epoch = try #require(s.frames.last?["epoch"]?.stringValue)
        s.send(text: #"{"type":"ack","seq":\#(seq)}"#)
        #expect(s.errors.count == 1 && s.errors.allSatisfy { $0.contains("seq") })
        if seq != "null" {  // a null seq in subscribe means "no resume point"
            s.send(text: #"{"type":"subscribe","epoch":"\#(epoch)","seq":\#(seq)}"#)
            #expect(s.errors.count == 2 && s.errors.allSatisfy { $0.contains("seq") })
        }
        // The session still works, and so does everything else.
        s.send(["type": "subscribe"])
        gw.push(Payload.liveUpdate(["phone", "tablet"], tag: "oven", message: "Baking"))
        #expect(s.frames("start").count == 1 && bystander.frames("start").count == 1)
        #expect(s.closeCode == nil && bystander.closeCode == nil)
        #expect(gw.request(.get, "/healthz").status == 200)
    }

    @Test func theLargestExactSeqIsTaken() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.send(text: #"{"type":"ack","seq":9007199254740992}"#)
        #expect(s.errors.isEmpty)
        s.send(text: #"{"type":"ack","seq":9007199254740994}"#)
        #expect(s.errors.count == 1)
    }
}
