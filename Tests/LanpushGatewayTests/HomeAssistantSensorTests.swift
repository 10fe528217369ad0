import Foundation
import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// HA-native mode's entities without a process: the throttle's timing, which of a device's changes become which
/// sensor updates (from the gateway's own `GET /v1/devices` entry), the payloads HA's mobile_app webhook takes, and
/// the release gate of the Live Activity bookkeeping.
@Suite struct HomeAssistantSensorTests {
    // MARK: Throttle

    @Test func theFirstChangeGoesAtOnceAndLaterOnesWaitForTheIntervalsEnd() {
        var t = SensorThrottle(interval: 5)
        #expect(t.changed(at: 100) == 100)
        #expect(t.changed(at: 100.5) == nil)  // already scheduled: it carries this change too
        t.fired(at: 100, sent: true)
        #expect(t.changed(at: 101) == 105)
        #expect(t.changed(at: 103) == nil)
        t.fired(at: 105, sent: true)
        #expect(t.changed(at: 200) == 200)  // quiet for longer than the interval
    }

    @Test func aTurnThatSentNothingDoesNotDelayTheNextChange() {
        var t = SensorThrottle(interval: 5)
        #expect(t.changed(at: 10) == 10)
        t.fired(at: 10, sent: false)  // nothing differed from what HA holds
        #expect(t.changed(at: 11) == 11)
        t.fired(at: 11, sent: true)
        #expect(t.changed(at: 12) == 16)
    }

    @Test func intervalZeroSendsEveryChangeOnItsOwnTurn() {
        var t = SensorThrottle(interval: 0)
        #expect(t.changed(at: 1) == 1)
        t.fired(at: 1, sent: true)
        #expect(t.changed(at: 1) == 1)
    }

    // MARK: Which changes become which updates

    func values(_ gw: TestGateway, _ device: String = "phone") throws -> DeviceSensorValues {
        DeviceSensorValues(status: try #require(gw.core.deviceStatus(device)))
    }

    @Test func aDeviceStartsOffWithNothingKnownOfItsRelay() throws {
        let gw = try TestGateway()
        let v = try values(gw).values
        #expect(v[.connected]?.state == false && v[.connected]?.attributes == ["sessions": 0])
        #expect(v[.path]?.state == "none" && v[.path]?.icon == "mdi:cloud-off-outline")
        #expect(v[.activities]?.state == 0 && v[.queuedNotifications]?.state == 0)
        #expect(v[.relayRemaining]?.state == .null && v[.relayResetsAt]?.state == .null && v[.lastSeen]?.state == .null)
    }

    @Test func aSessionChangesConnectivityPathAndLastSeenOnly() throws {
        let gw = try TestGateway(clock: ManualClock(1_767_225_600))  // 2026-01-01T00:00:00Z
        let before = try values(gw)
        let session = gw.connect("phone")
        let after = try values(gw)
        #expect(after.changed(since: before.values) == [.connected, .path, .lastSeen])
        #expect(after.values[.connected]?.state == true && after.values[.connected]?.attributes == ["sessions": 1])
        #expect(after.values[.path]?.state == "lan")
        #expect(after.values[.lastSeen]?.state == "2026-01-01T00:00:00Z")
        #expect(after.changed(since: after.values).isEmpty)
        gw.advance(by: 1)
        session.close()
        let gone = try values(gw)
        #expect(gone.changed(since: after.values) == [.connected, .path, .lastSeen])
        #expect(gone.values[.lastSeen]?.state == "2026-01-01T00:00:01Z")
    }

    @Test func anActivityAndAQueuedNotificationChangeTheirCountsOnly() throws {
        let gw = try TestGateway()
        let start = try values(gw)
        #expect(gw.push(["targets": ["phone"], "title": "Washer", "message": "Rinsing", "data": ["tag": "washer", "live_update": true]]).status == 202)
        let started = try values(gw)
        #expect(started.changed(since: start.values) == [.activities])
        #expect(started.values[.activities]?.state == 1)
        #expect(gw.push(["targets": ["phone"], "title": "Door", "message": "Front door"]).status == 202)
        let queued = try values(gw)
        #expect(queued.changed(since: started.values) == [.queuedNotifications])
        #expect(queued.values[.queuedNotifications]?.state == 1)
    }

    @Test func aGoneDeviceWithRelayCredentialsShowsTheRelayAndItsQuota() throws {
        let gw = try TestGateway()
        let session = gw.connect("phone")
        session.send(["type": "register", "push_token": "phone-token", "push_url": "http://relay.invalid/api/sendPushNotification"])
        session.close()
        let gone = try values(gw)
        #expect(gone.values[.path]?.state == "relay" && gone.values[.relayRemaining]?.state == .null)
        #expect(gw.push(["targets": ["phone"], "title": "Washer", "message": "Rinsing", "data": ["tag": "washer", "live_update": true]]).status == 202)
        let relayed = try values(gw)
        #expect(gw.relayRequests.count == 1)
        // The recording relay answered with rateLimits: remaining 499, resetting 2030-01-01.
        #expect(relayed.changed(since: gone.values) == [.activities, .relayRemaining, .relayResetsAt])
        #expect(relayed.values[.relayRemaining]?.state == 499)
        #expect(relayed.values[.relayResetsAt]?.state == "2030-01-01T00:00:00Z")
        #expect(relayed.nextReset == 1_893_456_000)
    }

    // MARK: Payloads

    @Test func registrationCarriesTheDefinitionAndUpdatesCarryIconAndAttributes() {
        let value = SensorValue(state: true, icon: "mdi:lan-connect", attributes: ["sessions": 2])
        let registration = HomeAssistantSensor.connected.registration(device: "kitchen", value)
        #expect(registration == [
            "type": "binary_sensor", "unique_id": "lanpush-kitchen-connected", "name": "LAN connected", "state": true,
            "icon": "mdi:lan-connect", "attributes": ["sessions": 2], "device_class": "connectivity",
        ])
        let seen = HomeAssistantSensor.lastSeen.registration(device: "kitchen", SensorValue(state: .null, icon: "mdi:clock-outline"))
        #expect(seen["device_class"] == "timestamp" && seen["entity_category"] == "diagnostic" && seen["type"] == "sensor")
        #expect(HomeAssistantSensor.queuedNotifications.registration(device: "k", value)["state_class"] == "measurement")
        // HA resets an icon or attributes an update leaves out: both always go along.
        #expect(HomeAssistantSensor.connected.update(device: "kitchen", value) == [
            "type": "binary_sensor", "unique_id": "lanpush-kitchen-connected", "state": true, "icon": "mdi:lan-connect",
            "attributes": ["sessions": 2],
        ])
        #expect(Set(HomeAssistantSensor.allCases.map { $0.uniqueId(device: "k") }).count == HomeAssistantSensor.allCases.count)
    }

    @Test func anUnexposedDeviceShowsUnavailableEverywhere() {
        let values = DeviceSensorValues.unavailable.values
        #expect(values.count == HomeAssistantSensor.allCases.count)
        #expect(values.values.allSatisfy { $0.state == "unavailable" })
    }

    // MARK: The release gate

    @Test(arguments: [
        ("2025.4.4", false), ("2026.6.3", false), ("2026.7.0", true), ("2026.7.0b2", true), ("2026.8.0.dev20260612", true),
        ("2027.1.0", true), ("2026.12", true), ("dev", false), ("", false), ("2026", false), ("26.7.0", false),
        ("2026.13.0", false),
    ])
    func theLiveActivityWebhooksGoFrom2026_7On(version: String, expected: Bool) {
        #expect(HomeAssistantVersion.hasLiveActivityWebhooks(version) == expected)
    }

    @Test func noVersionMeansNone() {
        #expect(!HomeAssistantVersion.hasLiveActivityWebhooks(nil))
        #expect(HomeAssistantVersion("2026.7.1") == HomeAssistantVersion(year: 2026, month: 7))
        #expect(HomeAssistantVersion(year: 2026, month: 10) > HomeAssistantVersion(year: 2026, month: 9))
    }
}
