import GRDB
import GRDBSQLite

/// The store's write statements, prepared once on the writer connection and bound and stepped with SQLite's own
/// calls.
///
/// A commit writes the same few statements over and over (a device row and a notification or an activity per
/// update). Through GRDB's `execute(arguments:)` each of them found its statement by hashing the whole SQL text,
/// converted every argument to a `DatabaseValue`, checked the arguments against the statement, wrapped every string
/// binding in a closure, and checked the database's observation and cancellation state around the step: about
/// 42,000 instructions of a one-notification commit's 136,000 (callgrind), more than SQLite's own work on the rows.
/// Here a statement is an array slot and a binding is one `sqlite3_bind_*` call. Reads, migrations and checkpoints
/// stay with GRDB: each commit's `BEGIN … COMMIT` runs inside one GRDB writer access and hands the connection back in
/// autocommit, as GRDB expects it.
///
/// The values are bound as GRDB binds them (text up to its first NUL, 64-bit integers, doubles, `Bool` as 0 / 1,
/// `nil` as NULL), so GRDB's reads see the same rows. SQLite owns these statements and GRDB does not know them:
/// `finalize()` must run before the connection closes (GRDB closes it with `sqlite3_close`, which leaves a
/// connection with statements still open as it is). Used only inside the writer connection's accesses, one thread at
/// a time.
final class WriteStatements {
    enum Kind: Int, CaseIterable {
        case begin, commit
        case device, activity, deleteActivity
        case notification, deleteNotificationsThrough, deleteNotification
        case outbox, deleteOutbox, clearOutbox, meta
        case haRegistration, deleteHARegistration, managedDevice
        case removeManagedDevice, removeDeviceRow, removeActivities, removeNotifications, removeOutbox

        var sql: String {
            switch self {
            case .begin: return "BEGIN IMMEDIATE TRANSACTION"
            case .commit: return "COMMIT TRANSACTION"
            // The rows rewritten at every update (a device's seq, an activity's state) are upserts that update in
            // place: `INSERT OR REPLACE` deletes the row and inserts it again under a new rowid, which rewrites the
            // primary key's index page as well as the table's, one more WAL frame per row per commit.
            case .device:
                return """
                    INSERT INTO device (id, epoch, seq, push_token, push_url, registration_info,
                      live_activity_tokens, push_to_start_token, last_seen, supports_live_activities, relay_state)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET epoch = excluded.epoch, seq = excluded.seq,
                      push_token = excluded.push_token, push_url = excluded.push_url,
                      registration_info = excluded.registration_info, live_activity_tokens = excluded.live_activity_tokens,
                      push_to_start_token = excluded.push_to_start_token, last_seen = excluded.last_seen,
                      supports_live_activities = excluded.supports_live_activities, relay_state = excluded.relay_state
                    """
            case .activity:
                return """
                    INSERT INTO activity (device_id, tag, generation, attributes, state, phase, stale_date,
                      relevance_score, ended_at, dismissal_date, updated_at, last_seq)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (device_id, tag) DO UPDATE SET generation = excluded.generation,
                      attributes = excluded.attributes, state = excluded.state, phase = excluded.phase,
                      stale_date = excluded.stale_date, relevance_score = excluded.relevance_score,
                      ended_at = excluded.ended_at, dismissal_date = excluded.dismissal_date,
                      updated_at = excluded.updated_at, last_seq = excluded.last_seq
                    """
            case .deleteActivity: return "DELETE FROM activity WHERE device_id = ? AND tag = ?"
            case .notification:
                return "INSERT OR REPLACE INTO notification (device_id, seq, body, accepted_at) VALUES (?, ?, ?, ?)"
            case .deleteNotificationsThrough: return "DELETE FROM notification WHERE device_id = ? AND seq <= ?"
            case .deleteNotification: return "DELETE FROM notification WHERE device_id = ? AND seq = ?"
            case .outbox:
                return "INSERT OR REPLACE INTO outbox (device_id, slot, kind, url, body, seq) VALUES (?, ?, ?, ?, ?, ?)"
            case .deleteOutbox: return "DELETE FROM outbox WHERE device_id = ? AND slot = ?"
            case .clearOutbox: return "DELETE FROM outbox"
            case .meta: return "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"
            case .haRegistration:
                return """
                    INSERT OR REPLACE INTO ha_registration (device_id, ha_device_id, webhook_id, device_name, push_token,
                      push_url, ha_url, registered_at, updated_at, app_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            case .deleteHARegistration: return "DELETE FROM ha_registration WHERE device_id = ?"
            case .managedDevice:
                return "INSERT OR REPLACE INTO managed_device (id, name, token_hash, notifications, created_at, fallback) VALUES (?, ?, ?, ?, ?, ?)"
            case .removeManagedDevice: return "DELETE FROM managed_device WHERE id = ?"
            case .removeDeviceRow: return "DELETE FROM device WHERE id = ?"
            case .removeActivities: return "DELETE FROM activity WHERE device_id = ?"
            case .removeNotifications: return "DELETE FROM notification WHERE device_id = ?"
            case .removeOutbox: return "DELETE FROM outbox WHERE device_id = ?"
            }
        }
    }

    let connection: OpaquePointer
    /// By `Kind.rawValue`; each prepared at its first use.
    private var prepared: [OpaquePointer?]

    init(connection: OpaquePointer) {
        self.connection = connection
        prepared = Array(repeating: nil, count: Kind.allCases.count)
    }

    /// Binds the statement's parameters in order (`bind`) and steps it to its end. A failed step throws SQLite's
    /// error (the statement is reset at its next use, which is what lets it run again).
    func run(_ kind: Kind, _ bind: (inout Parameters) -> Void = { _ in }) throws {
        let statement = try statement(kind)
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        var parameters = Parameters(statement: statement)
        bind(&parameters)
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_DONE:
                sqlite3_reset(statement)
                return
            case SQLITE_ROW:
                continue
            case let code:
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)),
                    sql: kind.sql)
            }
        }
    }

    /// Every statement prepared here, finalized; the next `run` prepares again.
    func finalize() {
        for i in prepared.indices {
            sqlite3_finalize(prepared[i])
            prepared[i] = nil
        }
    }

    private func statement(_ kind: Kind) throws -> OpaquePointer {
        if let statement = prepared[kind.rawValue] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, kind.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: kind.sql)
        }
        prepared[kind.rawValue] = statement
        return statement
    }

    /// A statement's parameters, bound one after the other from the first.
    struct Parameters {
        fileprivate let statement: OpaquePointer
        private var index: Int32 = 0

        fileprivate init(statement: OpaquePointer) {
            self.statement = statement
        }

        /// Text ends at its first NUL, as GRDB binds a `String` (SQLite reads a C string): what the gateway stores
        /// must not hold one, and it refuses them where a client could send one.
        mutating func add(_ value: String?) {
            index += 1
            guard let value else { return }  // a cleared binding is NULL
            // SQLite copies the text (SQLITE_TRANSIENT): the pointer is only valid inside this closure.
            value.withCString { _ = sqlite3_bind_text(statement, index, $0, -1, Self.transient) }
        }

        mutating func add(_ value: Int64) {
            index += 1
            _ = sqlite3_bind_int64(statement, index, value)
        }

        /// Stored as SQLite's signed 64-bit integer, as GRDB would have to (seqs and generations never come near 2^63).
        mutating func add(_ value: UInt64) {
            add(Int64(value))
        }

        mutating func add(_ value: Double?) {
            index += 1
            guard let value else { return }
            _ = sqlite3_bind_double(statement, index, value)
        }

        mutating func add(_ value: Bool?) {
            index += 1
            guard let value else { return }
            _ = sqlite3_bind_int64(statement, index, value ? 1 : 0)
        }

        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }
}
