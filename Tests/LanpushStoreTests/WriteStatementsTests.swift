import Foundation
import GRDB
import LanpushCore
import Testing

@testable import LanpushStore

/// The commit's own statements, bound with SQLite's calls rather than GRDB's: what they store reads back as GRDB
/// wrote it, a failed commit leaves the rows as they were and the store writable, and closing the store closes its
/// connection.
@Suite struct WriteStatementsTests {
    let dir: String

    init() throws {
        dir = try StoreTestSupport.directory("writes")
    }

    var file: String { dir + "/" + StateStore.fileName }

    /// An empty string is text, not NULL: a NULL in a column that is read back as `String` would stop the load.
    @Test func anEmptyStringIsStoredAsText() throws {
        let store = try StateStore(directory: dir)
        let row = DeviceRow(
            id: "phone", epoch: "", seq: 0, pushToken: "", pushURL: "", pushToStartToken: "", lastSeen: 0,
            supportsLiveActivities: false)
        try store.write([.device(row), .meta(key: "", value: "")])
        let state = try store.load()
        #expect(state.devices["phone"] == row)
        #expect(state.meta[""] == "")
    }

    /// Text of several-byte characters is stored whole; text is cut at a NUL, as GRDB's own binding cut it (SQLite
    /// reads a C string), so rows written before and after read back alike.
    @Test func textIsStoredAsGRDBStoredIt() throws {
        let store = try StateStore(directory: dir)
        let text = "b — 🏠 " + String(repeating: "x", count: 40)
        try store.write([.meta(key: text, value: text), .meta(key: "cut", value: "a\u{0}b")])
        let meta = try store.load().meta
        #expect(meta[text] == text)
        #expect(meta["cut"] == "a")
    }

    /// A statement that fails inside the transaction (here a trigger of another connection refuses the row) rolls
    /// back the whole commit, and the statements work again once the cause is gone.
    @Test func aFailedCommitLeavesTheRowsAsTheyWereAndTheStoreWritable() throws {
        let store = try StateStore(directory: dir)
        try store.write([StoreTestSupport.deviceRow(1)])
        let other = try DatabaseQueue(path: file)
        try other.write { db in
            try db.execute(sql: "CREATE TRIGGER refuse BEFORE INSERT ON meta WHEN NEW.key = 'boom' BEGIN SELECT RAISE(ABORT, 'refused'); END")
        }
        #expect(throws: DatabaseError.self) {
            try store.write([StoreTestSupport.deviceRow(2), .meta(key: "boom", value: "1")])
        }
        #expect(try store.load().devices["phone"]?.seq == 1)
        #expect(try store.load().meta["boom"] == nil)
        try other.write { db in try db.execute(sql: "DROP TRIGGER refuse") }
        try store.write([StoreTestSupport.deviceRow(3), .meta(key: "boom", value: "1")])
        #expect(try store.load().devices["phone"]?.seq == 3)
        #expect(try store.load().meta["boom"] == "1")
    }

    /// A commit that cannot start (another connection holds the write lock, and this store does not wait) fails
    /// alone: the next one, once the lock is free, goes through.
    @Test func aCommitThatCannotBeginFailsAndTheNextGoesThrough() throws {
        let store = try StateStore(directory: dir)
        try store.write([StoreTestSupport.deviceRow(1)])
        let other = try DatabaseQueue(path: file)
        try other.inDatabase { db in
            try db.execute(sql: "BEGIN IMMEDIATE TRANSACTION")
            #expect(throws: DatabaseError.self) { try store.write([StoreTestSupport.deviceRow(2)]) }
            try db.execute(sql: "ROLLBACK")
        }
        try store.write([StoreTestSupport.deviceRow(3)])
        #expect(try store.load().devices["phone"]?.seq == 3)
    }

    /// The last connection to close folds the write-ahead log into the file and deletes it. A statement left open
    /// on the writer connection keeps that connection open (GRDB closes it with `sqlite3_close`), and the log with it.
    @Test func closingTheStoreClosesItsConnection() throws {
        do {
            let store = try StateStore(directory: dir)
            try store.write([StoreTestSupport.deviceRow(1), .meta(key: "k", value: "v")])
            #expect(FileManager.default.fileExists(atPath: file + "-wal"))
        }
        #expect(!FileManager.default.fileExists(atPath: file + "-wal"))
        #expect(try StateStore(directory: dir).load().devices["phone"]?.seq == 1)
    }
}
