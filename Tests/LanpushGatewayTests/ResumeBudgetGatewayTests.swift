import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// `limits.resume_history_bytes` bounds every device's resume history together: past it the busiest device's
/// oldest changes go, so a client resuming from before them gets a snapshot, while recent resume points and a
/// quiet device's history still replay.
@Suite struct ResumeBudgetGatewayTests {
    @Test func aTinyBudgetSnapshotsOldResumePointsAndReplaysRecentOnes() throws {
        var config = TestGateway.defaultConfig()
        config.limits.resumeHistoryBytes = 8192
        let gw = try TestGateway(config: config)
        let first = gw.connect("phone")
        first.read()
        let epoch = try #require(first.epoch)
        first.close()
        gw.completeCloses()

        for i in 1...3 { gw.push(Payload.liveUpdate(["tablet"], tag: "dryer", message: "d\(i)")) }
        for i in 1...200 { gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "w\(i)")) }
        let directory = gw.core.directory
        let phone = try #require(directory["phone"]), tablet = try #require(directory["tablet"])
        #expect(directory.historyBytes <= 8192)
        #expect(directory.historyBytes == phone.ledger.history.bytes + tablet.ledger.history.bytes)
        let oldest = try #require(phone.ledger.history.oldestSeq)
        #expect(oldest > 150 && phone.ledger.history.count < 40)

        let stale = gw.connect("phone", resume: (epoch, 5))
        stale.read()
        #expect(stale.types.contains("snapshot"))
        #expect(stale.state("washer") == ["message": "w200", "title": "Washer"])

        let recent = gw.connect("phone", resume: (epoch, 198))
        recent.read()
        #expect(!recent.types.contains("snapshot"))
        #expect(recent.frames("update").compactMap { $0["seq"]?.numberValue } == [200])
        #expect(!recent.types.contains("start"))  // only the difference: this client had the washer

        // The quiet device kept its whole short history while the busy one was trimmed.
        #expect(tablet.ledger.history.count == 3)
        let quiet = gw.connect("tablet", resume: (epoch, 1))
        quiet.read()
        #expect(!quiet.types.contains("snapshot"))
        #expect(quiet.frames("update").compactMap { $0["seq"]?.numberValue } == [3])
    }

    /// The loop's tick gives back the room a history kept while busy once it has gone quiet; a busy one keeps it.
    @Test func theTickGivesAQuietHistorysRoomBack() throws {
        let gw = try TestGateway()
        let phone = gw.connect("phone"), tablet = gw.connect("tablet")
        phone.read()
        tablet.read()
        for i in 1...40 { gw.push(Payload.liveUpdate(["phone", "tablet"], tag: "washer", message: "w\(i)")) }
        for _ in 1...2 {  // the window holds 32 frames: the rest go once those are acknowledged
            for session in [phone, tablet] {
                session.read()
                session.ack()
            }
        }
        let quiet = try #require(gw.core.directory["phone"]), busy = try #require(gw.core.directory["tablet"])
        for device in [quiet, busy] {
            #expect(device.ledger.history.count == 1 && device.ledger.history.storageCapacity >= 40)
        }
        gw.advance(by: 0.25)
        gw.push(Payload.liveUpdate(["tablet"], tag: "washer", message: "w41"))
        gw.advance(by: 0.25)
        #expect(quiet.ledger.history.storageCapacity <= quiet.ledger.history.count + 4)
        #expect(busy.ledger.history.count == 2 && busy.ledger.history.storageCapacity >= 40)
        #expect(quiet.ledger.history.oldestSeq == 40)
    }

    /// What every session of a device has acknowledged is never replayed: the history lets it go at the ack (and the
    /// budget gets its bytes back), so a device whose client keeps up holds next to nothing. With two sessions the
    /// slower one's ack is the bound; a resume from what was acknowledged still replays.
    @Test func acknowledgedChangesLeaveTheHistory() throws {
        let gw = try TestGateway()
        let phone = gw.connect("phone"), watch = gw.connect("phone")
        phone.read()
        watch.read()
        let epoch = try #require(phone.epoch)
        for i in 1...20 { gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "w\(i)")) }
        let device = try #require(gw.core.directory["phone"])
        #expect(device.ledger.history.count == 20)

        phone.ack()  // through 20
        #expect(device.ledger.history.count == 20)  // the watch has acknowledged nothing yet
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "w21"))
        watch.read()
        watch.send(["type": "ack", "seq": 12])
        #expect(device.ledger.history.oldestSeq == 12 && device.ledger.history.count == 10)
        watch.ack()  // through 21; the phone's 20 is the floor now
        #expect(device.ledger.history.oldestSeq == 20 && device.ledger.history.count == 2)
        #expect(gw.core.directory.historyBytes == device.ledger.history.bytes)

        phone.close()
        gw.completeCloses()
        let back = gw.connect("phone", resume: (epoch, 20))
        back.read()
        #expect(!back.types.contains("snapshot"))
        #expect(back.frames("update").compactMap { $0["seq"]?.numberValue } == [21])
        #expect(back.frames("update").first?["patch"] == ["message": "w21"])  // the difference only

        // From before what was acknowledged (a client that lost what it applied): a snapshot, the newest state.
        let lost = gw.connect("phone", resume: (epoch, 15))
        lost.read()
        #expect(lost.types.contains("snapshot"))
        #expect(lost.state("washer") == ["message": "w21", "title": "Washer"])
    }

    @Test func removingADeviceGivesBackItsHistoryBytes() throws {
        var config = TestGateway.defaultConfig()
        config.limits.resumeHistoryBytes = 1 << 20
        let gw = try TestGateway(config: config)
        for i in 1...10 { gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "w\(i)")) }
        let directory = gw.core.directory
        let bytes = try #require(directory["phone"]).ledger.history.bytes
        #expect(bytes > 0 && directory.historyBytes == bytes)
        directory.remove("phone")
        #expect(directory.historyBytes == 0)
    }
}
