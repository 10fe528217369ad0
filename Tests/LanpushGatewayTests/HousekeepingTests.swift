import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// What time does on the loop's tick: stale dates, Apple's 8 h ceiling, dismissals falling due (and dismissed
/// activities leaving the ledger and the store), and the confirm-id window.
@Suite struct HousekeepingTests {
    @Test func anActivityTurnsStaleAtItsStaleDateAndAnUpdateWithoutOneMakesItActive() throws {
        var config = TestGateway.defaultConfig()
        config.session.ackTimeout = 1000
        let gw = try TestGateway(config: config)
        let s = gw.connect("phone")
        let stale = gw.clock.now + 30
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking", ["stale_date": .number(stale)]))
        #expect(s.frames("start").first?["stale_date"] == .number(stale))
        gw.advance(by: 29.75)
        #expect(s.frames("lifecycle").isEmpty)
        gw.advance(by: 0.25)
        #expect(s.frames("lifecycle") == [["type": "lifecycle", "seq": 2, "tag": "oven", "phase": "stale"]])
        s.ack()
        #expect(gw.request(.get, "/v1/activities/oven").json["activities"]?.arrayValue?.first?["phase"] == "stale")
        // Each update carries its own stale date: one without has none, and the frame says so (`null`: absent would
        // mean "unchanged" to the client, which holds the old one).
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Still baking"))
        let update = try #require(s.frames("update").last)
        #expect(update["phase"] == "active" && update["stale_date"] == .null)
        let listed = gw.request(.get, "/v1/activities/oven").json["activities"]?.arrayValue?.first
        #expect(listed?["phase"] == "active" && listed?["stale_date"] == nil)
        s.read()
        #expect(s.phase("oven") == "active" && s.activities["oven"]?["stale_date"] == nil)
        // `null` says the same, and a stale date already past makes the update stale at once.
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking", ["stale_date": nil]))
        #expect(s.frames("update").last?["phase"] == "active")
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking", ["stale_date": .number(gw.clock.now - 1)]))
        #expect(s.frames("update").last?["phase"] == "stale")
        gw.advance(by: 60)
        #expect(s.frames("lifecycle").count == 1)
    }

    @Test func appleEndsEveryActivityEightHoursAfterItStartedAndItIsDismissedFourHoursLater() throws {
        let gw = try TestGateway()
        let started = gw.clock.now
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "Charging"))
        gw.advance(by: 8 * 3600 - 60, tick: 30)
        // An update does not move the ceiling: it counts from the start.
        gw.push(Payload.liveUpdate(["phone"], tag: "ev", message: "Still charging"))
        let s = gw.connect("phone")
        gw.advance(by: 59.75)
        #expect(s.frames("end").isEmpty)
        gw.advance(by: 0.25)
        let end = try #require(s.frames("end").first)
        #expect(end["dismissal_date"] == .number(started + 12 * 3600))
        s.ack()
        gw.advance(by: 4 * 3600 - 1, tick: 60)
        #expect(gw.request(.get, "/v1/activities/ev").status == 200)
        gw.advance(by: 1)
        #expect(s.frames.last?["type"] == "lifecycle" && s.frames.last?["phase"] == "dismissed")
        #expect(gw.request(.get, "/v1/activities/ev").status == 404)
    }

    @Test func anEndedActivityIsDismissedAtItsDismissalDateAndLeavesTheLedgerAndTheStore() throws {
        let gw = try TestGateway(store: true)
        let s = gw.connect("phone")
        gw.push(Payload.liveUpdate(["phone"], tag: "dryer", message: "Drying"))
        gw.push(Payload.liveUpdate(["phone"], tag: "oven", message: "Baking"))
        #expect(gw.request(.delete, "/v1/activities/dryer", query: [("dismissal", "60")]).status == 200)
        #expect(s.frames("end").first?["dismissal_date"] == .number(gw.clock.now + 60))
        s.ack()
        #expect(try gw.storedState().activities["phone"]?.first { $0.tag == "dryer" }?.phase == .ended)
        gw.advance(by: 59.75)
        #expect(gw.core.directory["phone"]?.ledger.activities["dryer"] != nil)
        gw.advance(by: 0.25)
        #expect(s.frames.last == ["type": "lifecycle", "seq": 4, "tag": "dryer", "phase": "dismissed"])
        #expect(gw.core.directory["phone"]?.ledger.activities["dryer"] == nil)
        #expect(try gw.storedState().activities["phone"]?.map(\.tag) == ["oven"])
        // Nothing of it comes back after a restart.
        try gw.restart()
        #expect(gw.request(.get, "/v1/activities").json["activities"]?.arrayValue?.map { $0["tag"] } == ["oven"])
    }

    @Test func aClearedActivityLeavesTheLedgerOnTheNextTick() throws {
        let gw = try TestGateway(store: true)
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Washing"))
        gw.push(Payload.push(["phone"], message: "clear_notification", data: ["tag": "washer"]))
        #expect(gw.core.directory["phone"]?.ledger.activities["washer"]?.phase == .dismissed)
        gw.advance(by: 0.25)
        #expect(gw.core.directory["phone"]?.ledger.activities.isEmpty == true)
        #expect(try gw.storedState().activities["phone"] ?? [] == [])
        // A later live update of the tag starts a new activity.
        let s = gw.connect("phone")
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Again"))
        #expect(s.frames("start").first?["state"] == ["message": "Again", "title": "Washer"])
    }

    /// libuv runs the timers that are due before it polls: the tick can fall between a clear_notification and the
    /// writes of the sessions it went to. They are still sent its end, marked dismissed, not a bare dismissal.
    @Test func aClearedActivityStaysUntilEverySessionWasSentItsEnd() throws {
        let gw = try TestGateway(store: true)
        let s = gw.connect("phone")
        let watcher = gw.observe("phone")
        gw.push(Payload.liveUpdate(["phone"], tag: "washer", message: "Cycle complete"))
        s.ack()
        gw.holdWrites = true
        gw.push(Payload.push(["phone"], message: "clear_notification", data: ["tag": "washer"]))
        gw.advance(by: 0.5)
        #expect(gw.core.directory["phone"]?.ledger.activities["washer"]?.phase == .dismissed)
        gw.holdWrites = false
        gw.turn()
        for session in [s, watcher] {
            let end = try #require(session.frames("end").last)
            #expect(end["tag"] == "washer" && end["phase"] == "dismissed")
            #expect(session.frames("lifecycle").isEmpty)
        }
        s.read()
        #expect(s.dismissed["washer"]?["state"] == ["message": "Cycle complete", "title": "Washer"] && s.activities["washer"] == nil)
        // Sent to all: it goes at the next tick, from the ledger and the store.
        gw.advance(by: 0.25)
        #expect(gw.core.directory["phone"]?.ledger.activities.isEmpty == true)
        #expect(try gw.storedState().activities["phone"] ?? [] == [])
    }

    @Test func confirmIdsAreForgottenAfterTheirWindow() throws {
        let gw = try TestGateway()
        gw.push(Payload.liveUpdate(["tablet"], tag: "a", message: "x"))
        gw.goneDevice("phone", pushToken: "tok-phone")
        gw.relayBody("tok-phone", message: "Door", extra: ["hass_confirm_id": "c-1"])
        gw.advance(by: 30)
        gw.relayBody("tok-phone", message: "Door", extra: ["hass_confirm_id": "c-2"])
        #expect(Set(gw.core.ingest.recentConfirmIds.keys) == ["phone|c-1", "phone|c-2"])
        gw.advance(by: 30)
        #expect(Set(gw.core.ingest.recentConfirmIds.keys) == ["phone|c-2"])
        gw.advance(by: 30)
        #expect(gw.core.ingest.recentConfirmIds.isEmpty)
    }
}
