import Foundation
import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// What the gateway's core tells HA-native mode (`DeviceEvents`): every kind of change that moves a device's sensors
/// signals it, and each client report arrives once, validated — with the in-process gateway, no HA involved.
@Suite struct DeviceEventsTests {
    /// Records what the core signals.
    final class Recorder {
        var changed: [String] = []
        var reports: [(String, DeviceEvents.Report)] = []

        init(_ gw: TestGateway) {
            gw.core.events.onChange = { [unowned self] device in self.changed.append(device.id) }
            gw.core.events.onReport = { [unowned self] device, report in self.reports.append((device.id, report)) }
        }

        func take() -> [String] {
            defer { changed.removeAll() }
            return changed
        }
    }

    @Test func sessionsIngestAcksAndRelayAnswersSignalAChange() throws {
        let gw = try TestGateway()
        let events = Recorder(gw)
        let session = gw.connect("phone")
        #expect(events.take().contains("phone"))
        #expect(gw.push(["targets": ["tablet"], "title": "Door", "message": "Front door"]).status == 202)
        #expect(events.take() == ["tablet"])  // the other device's queue, not phone's
        #expect(gw.push(["targets": ["phone"], "title": "Door", "message": "Back door"]).status == 202)
        #expect(events.take().contains("phone"))
        session.ack()  // the queued notification is acknowledged: the queue shrinks
        #expect(events.take() == ["phone"])
        session.send(["type": "register", "push_token": "phone-token", "push_url": "http://relay.invalid/api/sendPushNotification"])
        session.close()
        #expect(events.take().contains("phone"))
        #expect(gw.push(["targets": ["phone"], "title": "Washer", "message": "Rinsing", "data": ["tag": "w", "live_update": true]]).status == 202)
        // The change, the request leaving (quota), the relay's answer (its rateLimits).
        #expect(events.take().filter { $0 == "phone" }.count >= 3)
        gw.advance(by: 1)
        #expect(events.take().isEmpty)  // time alone changed nothing
    }

    @Test func clientReportsArriveOnceEach() throws {
        let gw = try TestGateway()
        let events = Recorder(gw)
        let session = gw.connect("phone")
        session.send(["type": "register", "supports_live_activities": true])
        #expect(session.frames("registered").last == ["type": "registered", "supports_live_activities": true])
        session.send(["type": "register", "supports_live_activities": true, "push_token": "tok"])  // the same again
        session.send(["type": "live_activity_token", "tag": "washer", "token": "la-1", "expires_at": 1_900_000_000_000])
        session.send(["type": "live_activity_token", "tag": "dryer", "token": "la-2"])
        session.send(["type": "push_to_start_token", "token": "pts"])
        session.send(["type": "push_to_start_token", "token": "pts"])  // unchanged: no report
        session.send(["type": "dismissed", "tag": "washer"])
        let reports = events.reports.map(\.1)
        #expect(reports == [
            .capabilities, .liveActivityToken(tag: "washer", token: "la-1", expiresAt: 1_900_000_000),  // ms → s
            .liveActivityToken(tag: "dryer", token: "la-2", expiresAt: nil), .pushToStartToken, .dismissed(tag: "washer"),
        ])
        #expect(events.reports.allSatisfy { $0.0 == "phone" })
        #expect(session.frames("error").isEmpty)
        let device = try #require(gw.core.directory["phone"])
        #expect(device.supportsLiveActivities == true && device.relay.registration?.pushToken == "tok")
        #expect(device.relay.liveActivityTokens["washer"] == ["token": "la-1", "expires_at": 1_900_000_000])
    }

    @Test func invalidReportsAreRefusedWithAClearErrorAndReportNothing() throws {
        let gw = try TestGateway()
        let events = Recorder(gw)
        let session = gw.connect("phone")
        session.send(["type": "register", "supports_live_activities": "yes"])
        session.send(["type": "register"])
        session.send(["type": "register", "push_token": "", "supports_live_activities": true])
        session.send(["type": "live_activity_token", "tag": "w", "token": "t", "expires_at": "tomorrow"])
        session.send(["type": "live_activity_token", "tag": "w", "token": "t", "expires_at": -5])
        let errors = session.frames("error").compactMap { $0["message"]?.stringValue }
        #expect(errors == [
            "'supports_live_activities' must be true or false",
            "register needs a non-empty 'push_token' (or only 'supports_live_activities')",
            "register needs a non-empty 'push_token' (or only 'supports_live_activities')",
            "live_activity_token: 'expires_at' must be a time in Unix seconds (or milliseconds)",
            "live_activity_token: 'expires_at' must be a time in Unix seconds (or milliseconds)",
        ])
        #expect(events.reports.isEmpty)
        #expect(gw.core.directory["phone"]?.supportsLiveActivities == nil)
        #expect(session.closeCode == nil)  // an error frame, never a disconnect
    }

    @Test func whatTheClientSaidOfLiveActivitiesSurvivesARestart() throws {
        let gw = try TestGateway(store: true)
        let session = gw.connect("phone")
        session.send(["type": "register", "supports_live_activities": false])
        #expect(gw.core.deviceStatus("phone")?["supports_live_activities"] == false)
        try gw.restart()
        #expect(gw.core.directory["phone"]?.supportsLiveActivities == false)
        #expect(gw.core.deviceStatus("phone")?["supports_live_activities"] == false)
        #expect(gw.core.deviceStatus("tablet")?["supports_live_activities"] == nil)
    }

    @Test func sensorIntervalIsReadAndChecked() throws {
        #expect(try ConfigLoader.parse("").homeAssistant.sensorInterval == 5)
        #expect(try ConfigLoader.parse("home_assistant: {sensor_interval: 2.5}").homeAssistant.sensorInterval == 2.5)
        #expect(try ConfigLoader.parse("home_assistant: {sensor_interval: 0}").homeAssistant.sensorInterval == 0)
        for (text, message) in [
            ("home_assistant: {sensor_interval: -1}", "must be at least 0.0"),
            ("home_assistant: {sensor_interval: 4000}", "must be at most 3600 (seconds)"),
            ("home_assistant: {sensor_interval: soon}", "must be a number"),
        ] {
            #expect(throws: ConfigError(key: "home_assistant.sensor_interval", message: message)) { try ConfigLoader.parse(text) }
        }
    }
}
