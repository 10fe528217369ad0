import GRDB

/// The store's schema, one migration per version: each takes a database of the version before to its own, so a
/// state folder of any earlier release opens (the committed v1 fixture is checked to migrate with its state).
extension StateStore {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.create(table: "meta") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
            try db.create(table: "device") { t in
                t.primaryKey("id", .text)
                t.column("epoch", .text).notNull()
                t.column("seq", .integer).notNull()
                t.column("push_token", .text)
                t.column("push_url", .text)
                t.column("registration_info", .text).notNull().defaults(to: "{}")
                t.column("live_activity_tokens", .text).notNull().defaults(to: "{}")
                t.column("push_to_start_token", .text)
                t.column("last_seen", .double)
            }
            try db.create(table: "activity") { t in
                t.column("device_id", .text).notNull()
                t.column("tag", .text).notNull()
                t.column("generation", .integer).notNull()
                t.column("attributes", .text).notNull()
                t.column("state", .text).notNull()
                t.column("phase", .text).notNull()
                t.column("stale_date", .double)
                t.column("relevance_score", .double)
                t.column("ended_at", .double)
                t.column("dismissal_date", .double)
                t.column("updated_at", .double).notNull()
                t.column("last_seq", .integer).notNull()
                t.primaryKey(["device_id", "tag"])
            }
            try db.create(table: "notification") { t in
                t.column("device_id", .text).notNull()
                t.column("seq", .integer).notNull()
                t.column("body", .text).notNull()
                t.column("accepted_at", .double).notNull()
                t.primaryKey(["device_id", "seq"])
            }
            try db.create(table: "outbox") { t in
                t.column("device_id", .text).notNull()
                t.column("slot", .text).notNull()
                t.column("kind", .text).notNull()
                t.column("url", .text).notNull()
                t.column("body", .text).notNull()
                t.column("seq", .integer).notNull()
                t.primaryKey(["device_id", "slot"])
            }
        }
        // v2 (HA-native mode): one mobile_app registration per lanpush device. Never edit a migration once
        // released: add the next one (Tests/Fixtures/state-v1 must keep migrating).
        m.registerMigration("v2") { db in
            try db.create(table: "ha_registration") { t in
                t.primaryKey("device_id", .text)
                t.column("ha_device_id", .text).notNull()
                t.column("webhook_id", .text).notNull()
                t.column("device_name", .text).notNull()
                t.column("push_token", .text).notNull()
                t.column("push_url", .text).notNull()
                t.column("ha_url", .text).notNull()
                t.column("registered_at", .double).notNull()
                t.column("updated_at", .double).notNull()
            }
        }
        // v3: devices added at run time (the API, the CLI, pairing). Their tokens are stored hashed.
        m.registerMigration("v3") { db in
            try db.create(table: "managed_device") { t in
                t.primaryKey("id", .text)
                t.column("name", .text).notNull()
                t.column("token_hash", .text).notNull()
                t.column("notifications", .text).notNull().defaults(to: "auto")
                t.column("created_at", .double).notNull()
            }
        }
        // v4: whether a device's clients can show Live Activities (their `register` frame says so; NULL: never said),
        // and the `app_data` lanpush last gave HA for a registration (NULL: stored before v4, the v2 fields only).
        m.registerMigration("v4") { db in
            try db.alter(table: "device") { t in t.add(column: "supports_live_activities", .boolean) }
            try db.alter(table: "ha_registration") { t in t.add(column: "app_data", .text) }
        }
        // v5: the notification queue as a table without rowids, its rows kept in the primary key's own b-tree. A
        // queued notification was a row and an entry of the key's separate index — two pages, two WAL frames at
        // every insert and every prune, and the queue is written at every notification. (A row past ~1,000 bytes
        // also takes an overflow page: two pages, as before.)
        m.registerMigration("v5") { db in
            try db.create(table: "notification_v5", options: [.withoutRowID]) { t in
                t.column("device_id", .text).notNull()
                t.column("seq", .integer).notNull()
                t.column("body", .text).notNull()
                t.column("accepted_at", .double).notNull()
                t.primaryKey(["device_id", "seq"])
            }
            try db.execute(sql: """
                INSERT INTO notification_v5 (device_id, seq, body, accepted_at)
                  SELECT device_id, seq, body, accepted_at FROM notification
                """)
            try db.drop(table: "notification")
            try db.rename(table: "notification_v5", to: "notification")
        }
        // v6: what the relay path keeps of a device beside its credentials (the activities it shows on the phone, a
        // refused token: JSON, NULL when nothing), and the HA action a run-time device falls back to.
        m.registerMigration("v6") { db in
            try db.alter(table: "device") { t in t.add(column: "relay_state", .text) }
            try db.alter(table: "managed_device") { t in t.add(column: "fallback", .text) }
        }
        return m
    }
}
