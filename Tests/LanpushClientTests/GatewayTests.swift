import Foundation
import LanpushClient
import LanpushCore
import Testing

/// The client against the real lanpushd: every final state must equal the gateway's own `GET /v1/activities`.
/// Serialized: each test runs its own gateway, and the timing ones must not share the two cores.
@Suite(.serialized) struct GatewayTests {
    func gateway(session: [String: Int] = [:]) async throws -> GatewayProcess {
        let gw = try GatewayProcess(session: session)
        try await gw.start()
        return gw
    }

    @Test func theWasherCycleConvergesAndEndsDismissedAtOnce() async throws {
        let gw = try await gateway()
        let h = Harness(gw, "phone")
        await h.start()
        try await h.live()
        for payload in Payloads.washer { try await gw.push("phone", payload) }
        try await gw.push("phone", Payloads.washerClear)
        try await eventually { await h.log.ended.count == 1 }
        try await h.converged(with: gw)
        #expect(await h.log.activityChanges.map(\.cause) == [.start, .update, .update, .end])
        let rinse = try #require(await h.log.activityChanges[1].current)
        #expect(rinse.state["chronometer"] == true)
        let end = try #require(rinse.state["countdown_end"]?.numberValue)
        #expect(abs(end - (Date().timeIntervalSince1970 + 2700)) < 30, "when_relative became an absolute time")
        // clear_notification ends the activity and dismisses it at once: gone, its final view in `ended`.
        #expect(await h.client.state.activities["washer_cycle"] == nil)
        let final = try #require(await h.log.ended.first)
        #expect(final.attributes.title == "Washing Machine")
        #expect(final.state == [
            "message": "Cycle complete", "title": "Washing Machine", "progress": 3600, "progress_max": 3600,
            "icon": "mdi:washing-machine", "color": "#4CAF50",
        ])
        await h.stop()
        await gw.dispose()
    }

    @Test func evChargingAndASegmentedBarConverge() async throws {
        let gw = try await gateway()
        let h = Harness(gw, "phone")
        await h.start()
        try await h.live()
        for p in stride(from: 0, through: 100, by: 5) {
            try await gw.push("phone", Payloads.ev(p))
            try await gw.push("phone", Payloads.segmented(min(1, Double(p) / 100)))
        }
        try await h.converged(with: gw)
        // The client offered lanpush.v2 first and this gateway speaks it: the updates came as arrays.
        #expect(h.transport.versions == ["lanpush.v2"])
        #expect(h.transport.arrayFrames >= 2, "the two starts at least: \(h.transport.arrayFrames) array frames")
        let state = await h.client.state
        #expect(state.activities["ev-charging"]?.state["critical_text"] == "100%")
        let template = state.activities["supercharger"]?.state["template"]
        #expect(template?["progress"]?["value"] == 1)
        #expect(template?["progress"]?["segments"]?.arrayValue?[1]["track_fill"] == "hatched")
        await h.stop()
        await gw.dispose()
    }

    @Test func aConnectionKilledMidStreamResumesByReplayAndConverges() async throws {
        let gw = try await gateway()
        let proxy = try await TCPProxy(targetPort: gw.port).listen()
        let h = Harness(gw, "phone", url: URL(string: "ws://127.0.0.1:\(proxy.port)/v1/stream")!)
        await h.start()
        try await h.live()
        for i in 0..<120 {
            try await gw.push("phone", Payloads.counter(i, tags: 4, total: 120))
            if i == 40 || i == 80 {
                try await h.live()
                #expect(proxy.cut() > 0)
            }
        }
        try await h.converged(with: gw)
        #expect(await h.log.replays.count >= 2, "resumed by replay")
        #expect(h.transport.connections >= 3)
        proxy.close()
        await h.stop()
        await gw.dispose()
    }

    @Test func aCleanRestartResumesInTheSameEpoch() async throws {
        let gw = try await gateway()
        let h = Harness(gw, "phone")
        await h.start()
        try await h.live()
        for payload in Payloads.washer.prefix(2) { try await gw.push("phone", payload) }
        try await h.converged(with: gw)
        let before = await h.client.state
        await gw.stop()
        try await eventually { await h.log.statuses.contains { $0.status == .offline && $0.code == 1001 } }
        try await gw.start()
        // No resume history survives a restart: a client that was caught up gets an empty replay from its seq.
        try await eventually { await h.log.replays.contains(before.seq) }
        try await gw.push("phone", Payloads.washer[2])
        try await h.converged(with: gw)
        #expect(await h.client.state.epoch == before.epoch, "a clean stop keeps the epoch")
        await h.stop()
        await gw.dispose()
    }

    @Test func aKill9RestartGetsANewEpochsSnapshotAndConverges() async throws {
        let gw = try await gateway()
        let h = Harness(gw, "phone")
        await h.start()
        try await h.live()
        try await gw.push("phone", Payloads.ev(40))
        try await gw.push("phone", Payloads.washer[0])
        try await h.converged(with: gw)
        let epoch = await h.client.state.epoch
        await gw.stop(kill: true)
        try await gw.start()
        try await gw.push("phone", Payloads.ev(45))
        try await h.converged(with: gw)
        let state = await h.client.state
        #expect(state.epoch != epoch)
        #expect(await h.log.snapshots.last == state.epoch)
        #expect(state.activities["ev-charging"]?.state["progress"] == 45)
        await h.stop()
        await gw.dispose()
    }

    /// A phone-like keepalive goes in `auth`; the client knows what the gateway granted (held to its bounds).
    @Test func aLongerKeepaliveIsAskedForAndTheGrantedOneKnown() async throws {
        let gw = try await gateway()
        for (asked, granted) in [(120, 120), (3600, 300)] {
            let h = Harness(gw, "phone") { $0.keepalive = asked }
            await h.start()
            try await h.live()
            #expect(await h.client.keepalive == granted)
            await h.stop()
        }
        let h = Harness(gw, "phone")
        await h.start()
        try await h.live()
        #expect(await h.client.keepalive == 10, "the gateway's session.ping_interval, said in auth_ok")
        await h.stop()
        await gw.dispose()
    }

    @Test func aRejectedTokenStopsForGood() async throws {
        let gw = try await gateway()
        let h = Harness(url: gw.streamURL, token: "not-a-token")
        await h.start()
        try await eventually { await h.client.status == .authRejected }
        try await Task.sleep(for: .milliseconds(1500))
        #expect(h.transport.connections == 1, "one attempt, no retry")
        #expect(await h.log.authRejections.count == 1)
        await h.consumer.value  // the events ended
        await gw.dispose()
    }

    @Test func aSlowHandlerConvergesAndNeverHoldsMoreThanTheWindow() async throws {
        let gw = try await gateway(session: ["window": 32])
        let h = Harness(gw, "phone", handlerDelay: .milliseconds(100))
        await h.start()
        try await h.live()
        let updates = 150
        for i in 0..<updates { try await gw.push("phone", Payloads.counter(i, tags: 3, total: updates, title: "Slow")) }
        try await h.converged(with: gw, timeout: .seconds(40))
        #expect(h.transport.connections == 1, "the session was never closed (no ack timeout)")
        #expect(h.transport.maxUnacked <= 32, "held \(h.transport.maxUnacked) unacknowledged frames")
        #expect(h.transport.maxUnacked > 1, "the window was counted (v2 array frames included)")
        let handled = await h.log.activityChanges.count
        #expect(handled < updates, "merged while the handler was busy: \(handled) events for \(updates) updates")
        await h.stop()
        await gw.dispose()
    }

    @Test func aRestartedAppResumesFromItsFileStoreByReplay() async throws {
        let gw = try await gateway()
        let dir = gw.dir.appendingPathComponent("app")
        let first = Harness(url: gw.streamURL, token: gw.tokens["phone"]!, store: FileStore(directory: dir))
        await first.start()
        try await first.live()
        try await gw.push("phone", Payloads.ev(10))
        try await gw.push("phone", ["title": "Door", "message": "Front door opened", "data": ["tag": "door"]])
        try await first.converged(with: gw)
        try await eventually { await first.client.state.notifications.count == 1 }
        let held = await first.client.state
        await first.stop()
        #expect(try FileStore(directory: dir).load(key: "lanpush:\(gw.streamURL.absoluteString)") == held)
        try await gw.push("phone", Payloads.ev(20))

        let second = Harness(url: gw.streamURL, token: gw.tokens["phone"]!, store: FileStore(directory: dir))
        await second.start()
        try await second.converged(with: gw)
        #expect(await second.log.replays == [held.seq], "resumed by replay from the stored point")
        #expect(await second.log.snapshots.isEmpty)
        #expect(await second.client.state.notifications.map(\.message) == ["Front door opened"])
        await second.stop()
        await gw.dispose()
    }

    @Test func registerAndAnObserverThatNeverAcks() async throws {
        let gw = try await gateway()
        let observer = Harness(url: gw.streamURL, token: gw.viewer, role: .observer(device: "phone"), store: nil)
        await observer.start()
        try await observer.live()
        let device = Harness(gw, "phone") {
            $0.registration = Registration(pushToken: "tok-phone", pushURL: "https://relay.invalid/relay", supportsLiveActivities: true)
        }
        await device.start()
        try await device.live()
        try await eventually {
            await device.log.events.contains { if case .registered("tok-phone", true) = $0 { true } else { false } }
        }
        try await gw.push("phone", Payloads.ev(70))
        try await device.converged(with: gw)
        try await eventually { await observer.client.devices["phone"]?.activities == device.client.state.activities }
        let (_, listed) = try await gw.request("GET", "/v1/devices")
        let phone = listed?["devices"]?.arrayValue?.first { $0["id"] == "phone" }
        #expect(phone?["sessions"] == 1, "the observer does not count as a session of the device")
        #expect(phone?["supports_live_activities"] == true)
        #expect(observer.transport.acks.isEmpty, "observers never ack")
        #expect(!device.transport.acks.isEmpty)
        await observer.stop()
        await device.stop()
        await gw.dispose()
    }
}
