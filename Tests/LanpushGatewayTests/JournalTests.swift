import LanpushCore
import LanpushStore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// What a loop turn records for the store, when an answer may go (after the commit), and what survives a restart —
/// clean, or unclean as after kill -9 (then every device starts a new epoch).
@Suite struct JournalTests {
    /// The ops of the last commit, as `kind|device|detail` words (order kept).
    static func words(_ ops: [StoreOp]) -> [String] {
        ops.map { op in
            switch op {
            case .device(let row): return "device|\(row.id)|\(row.seq)"
            case .upsertActivity(let d, let a): return "activity|\(d)|\(a.tag)|\(a.phase.rawValue)"
            case .deleteActivity(let d, let tag): return "delete-activity|\(d)|\(tag)"
            case .insertNotification(let d, let n): return "notification|\(d)|\(n.seq)"
            case .deleteNotifications(let d, let through): return "delete-notifications|\(d)|\(through)"
            case .replaceOutbox(let rows): return "outbox|\(rows.count)"
            default: return "other"
            }
        }
    }

    @Test func aTurnRecordsWhatItChangedAndNothingElse() throws {
        let gw = try TestGateway(store: true)
        let s = gw.connect("phone")
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        // Not the device row, whose seq moved: a clean stop writes it, an unclean one starts a new epoch.
        #expect(Self.words(try #require(gw.commits.last)) == ["activity|phone|washer|active"])
        gw.push(Payload.push(["phone"], message: "Door"))
        #expect(Self.words(try #require(gw.commits.last)) == ["notification|phone|2"])
        // Acknowledged by every session: the notification leaves the store with the next commit, not in one of
        // its own.
        let beforeAck = gw.commits.count
        s.ack()
        #expect(gw.commits.count == beforeAck)
        gw.request(.delete, "/v1/activities/washer", query: [("dismissal", "immediate")])
        #expect(Self.words(try #require(gw.commits.last))
            == ["delete-notifications|phone|2", "activity|phone|washer|dismissed"])
        let commits = gw.commits.count
        gw.advance(by: 0.25)
        #expect(gw.commits.count == commits + 1)
        #expect(Self.words(try #require(gw.commits.last)) == ["delete-activity|phone|washer"])
        // A turn that changes nothing durable commits nothing.
        gw.request(.get, "/v1/activities")
        s.send(["type": "ping"])
        gw.advance(by: 1)
        #expect(gw.commits.count == commits + 1)
    }

    @Test func aPushTokenLetGoAndTakenByAnotherDeviceIsStoredSo() throws {
        let gw = try TestGateway(store: true)
        let phone = gw.connect("phone")
        phone.register("shared-token")
        let tablet = gw.connect("tablet")
        let commits = gw.commits.count
        tablet.register("shared-token")
        #expect(gw.commits.count == commits)  // a refused claim changes nothing durable
        phone.send(["type": "unregister"])
        tablet.register("shared-token")
        let rows = gw.commits.suffix(2).flatMap { $0 }.compactMap { op -> DeviceRow? in
            if case .device(let row) = op { return row } else { return nil }
        }
        #expect(rows.last { $0.id == "phone" }?.pushToken == nil && rows.last { $0.id == "tablet" }?.pushToken == "shared-token")
        try gw.restart()
        #expect(gw.device("phone")?["registration"] == nil)
        #expect(gw.device("tablet")?["registration"]?["push_token"] == "shared-token")
    }

    @Test func whenCommittedRunsOnlyOnceTheCommitCompletes() throws {
        var held: [(Bool) -> Void] = []
        var submitted: [[StoreOp]] = []
        let journal = Journal(persist: { ops, then in
            submitted.append(ops)
            if let then { held.append(then) }
        })
        let device = DeviceRecord(id: "d", name: "D", source: .api, tokenHash: "h", ledger: DeviceLedger(deviceId: "d", epoch: "e"))
        var answers: [Bool] = []
        journal.record(device: device)
        journal.whenCommitted { answers.append($0) }
        journal.whenCommitted { answers.append($0) }
        journal.endTurn()
        #expect(submitted.count == 1 && answers.isEmpty)
        held.removeFirst()(false)
        #expect(answers == [false, false])
        // A turn with nothing recorded answers at its end, without a store round trip.
        journal.whenCommitted { answers.append($0) }
        journal.endTurn()
        #expect(answers == [false, false, true] && submitted.count == 1)
        // Nobody waiting: the ops still go, without a completion.
        journal.record(device: device)
        journal.endTurn()
        #expect(submitted.count == 2 && held.isEmpty)
    }

    /// Acknowledgements cost no transaction of their own: their prunes merge per device and go with the next
    /// commit, or with the housekeeping tick's when nothing else is committed; a clean stop writes them too.
    @Test func prunesOfAcknowledgedNotificationsRideWithTheNextCommit() throws {
        let gw = try TestGateway(store: true)
        let s = gw.connect("phone")
        for i in 0..<3 {
            gw.push(Payload.push(["phone"], message: "n\(i)"))
            s.ack()
        }
        let commits = gw.commits.count
        #expect(Self.words(try #require(gw.commits.last)).filter { $0.hasPrefix("delete-notifications") }
            == ["delete-notifications|phone|2"])  // the second ack's prune rode with the third notification
        gw.advance(by: Housekeeping.interval)
        #expect(gw.commits.count == commits + 1)
        #expect(Self.words(try #require(gw.commits.last)) == ["delete-notifications|phone|3"])
        gw.advance(by: 1)
        #expect(gw.commits.count == commits + 1)
        // Held at a clean stop: written before it.
        gw.push(Payload.push(["phone"], message: "n3"))
        s.ack()
        try gw.restart()
        #expect(try gw.storedState().notifications["phone"]?.isEmpty ?? true)
    }

    /// What the queue's bound dropped leaves the store in the same commit, and only then: the store holds exactly
    /// the queue after a restart.
    @Test func notificationsDroppedForTheQueuesBoundLeaveTheStore() throws {
        var config = TestGateway.defaultConfig()
        config.limits.notificationQueueBytes = 4096
        let gw = try TestGateway(config: config, store: true)
        let text = String(repeating: "x", count: 900)
        var deletes = 0
        for i in 0..<12 {
            gw.push(Payload.push(["phone"], message: "\(i) \(text)"))
            deletes += Self.words(try #require(gw.commits.last)).filter { $0.hasPrefix("delete-notifications") }.count
        }
        let queued = gw.core.directory["phone"]!.ledger.notifications.map(\.seq)
        #expect(queued.count < 12 && deletes == 12 - 4)  // four fit before the first drop
        try gw.restart()
        #expect(try gw.storedState().notifications["phone"]?.map(\.seq) == queued)
    }

    @Test func aRemovedDeviceTakesItsHeldPruneWithIt() {
        var submitted: [[StoreOp]] = []
        let journal = Journal(persist: { ops, _ in submitted.append(ops) })
        let device = DeviceRecord(id: "d", name: "D", source: .api, tokenHash: "h", ledger: DeviceLedger(deviceId: "d", epoch: "e"))
        let other = DeviceRecord(id: "o", name: "O", source: .api, tokenHash: "h", ledger: DeviceLedger(deviceId: "o", epoch: "e"))
        journal.recordPrunedNotifications(of: device, through: 4)
        journal.recordPrunedNotifications(of: other, through: 2)
        journal.recordPrunedNotifications(of: device, through: 6)
        journal.endTurn()
        #expect(submitted.isEmpty)
        journal.recordRemoved(device: "d")
        journal.endTurn()
        #expect(submitted.map(Self.words) == [["delete-notifications|o|2", "other"]])
    }

    @Test func aQuietTurnLetsGoOfTheRoomABurstReserved() {
        let journal = Journal(persist: { _, _ in })
        let devices = (0..<300).map {
            DeviceRecord(id: "d\($0)", name: "D", source: .api, tokenHash: "h", ledger: DeviceLedger(deviceId: "d\($0)", epoch: "e"))
        }
        for d in devices { journal.record(device: d) }
        journal.endTurn()
        // The next turn gets room for a turn like the burst's (no regrowth while the burst lasts)...
        #expect(journal.pendingOps.capacity >= devices.count)
        journal.endTurn()
        // ...and the first that records nothing lets it go.
        #expect(journal.pendingOps.capacity <= Journal.idleCapacity)
        journal.record(device: devices[0])
        journal.endTurn()
        #expect(journal.pendingOps.capacity <= Journal.idleCapacity)
    }

    @Test func anAnswerWaitsForItsCommit() throws {
        let gw = try TestGateway(store: true)
        let r = gw.push(Payload.liveUpdate(["tablet"], tag: "oven", message: "Baking"))
        #expect(r.status == 202 && r.committed)
        #expect(try gw.storedState().activities["tablet"]?.map(\.tag) == ["oven"])
    }

    @Test func withTheStoreOffNothingIsRecorded() throws {
        let gw = try TestGateway()
        let s = gw.connect("phone")
        s.register("tok-phone")
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        gw.push(Payload.push(["phone"], message: "Door"))
        s.ack()
        s.close()
        gw.request(.delete, "/v1/activities")
        gw.advance(by: 5 * 3600, tick: 60)
        #expect(!gw.core.journal.isEnabled && gw.core.journal.pendingOps.isEmpty)
        #expect(gw.commits.isEmpty)
        #expect(gw.push(Payload.push(["tablet"], message: "x")).committed)
    }

    @Test func stateAndQueuedNotificationsSurviveACleanRestartInTheSameEpoch() throws {
        let gw = try TestGateway(store: true)
        let s = gw.connect("phone")
        s.register("tok-phone")
        s.send(["type": "push_to_start_token", "token": "pts"])
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "Charging", ["progress": 40, "progress_max": 100]))
        s.ack()
        // On the LAN although the device has relay credentials (else `auto` sends it to the relay only).
        gw.push(Payload.push(["phone"], title: "Door", message: "Front door opened", data: ["lanpush": ["path": "lan"]]))
        s.read()
        let (epoch, seq) = (try #require(s.epoch), s.seq)
        try gw.restart()
        let phone = try #require(gw.device("phone"))
        #expect(phone["epoch"] == .string(epoch) && phone["seq"] == 2 && phone["queued_notifications"] == 1)
        #expect(phone["registration"]?["push_token"] == "tok-phone" && phone["push_to_start_token"] == true)
        // The client resumes from what it applied: nothing changed since, so a replay of nothing.
        let r = gw.connect("phone", resume: (epoch, seq))
        #expect(r.types == ["auth_required", "auth_ok", "replay", "synced"])
        // A client starting afresh gets the activity and the notification it never acknowledged.
        let fresh = gw.connect("phone")
        fresh.read()
        #expect(fresh.state("ev") == ["message": "Charging", "title": "Washer", "progress": 40, "progress_max": 100])
        #expect(fresh.notifications.map { $0["message"] } == ["Front door opened"])
        // The relay path still knows the device's token.
        #expect(gw.relayBody("tok-phone", message: "Rinse", data: Payload.live("ev")).status == 201)
    }

    /// The device rows are written at a clean stop, with the mark that says it was clean: the next start goes on
    /// from each device's seq in the same epoch, even for a device without a session (whose end would have written
    /// its row) whose last changes left nothing stored that carries the seq.
    @Test func aCleanStopWritesEveryDevicesSeq() throws {
        let gw = try TestGateway(store: true)
        let epoch = try #require(gw.device("tablet")?["epoch"])
        gw.push(Payload.liveUpdate(["tablet"], tag: "oven", message: "Baking"))
        gw.request(.delete, "/v1/activities/oven", query: [("dismissal", "immediate")])
        gw.advance(by: Housekeeping.interval)
        let before = try gw.storedState()
        #expect(before.activities["tablet"]?.isEmpty ?? true)
        #expect(before.devices["tablet"]?.seq == 0, "written at start, not with each change")
        try gw.restart()
        #expect(gw.device("tablet")?["epoch"] == epoch && gw.device("tablet")?["seq"] == 2)
        gw.push(Payload.liveUpdate(["tablet"], tag: "oven", message: "Again"))
        #expect(gw.core.directory["tablet"]?.ledger.activities["oven"]?.lastSeq == 3)
    }

    /// After an unclean stop a device's row may be behind what was committed since it was written: the ledger goes
    /// on from the highest seq anything stored holds, so a new notification never replaces a queued one under the
    /// same seq, and every stored activity's seq stays below the next change's.
    @Test func anUncleanStopGoesOnAboveEverySeqStillStored() throws {
        let gw = try TestGateway(store: true)
        gw.push(Payload.push(["phone"], message: "one"))
        gw.push(Payload.push(["phone"], message: "two"))
        gw.push(Payload.liveUpdate(["tablet"], tag: "oven", message: "Baking"))
        gw.push(Payload.liveUpdate(["tablet"], tag: "oven", message: "Done"))
        #expect(try gw.storedState().devices.mapValues(\.seq) == ["phone": 0, "tablet": 0])
        try gw.restart(clean: false)
        #expect(gw.device("phone")?["seq"] == 2 && gw.device("tablet")?["seq"] == 2)
        gw.push(Payload.push(["phone"], message: "three"))
        gw.push(Payload.liveUpdate(["tablet"], tag: "oven", message: "Cooling"))
        try gw.restart()
        let stored = try gw.storedState()
        #expect(stored.notifications["phone"]?.map(\.seq) == [1, 2, 3])
        #expect(stored.activities["tablet"]?.map(\.lastSeq) == [3])
        let fresh = gw.connect("phone")
        fresh.read()
        #expect(fresh.notifications.map { $0["message"] } == ["one", "two", "three"])
    }

    @Test func anUncleanRestartGivesEveryDeviceANewEpochAndResumesGetASnapshot() throws {
        let gw = try TestGateway(store: true)
        let s = gw.connect("phone")
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "Charging"))
        s.ack()
        let (epoch, seq) = (try #require(s.epoch), s.seq)
        let tabletEpoch = gw.device("tablet")?["epoch"]
        try gw.restart(clean: false)
        let phone = try #require(gw.device("phone"))
        #expect(phone["epoch"] != .string(epoch) && gw.device("tablet")?["epoch"] != tabletEpoch)
        #expect(phone["seq"] == 1, "the sequence goes on in the new epoch")
        #expect(phone["epoch"] == gw.device("tablet")?["epoch"])
        let r = gw.connect("phone", resume: (epoch, seq))
        #expect(r.types == ["auth_required", "auth_ok", "snapshot", "synced"])
        r.read()
        #expect(r.state("ev") == ["message": "Charging", "title": "Washer"])
        // The new epoch is itself durable: a clean restart keeps it.
        let newEpoch = phone["epoch"]
        try gw.restart()
        #expect(gw.device("phone")?["epoch"] == newEpoch)
    }
}
