import FuzzSupport
import Foundation
import LanpushCore
import LanpushStore

/// The store reading back its own rows (`StateStore.load`, `StoreCodec`): whatever the loop hands it — JSON
/// columns with any values, text columns with any strings — comes back equal after a write and a load. The input
/// supplies the strings and JSON values; the rows are built the way the gateway builds them.
@main
struct FuzzStore {
    static func main() {
        let dir = (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory())
            + "/lanpush-fuzz-store-\(getpid())"
        try? FileManager.default.removeItem(atPath: dir)
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // Losing the file on power loss does not matter here: the database is a scratch copy for this process.
        let store = try! StateStore(directory: dir, synchronous: "off")
        runFuzzer { bytes in roundTrip(store, ByteReader(bytes)) }
    }

    static func roundTrip(_ store: StateStore, _ input: ByteReader) {
        var input = input
        // No NUL: SQLite's text columns end at one, so the gateway refuses NULs before anything reaches a text
        // column (FuzzFindingsTests); JSON columns escape them and get any string below.
        func text() -> String { String(decoding: input.chunk(max: 64).filter { $0 != 0 }, as: UTF8.self) }
        func json() -> JSONValue {
            let bytes = input.chunk()
            return (try? JSONValue.parse(bytes)) ?? .string(String(decoding: bytes, as: UTF8.self))
        }
        func object() -> [String: JSONValue] { json().objectValue ?? ["value": json()] }
        func time() -> Double { 1_800_000_000 + Double(input.uint16()) * input.pick([1, 0.001, -1000]) }
        func seq() -> UInt64 { UInt64(input.uint16()) << UInt64(input.int(below: 38)) }

        let id = "dev-" + text()
        let tag = text()
        let device = DeviceRow(
            id: id, epoch: text(), seq: seq(), pushToken: input.byte() & 1 == 1 ? text() : nil,
            pushURL: input.byte() & 1 == 1 ? text() : nil, registrationInfo: object(), liveActivityTokens: object(),
            pushToStartToken: input.byte() & 1 == 1 ? text() : nil, lastSeen: input.byte() & 1 == 1 ? time() : nil,
            supportsLiveActivities: input.pick([nil, true, false]))
        let activity = Activity(
            generation: seq(),
            attributes: ActivityAttributes(tag: tag, title: text(), startedAt: time(), webhookId: input.byte() & 1 == 1 ? text() : nil),
            state: object(), phase: input.pick(ActivityPhase.allCases), staleDate: input.byte() & 1 == 1 ? time() : nil,
            relevanceScore: input.byte() & 1 == 1 ? Double(Int8(bitPattern: input.byte())) / 7 : nil,
            endedAt: input.byte() & 1 == 1 ? time() : nil, dismissalDate: input.byte() & 1 == 1 ? time() : nil,
            updatedAt: time(), lastSeq: seq())
        let body: QueuedNotification.Body = input.byte() & 1 == 1
            ? .clear(tag: text())
            : .notification(NotifyMessage(title: input.byte() & 1 == 1 ? text() : nil, message: input.byte() & 1 == 1 ? text() : nil, data: object()))
        let notification = QueuedNotification(seq: seq() + 1, body: body, acceptedAt: time())
        let outbox = OutboxRow(deviceId: id, slot: text(), kind: text(), url: text(), body: json(), seq: seq())
        let managed = ManagedDeviceRow(id: id, name: text(), tokenHash: text(), notifications: text(), createdAt: time())
        let registration = HARegistrationRow(
            deviceId: id, haDeviceId: text(), webhookId: text(), deviceName: text(), pushToken: text(), pushURL: text(),
            haURL: text(), registeredAt: time(), updatedAt: time(), appData: input.byte() & 1 == 1 ? object() : nil)
        let (metaKey, metaValue) = ("fuzz", text())

        do {
            try store.write([
                .device(device), .upsertActivity(deviceId: id, activity), .insertNotification(deviceId: id, notification),
                .upsertOutbox(outbox), .managedDevice(managed), .haRegistration(registration), .meta(key: metaKey, value: metaValue),
            ])
        } catch {
            return Fuzz.require(false, "the store refused its own rows: \(error)")
        }
        let loaded: StoredState
        do {
            loaded = try store.load()
        } catch {
            return Fuzz.require(false, "the store cannot read its own rows back: \(error)")
        }
        Fuzz.require(loaded.devices[id] == device, "device row: wrote \(device), read \(String(describing: loaded.devices[id]))")
        // The attributes are kept as their JSON, whose started_at is whole seconds (as snapshots show it).
        var expected = activity
        expected.attributes.startedAt = activity.attributes.startedAt.rounded()
        Fuzz.require(loaded.activities[id] == [expected], "activity: wrote \(activity), read \(String(describing: loaded.activities[id]))")
        Fuzz.require(loaded.notifications[id] == [notification],
            "notification: wrote \(notification), read \(String(describing: loaded.notifications[id]))")
        Fuzz.require(loaded.outbox.filter { $0.deviceId == id } == [outbox], "outbox: wrote \(outbox), read \(loaded.outbox)")
        Fuzz.require(loaded.managedDevices.filter { $0.id == id } == [managed], "managed device: wrote \(managed), read \(loaded.managedDevices)")
        Fuzz.require(loaded.haRegistrations[id] == registration,
            "HA registration: wrote \(registration), read \(String(describing: loaded.haRegistrations[id]))")
        Fuzz.require(loaded.meta[metaKey] == metaValue, "meta \(metaKey): wrote \(metaValue), read \(String(describing: loaded.meta[metaKey]))")

        // Leave the database as it was, so every input starts from the same store.
        do {
            try store.write([.removeDevice(id: id), .deleteHARegistration(deviceId: id), .replaceOutbox([])])
            let left = try store.load()
            Fuzz.require(left.devices[id] == nil && left.activities[id] == nil && left.notifications[id] == nil
                && left.managedDevices.isEmpty && left.haRegistrations.isEmpty && left.outbox.isEmpty,
                "a removed device left rows behind")
        } catch {
            Fuzz.require(false, "cleaning up failed: \(error)")
        }
    }
}
