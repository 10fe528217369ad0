import Foundation
import GRDB
import LanpushCore
import Testing

@testable import LanpushStore

/// The SQLite store on a temporary folder: migrations from the committed v1 database, the group-commit rules
/// (ops on one row collapse to the last), round trips of every row kind, the unclean-stop flag, damage handling.
@Suite struct StateStoreTests {
    let dir: String

    init() throws {
        dir = try StoreTestSupport.directory("store")
    }

    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/state-v1/lanpush.sqlite").path

    func activity(_ tag: String, seq: UInt64, message: String = "m", phase: ActivityPhase = .active) -> Activity {
        Activity(
            generation: 1, attributes: ActivityAttributes(tag: tag, title: "T", startedAt: 100, webhookId: "w"),
            state: ["message": .string(message)], phase: phase, staleDate: 500, relevanceScore: 7.5, endedAt: nil,
            dismissalDate: nil, updatedAt: 200, lastSeq: seq)
    }

    @Test func theCommittedV1DatabaseMigratesAndKeepsItsState() throws {
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: dir + "/" + StateStore.fileName)
        let store = try StateStore(directory: dir)
        let state = try store.load()
        #expect(Set(state.devices.keys) == ["phone", "tablet"])
        let phone = try #require(state.activities["phone"])
        #expect(phone.map(\.tag).sorted() == ["ev-charging", "washer_cycle"])
        let washer = try #require(phone.first { $0.tag == "washer_cycle" })
        #expect(washer.attributes.title == "Washing Machine" && washer.state["progress"] == 900)
        #expect(state.activities["tablet"]?.map(\.tag) == ["ev-charging"])
        guard case .notification(let door)? = state.notifications["phone"]?.first?.body else {
            Issue.record("the queued notification did not survive")
            return
        }
        #expect(door.message == "Front door opened")
        // v5: the queue was copied into a table without rowids (one b-tree page per queued row, not two).
        let schema = try store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'notification'")
        }
        #expect(schema?.contains("WITHOUT ROWID") == true)
        // v2's table exists and starts empty: a registration can be written and read back.
        #expect(state.haRegistrations.isEmpty)
        let row = HARegistrationRow(
            deviceId: "phone", haDeviceId: "lanpush-phone", webhookId: "hook", deviceName: "Phone", pushToken: "t",
            pushURL: "http://x", haURL: "http://ha", registeredAt: 1, updatedAt: 2)
        try store.write([.haRegistration(row)])
        #expect(try store.load().haRegistrations["phone"] == row)
        // v3: v1's devices never said whether they show Live Activities; a registration written without app_data
        // reads back without it (v2's fields only).
        #expect(state.devices["phone"]?.supportsLiveActivities == nil)
        #expect(try store.load().haRegistrations["phone"]?.appData == nil)
    }

    /// SQLite would give each connection 2 MiB of page cache; the store gives each what it was told, readers too.
    @Test func everyConnectionHoldsTheCacheItWasGiven() throws {
        let cacheSize = "PRAGMA cache_size"
        let store = try StateStore(directory: dir, cacheBytes: 128 << 10)
        #expect(try store.pool.write { try Int.fetchOne($0, sql: cacheSize) } == -128)
        #expect(try store.pool.read { try Int.fetchOne($0, sql: cacheSize) } == -128)
        let other = try StoreTestSupport.directory("store-cache")
        let byDefault = try StateStore(directory: other)
        #expect(try byDefault.pool.read { try Int.fetchOne($0, sql: cacheSize) } == -(StateStore.defaultCacheBytes >> 10))
    }

    @Test func v3FieldsRoundTrip() throws {
        let store = try StateStore(directory: dir)
        let device = DeviceRow(id: "phone", epoch: "e", seq: 1, supportsLiveActivities: false)
        var row = HARegistrationRow(
            deviceId: "phone", haDeviceId: "lanpush-phone", webhookId: "hook", deviceName: "Phone", pushToken: "t",
            pushURL: "", haURL: "http://ha", registeredAt: 1, updatedAt: 2,
            appData: ["push_websocket_channel": true, "supports_live_activities": false, "start_live_activity_token": "pts"])
        try store.write([.device(device), .haRegistration(row)])
        var state = try store.load()
        #expect(state.devices["phone"] == device && state.devices["phone"]?.supportsLiveActivities == false)
        #expect(state.haRegistrations["phone"] == row)
        row.appData = [:]
        try store.write([.haRegistration(row), .device(DeviceRow(id: "phone", epoch: "e", seq: 2, supportsLiveActivities: true))])
        state = try store.load()
        #expect(state.haRegistrations["phone"]?.appData == [:] && state.devices["phone"]?.supportsLiveActivities == true)
    }

    /// A device removed while HA is away is removed from HA at a later start only if its registration is still
    /// stored then: the removal takes everything else, the registration goes when HA let the device go.
    @Test func aRemovedDeviceKeepsItsHARegistrationUntilThatIsDeletedToo() throws {
        let store = try StateStore(directory: dir)
        let registration = HARegistrationRow(
            deviceId: "shed", haDeviceId: "lanpush-shed", webhookId: "hook", deviceName: "Shed", pushToken: "t",
            pushURL: "http://x", haURL: "http://ha", registeredAt: 1, updatedAt: 2)
        try store.write([
            .device(DeviceRow(id: "shed", epoch: "e", seq: 1)), .upsertActivity(deviceId: "shed", activity("a", seq: 1)),
            .managedDevice(ManagedDeviceRow(id: "shed", name: "Shed", tokenHash: "h", notifications: "lan", createdAt: 1)),
            .haRegistration(registration),
        ])
        try store.write([.removeDevice(id: "shed")])
        var state = try store.load()
        #expect(state.devices["shed"] == nil && state.activities["shed"] == nil && state.managedDevices.isEmpty)
        #expect(state.haRegistrations["shed"] == registration)
        try store.write([.deleteHARegistration(deviceId: "shed")])
        state = try store.load()
        #expect(state.haRegistrations.isEmpty)
    }

    @Test func opsOnOneRowCollapseToTheLast() throws {
        let store = try StateStore(directory: dir)
        try store.write([
            .upsertActivity(deviceId: "d", activity("a", seq: 1, message: "first")),
            .upsertActivity(deviceId: "d", activity("a", seq: 2, message: "second")),
            .upsertActivity(deviceId: "d", activity("b", seq: 3)),
            .deleteActivity(deviceId: "d", tag: "b"),
        ])
        let a = try store.load().activities["d"]
        #expect(a?.map(\.tag) == ["a"] && a?.first?.state["message"] == "second")
        // A delete then an upsert of the same row: the upsert wins.
        try store.write([.deleteActivity(deviceId: "d", tag: "a"), .upsertActivity(deviceId: "d", activity("a", seq: 4, message: "back"))])
        #expect(try store.load().activities["d"]?.first?.state["message"] == "back")
    }

    @Test func anActivityRoundTripsEveryField() throws {
        let store = try StateStore(directory: dir)
        var a = activity("w", seq: 9, phase: .ended)
        a.endedAt = 300
        a.dismissalDate = 400
        try store.write([.upsertActivity(deviceId: "d", a)])
        #expect(try store.load().activities["d"] == [a])
    }

    @Test func aDeviceRowRoundTrips() throws {
        let store = try StateStore(directory: dir)
        let row = DeviceRow(
            id: "phone", epoch: "e1", seq: 42, pushToken: "tok", pushURL: "https://relay/x",
            registrationInfo: ["app_id": "io.robbie.HomeAssistant"], liveActivityTokens: ["w": ["token": "la"]],
            pushToStartToken: "pts", lastSeen: 123.5)
        try store.write([.device(row)])
        #expect(try store.load().devices["phone"] == row)
    }

    /// Rows rewritten at every update are updated in place (an upsert, not a delete and insert): every column
    /// must follow, an optional one back to nothing included.
    @Test func aRewrittenRowTakesEveryColumnOfTheNewOne() throws {
        let store = try StateStore(directory: dir)
        let full = DeviceRow(
            id: "phone", epoch: "e1", seq: 42, pushToken: "tok", pushURL: "https://relay/x",
            registrationInfo: ["app_id": "io.robbie.HomeAssistant"], liveActivityTokens: ["w": ["token": "la"]],
            pushToStartToken: "pts", lastSeen: 123.5, supportsLiveActivities: true)
        var ended = activity("w", seq: 9, phase: .ended)
        ended.endedAt = 300
        ended.dismissalDate = 400
        try store.write([.device(full), .upsertActivity(deviceId: "phone", ended)])
        let bare = DeviceRow(id: "phone", epoch: "e2", seq: 43)
        let again = Activity(
            generation: 2, attributes: ActivityAttributes(tag: "w", title: "U", startedAt: 150, webhookId: nil),
            state: ["progress": 5], phase: .active, staleDate: nil, relevanceScore: nil, endedAt: nil,
            dismissalDate: nil, updatedAt: 250, lastSeq: 10)
        try store.write([.device(bare), .upsertActivity(deviceId: "phone", again)])
        let state = try store.load()
        #expect(state.devices["phone"] == bare)
        #expect(state.activities["phone"] == [again])
    }

    @Test func notificationsQueueAndArePrunedThroughASeq() throws {
        let store = try StateStore(directory: dir)
        let ops: [StoreOp] = (1...5).map { .insertNotification(deviceId: "d", QueuedNotification(seq: UInt64($0), body: .notification(NotifyMessage(message: "n\($0)", data: ["tag": "camera.front_door"])), acceptedAt: 1)) }
        try store.write(ops + [.insertNotification(deviceId: "d", QueuedNotification(seq: 6, body: .clear(tag: "x"), acceptedAt: 1))])
        try store.write([.deleteNotifications(deviceId: "d", through: 3), .deleteNotification(deviceId: "d", seq: 5)])
        let left = try #require(try store.load().notifications["d"])
        #expect(left.map(\.seq) == [4, 6])
        #expect(left[1].body == .clear(tag: "x"))
        guard case .notification(let n) = left[0].body else {
            Issue.record("expected a notification")
            return
        }
        // The queue's byte bound is recomputed from what was stored: a reloaded queue weighs what it weighed.
        #expect(n.tag == "camera.front_door" && left[0].bytes == OutboundEvent.notification(seq: 4, n).json.serializedBytes().count)
    }

    @Test func theOutboxIsReplacedAsAWhole() throws {
        let store = try StateStore(directory: dir)
        let a = OutboxRow(deviceId: "d", slot: "0|w", kind: "start", url: "http://r", body: ["x": 1], seq: 1)
        let b = OutboxRow(deviceId: "d", slot: "1|", kind: "notification", url: "http://r", body: ["y": 2], seq: 2)
        try store.write([.replaceOutbox([a, b])])
        #expect(try store.load().outbox == [a, b])
        try store.write([.replaceOutbox([b])])
        #expect(try store.load().outbox == [b])
        try store.write([.replaceOutbox([])])
        #expect(try store.load().outbox.isEmpty)
    }

    @Test func theRunningFlagTellsAnUncleanStop() throws {
        let store = try StateStore(directory: dir)
        #expect(try !store.load().wasUnclean)
        try store.write([.meta(key: "running", value: "1")])
        #expect(try StateStore(directory: dir).load().wasUnclean)
        try store.write([.meta(key: "running", value: "0")])
        #expect(try !StateStore(directory: dir).load().wasUnclean)
    }

    /// A device's row is not rewritten with each change: the seq it goes on from is the highest anything stored of
    /// it holds — its row, a queued notification, an activity, a relay send in the outbox.
    @Test func aDeviceGoesOnFromTheHighestSeqStoredOfIt() throws {
        let store = try StateStore(directory: dir)
        try store.write([
            .device(DeviceRow(id: "d", epoch: "e", seq: 2)), .device(DeviceRow(id: "idle", epoch: "e", seq: 7)),
            .insertNotification(deviceId: "d", QueuedNotification(seq: 5, body: .clear(tag: "x"), acceptedAt: 1)),
            .upsertActivity(deviceId: "d", activity("a", seq: 9)),
        ])
        #expect(try store.load().resumeSeqs() == ["d": 9, "idle": 7])
        try store.write([.replaceOutbox([OutboxRow(deviceId: "d", slot: "a", kind: "update", url: "http://r", body: [:], seq: 11)])])
        #expect(try store.load().resumeSeqs() == ["d": 11, "idle": 7])
    }

    /// The process holds the file; its connections (the writer, the readers, the checkpoint thread's) lock each
    /// other in memory, so no `-shm` file is made and a commit takes no `fcntl` lock.
    @Test func theStoresLocksStayInTheProcess() throws {
        let store = try StateStore(directory: dir, checkpointsInCommits: false)
        try store.write([.device(DeviceRow(id: "d", epoch: "e", seq: 1))])
        let checkpointer = try store.checkpointConnection()
        try checkpointer.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
        #expect(try store.load().devices["d"]?.seq == 1)
        #expect(!FileManager.default.fileExists(atPath: store.path + "-shm"))
        #expect(FileManager.default.fileExists(atPath: store.path + "-wal"))
        // Busy is not damage: the message says so, and does not offer to move the file aside.
        let busy = StoreError(path: store.path, reason: "held", inUse: true).description
        #expect(busy.contains("--state-dir") && !busy.contains("--reset-state"))
    }

    @Test func aDamagedDatabaseIsRefusedWithTheWayOut() throws {
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: dir + "/" + StateStore.fileName))
        do {
            _ = try StateStore(directory: dir)
            Issue.record("a damaged database must not open")
        } catch let error as StoreError {
            #expect(error.description.contains("--reset-state"))
        }
        let moved = try #require(try StateStore.moveAside(directory: dir, now: Date(timeIntervalSince1970: 1000)))
        #expect(moved.hasSuffix(".corrupt-1000") && FileManager.default.fileExists(atPath: moved))
        #expect(try StateStore(directory: dir).load().devices.isEmpty)
    }

    @Test func aCheckpointFoldsTheLogIntoTheFile() throws {
        let store = try StateStore(directory: dir)
        try store.write((1...50).map { .upsertActivity(deviceId: "d", activity("t\($0)", seq: UInt64($0))) })
        store.checkpoint()
        let wal = (try? FileManager.default.attributesOfItem(atPath: dir + "/" + StateStore.fileName + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)
        #expect(try store.load().activities["d"]?.count == 50)
    }
}
