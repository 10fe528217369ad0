import Foundation
import GRDB
import GRDBSQLite
import LanpushCore
import Synchronization

/// Why the state could not be opened: the daemon stops with this message rather than start empty.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let reason: String
    /// Another process holds the database: nothing is wrong with it, and moving it aside would be.
    public let inUse: Bool

    public init(path: String, reason: String, inUse: Bool = false) {
        self.path = path
        self.reason = reason
        self.inUse = inUse
    }

    public var description: String {
        if inUse {
            return "cannot use the state database \(path): \(reason). Stop the other lanpushd, or give this one its own --state-dir."
        }
        return "cannot use the state database \(path): \(reason). Run `lanpushd --reset-state` (same --state-dir) to move it aside and start fresh."
    }
}

/// lanpush's SQLite state (WAL mode, through GRDB).
///
/// Durability: a transaction is committed before the HTTP answer that depends on it is sent. With
/// `synchronous = normal` (default) a committed update survives a crash of the process (kill -9): the WAL
/// is in the OS's page cache. It survives power loss only with `synchronous = full` (an fsync per commit
/// group). `off` leaves even that to the OS.
public final class StateStore: @unchecked Sendable {
    public static let fileName = "lanpush.sqlite"
    public let path: String
    let pool: DatabasePool
    /// SQLite folds the WAL into the main file itself, inside a commit, every 1,000 pages (its default). Off when
    /// commits run on the event loop (`DirectCommitter`): a checkpoint fsyncs, so it runs on a thread of its own.
    public let checkpointsInCommits: Bool
    /// The commit's statements on the writer connection (`write`); touched only inside the pool's writer accesses.
    private var writes: WriteStatements?
    /// Transactions committed so far, on any thread: how the writer's thread tells a quiet store from a busy one.
    private let committed = Atomic<UInt64>(0)

    /// The page cache each connection may hold (`store.cache_bytes`). SQLite's own default is 2 MiB a connection;
    /// the pages it would keep are in the OS's page cache anyway, a `pread` away, and a home's store is small. With
    /// SQLite's default a burst of updates to 10,000 activities left 2.4 MB of cache behind, memory glibc then kept in
    /// the writer thread's arena for good.
    public static let defaultCacheBytes = 256 << 10

    public init(directory: String, synchronous: String = "normal", checkpointsInCommits: Bool = true,
                cacheBytes: Int = StateStore.defaultCacheBytes) throws {
        _ = Self.processLocking
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        self.checkpointsInCommits = checkpointsInCommits
        var config = Configuration()
        let level = ["off": "OFF", "normal": "NORMAL", "full": "FULL"][synchronous] ?? "NORMAL"
        // Negative: a size in KiB rather than a count of pages.
        let cacheKiB = max(1, cacheBytes >> 10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(level)")
            try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            if !checkpointsInCommits { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        }
        if !checkpointsInCommits {
            // The checkpoint thread holds the writer's lock only for a RESTART checkpoint (when commits arrive so
            // steadily that PASSIVE ones never catch up): a commit waits for it in short steps, not SQLite's
            // default back-off of 1, 2, 5, 10... ms, and gives up after 10 s.
            config.busyMode = Self.waitInShortSteps(upTo: 10)
        }
        do {
            try Self.refuseIfInUse(path: path)
            pool = try DatabasePool(path: path, configuration: config)
            try pool.write { db in
                let check = try String.fetchOne(db, sql: "PRAGMA quick_check") ?? "no answer"
                guard check == "ok" else { throw StoreError(path: path, reason: "integrity check failed: \(check)") }
            }
            try Self.migrator.migrate(pool)
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw StoreError(path: path, reason: Self.inUseReason, inUse: true)
        } catch {
            throw StoreError(path: path, reason: "\(error)")
        }
    }

    static let inUseReason = "another process has it open (another lanpushd with this state directory?)"

    /// Fails at once when another process holds the file: the pool's own first access would wait out its busy
    /// timeout first. (A process that takes the file between this look and the pool's first access is caught there,
    /// later.) The look's connection closes before the pool opens, and with it this process's lock.
    private static func refuseIfInUse(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        do {
            try DatabaseQueue(path: path).read { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw StoreError(path: path, reason: inUseReason, inUse: true)
        }
    }

    /// SQLite's `unix-excl` VFS as the process's default, once: the store's file is locked against other processes
    /// at its first use, and from then on its connections — the writer, the readers, the checkpoint thread's — take
    /// their locks on each other inside the process, with the WAL index in memory. The default `unix` VFS takes
    /// every one of those locks with `fcntl`: six system calls per commit, for processes that never come (lanpushd
    /// is the store's only user, and a second lanpushd on the same state directory is refused at start).
    private static let processLocking: Void = {
        if let excl = sqlite3_vfs_find("unix-excl") { sqlite3_vfs_register(excl, 1) }
    }()

    deinit {
        // GRDB closes the writer connection with `sqlite3_close`, which fails while statements are still open on it.
        guard writes != nil else { return }
        pool.writeWithoutTransaction { _ in writes?.finalize() }
    }

    /// Moves the database (and its WAL files) aside as `<name>.corrupt-<time>`; returns the new path.
    public static func moveAside(directory: String, now: Date = Date()) throws -> String? {
        let fm = FileManager.default
        let base = (directory as NSString).appendingPathComponent(fileName)
        guard fm.fileExists(atPath: base) else { return nil }
        let stamp = Int(now.timeIntervalSince1970)
        let target = "\(base).corrupt-\(stamp)"
        for suffix in ["", "-wal", "-shm"] where fm.fileExists(atPath: base + suffix) {
            try fm.moveItem(atPath: base + suffix, toPath: target + suffix)
        }
        return target
    }

    // MARK: Reading

    /// Its statements are cached on the reading connection: the daemon loads once, but a caller that loads again
    /// and again (the store's fuzz target reads every row back after each write) would otherwise pay GRDB's
    /// compile-time authorizer for every column of every statement each time.
    public func load() throws -> StoredState {
        try pool.read { db in
            var state = StoredState()
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT key, value FROM meta")) {
                state.meta[row["key"]] = row["value"]
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM device")) {
                let id: String = row["id"]
                let seq: Int64 = row["seq"]
                state.devices[id] = DeviceRow(
                    id: id, epoch: row["epoch"], seq: UInt64(max(0, seq)), pushToken: row["push_token"],
                    pushURL: row["push_url"], registrationInfo: StoreCodec.object(row["registration_info"]),
                    liveActivityTokens: StoreCodec.object(row["live_activity_tokens"]),
                    pushToStartToken: row["push_to_start_token"], lastSeen: row["last_seen"],
                    supportsLiveActivities: row["supports_live_activities"],
                    relayState: (row["relay_state"] as String?).flatMap(StoreCodec.json))
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM activity ORDER BY device_id, tag")) {
                let tag: String = row["tag"]
                let generation: Int64 = row["generation"]
                let lastSeq: Int64 = row["last_seq"]
                let phaseText: String = row["phase"]
                let activity = Activity(
                    generation: UInt64(max(0, generation)),
                    attributes: StoreCodec.attributes(StoreCodec.json(row["attributes"]), tag: tag),
                    state: StoreCodec.object(row["state"]), phase: ActivityPhase(rawValue: phaseText) ?? .active,
                    staleDate: row["stale_date"], relevanceScore: row["relevance_score"], endedAt: row["ended_at"],
                    dismissalDate: row["dismissal_date"], updatedAt: row["updated_at"], lastSeq: UInt64(max(0, lastSeq)))
                state.activities[row["device_id"], default: []].append(activity)
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM notification ORDER BY device_id, seq")) {
                guard let body = StoreCodec.notificationBody(StoreCodec.json(row["body"])) else { continue }
                let seq: Int64 = row["seq"]
                state.notifications[row["device_id"], default: []].append(
                    QueuedNotification(seq: UInt64(max(0, seq)), body: body, acceptedAt: row["accepted_at"]))
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM outbox ORDER BY seq")) {
                let seq: Int64 = row["seq"]
                state.outbox.append(OutboxRow(
                    deviceId: row["device_id"], slot: row["slot"], kind: row["kind"], url: row["url"],
                    body: StoreCodec.json(row["body"]) ?? .null, seq: UInt64(max(0, seq))))
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM managed_device ORDER BY id")) {
                state.managedDevices.append(ManagedDeviceRow(
                    id: row["id"], name: row["name"], tokenHash: row["token_hash"], notifications: row["notifications"],
                    createdAt: row["created_at"], fallback: row["fallback"]))
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM ha_registration")) {
                let r = HARegistrationRow(
                    deviceId: row["device_id"], haDeviceId: row["ha_device_id"], webhookId: row["webhook_id"],
                    deviceName: row["device_name"], pushToken: row["push_token"], pushURL: row["push_url"],
                    haURL: row["ha_url"], registeredAt: row["registered_at"], updatedAt: row["updated_at"],
                    appData: (row["app_data"] as String?).map { StoreCodec.object($0) })
                state.haRegistrations[r.deviceId] = r
            }
            return state
        }
    }

    // MARK: Writing

    /// Writes one group of ops in one transaction. Ops with the same key collapse to the last one.
    public func write(_ ops: [StoreOp]) throws {
        var lastIndex = [String: Int]()
        for (i, op) in ops.enumerated() {
            if let key = op.key { lastIndex[key] = i }
        }
        try pool.writeWithoutTransaction { db in
            let statements = try writeStatements(db)
            try statements.run(.begin)
            do {
                for (i, op) in ops.enumerated() {
                    if let key = op.key, lastIndex[key] != i { continue }
                    try apply(op, statements)
                }
                try statements.run(.commit)
                committed.add(1, ordering: .relaxed)
            } catch {
                // GRDB stops the process if a connection is handed back inside a transaction.
                try? db.rollback()
                throw error
            }
        }
    }

    /// Transactions committed so far (any thread).
    public var commits: UInt64 { committed.load(ordering: .relaxed) }

    /// Hands SQLite's page caches back: the writer connection's, and the readers', which close (the next read opens
    /// one). What they held is in the OS's file cache, a `pread` away. Any thread; waits for a commit under way.
    public func releaseMemory() {
        pool.releaseMemory()
    }

    /// Bytes of page cache the writer connection holds now (`SQLITE_DBSTATUS_CACHE_USED`).
    public func writerCacheBytes() -> Int {
        pool.writeWithoutTransaction { db in
            var used: Int32 = 0
            var highest: Int32 = 0
            sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &used, &highest, 0)
            return Int(used)
        }
    }

    /// The writer connection's statements (inside a writer access only).
    private func writeStatements(_ db: Database) throws -> WriteStatements {
        guard let connection = db.sqliteConnection else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the store's connection is closed")
        }
        if let statements = writes, statements.connection == connection { return statements }
        writes?.finalize()
        let statements = WriteStatements(connection: connection)
        writes = statements
        return statements
    }

    private func apply(_ op: StoreOp, _ statements: WriteStatements) throws {
        switch op {
        case .device(let d):
            try statements.run(.device) {
                $0.add(d.id)
                $0.add(d.epoch)
                $0.add(d.seq)
                $0.add(d.pushToken)
                $0.add(d.pushURL)
                $0.add(JSONValue.object(d.registrationInfo).serialized())
                $0.add(JSONValue.object(d.liveActivityTokens).serialized())
                $0.add(d.pushToStartToken)
                $0.add(d.lastSeen)
                $0.add(d.supportsLiveActivities)
                $0.add(d.relayState?.serialized())
            }
        case .upsertActivity(let deviceId, let a):
            try statements.run(.activity) {
                $0.add(deviceId)
                $0.add(a.tag)
                $0.add(a.generation)
                $0.add(a.attributes.json.serialized())
                $0.add(JSONValue.object(a.state).serialized())
                $0.add(a.phase.rawValue)
                $0.add(a.staleDate)
                $0.add(a.relevanceScore)
                $0.add(a.endedAt)
                $0.add(a.dismissalDate)
                $0.add(a.updatedAt)
                $0.add(a.lastSeq)
            }
        case .deleteActivity(let deviceId, let tag):
            try statements.run(.deleteActivity) {
                $0.add(deviceId)
                $0.add(tag)
            }
        case .insertNotification(let deviceId, let n):
            try statements.run(.notification) {
                $0.add(deviceId)
                $0.add(n.seq)
                $0.add(StoreCodec.notificationBody(n.body).serialized())
                $0.add(n.acceptedAt)
            }
        case .deleteNotifications(let deviceId, let through):
            try statements.run(.deleteNotificationsThrough) {
                $0.add(deviceId)
                $0.add(through)
            }
        case .deleteNotification(let deviceId, let seq):
            try statements.run(.deleteNotification) {
                $0.add(deviceId)
                $0.add(seq)
            }
        case .upsertOutbox(let o):
            try statements.run(.outbox) {
                $0.add(o.deviceId)
                $0.add(o.slot)
                $0.add(o.kind)
                $0.add(o.url)
                $0.add(o.body.serialized())
                $0.add(o.seq)
            }
        case .deleteOutbox(let deviceId, let slot):
            try statements.run(.deleteOutbox) {
                $0.add(deviceId)
                $0.add(slot)
            }
        case .meta(let key, let value):
            try statements.run(.meta) {
                $0.add(key)
                $0.add(value)
            }
        case .replaceOutbox(let rows):
            try statements.run(.clearOutbox)
            for o in rows { try apply(.upsertOutbox(o), statements) }
        case .haRegistration(let r):
            try statements.run(.haRegistration) {
                $0.add(r.deviceId)
                $0.add(r.haDeviceId)
                $0.add(r.webhookId)
                $0.add(r.deviceName)
                $0.add(r.pushToken)
                $0.add(r.pushURL)
                $0.add(r.haURL)
                $0.add(r.registeredAt)
                $0.add(r.updatedAt)
                $0.add(r.appData.map { JSONValue.object($0).serialized() })
            }
        case .deleteHARegistration(let deviceId):
            try statements.run(.deleteHARegistration) { $0.add(deviceId) }
        case .managedDevice(let d):
            try statements.run(.managedDevice) {
                $0.add(d.id)
                $0.add(d.name)
                $0.add(d.tokenHash)
                $0.add(d.notifications)
                $0.add(d.createdAt)
                $0.add(d.fallback)
            }
        case .removeDevice(let id):
            // Everything of a removed device goes (its activities, queue, relay outbox) except its HA registration:
            // that row is how a later start knows to remove the device from HA when HA was away at the removal. It
            // goes once HA has removed the device (`deleteHARegistration`).
            for kind in [WriteStatements.Kind.removeManagedDevice, .removeDeviceRow, .removeActivities, .removeNotifications, .removeOutbox] {
                try statements.run(kind) { $0.add(id) }
            }
        }
    }

    /// A second connection to the same file, for checkpoints on a thread other than the writer's.
    func checkpointConnection() throws -> DatabaseQueue {
        var config = Configuration()
        // A RESTART checkpoint waits for the writer's lock between two commits: short steps catch the gap.
        config.busyMode = Self.waitInShortSteps(upTo: 5)
        config.label = "lanpush-checkpoint"
        return try DatabaseQueue(path: path, configuration: config)
    }

    /// Installs (or with `nil`, removes) SQLite's WAL hook on the writer connection: `hook` runs after each commit,
    /// on the committing thread, with the WAL's size in frames. Only with `checkpointsInCommits: false` (the hook
    /// is where SQLite's automatic checkpoint lives).
    func onWALCommit(
        _ context: UnsafeMutableRawPointer?,
        _ hook: (@convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32)?
    ) {
        precondition(!checkpointsInCommits)
        pool.writeWithoutTransaction { db in
            _ = sqlite3_wal_hook(db.sqliteConnection, hook, context)
        }
    }

    /// Retries a busy lock every 100 µs for up to `seconds`.
    static func waitInShortSteps(upTo seconds: Int) -> Database.BusyMode {
        .callback { tries in
            Thread.sleep(forTimeInterval: 0.0001)
            return tries < seconds * 10_000
        }
    }

    /// Folds the WAL into the main file (clean shutdown), so the file alone is a complete copy.
    public func checkpoint() {
        try? pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }
}
