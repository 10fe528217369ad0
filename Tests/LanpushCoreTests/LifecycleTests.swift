import Synchronization
import Testing

@testable import LanpushCore

@Suite struct LifecycleTests {
    let t0 = 1_700_000_000.0

    func update(_ message: String, title: String? = "Washer", stale: Double? = nil, relevance: Double? = nil) -> PushCommand {
        .liveUpdate(LiveUpdate(tag: "washer", title: title, state: ["message": .string(message)], staleDate: stale, relevanceScore: relevance))
    }

    @Test func startThenUpdateKeepsTheTitleAndReplacesTheState() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        #expect(ledger.apply(update("Cycle started"), now: t0).map(\.kind) == [.start])
        #expect(ledger.apply(update("Rinsing", title: "Other"), now: t0 + 10).map(\.kind) == [.update])
        let a = ledger.activities["washer"]!
        #expect(a.attributes.title == "Washer")
        #expect(a.attributes.startedAt == t0)
        #expect(a.state == ["message": "Rinsing"])
        #expect(a.generation == 1 && a.lastSeq == 2 && ledger.seq == 2)
    }

    @Test func anUpdateChangesTheActivityInPlaceAndLeavesCopiesAlone() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        _ = ledger.apply(update("Cycle started"), now: t0)
        let box = ledger.activities["washer"]!.boxIdentity
        _ = ledger.apply(update("Rinsing"), now: t0 + 10)
        #expect(ledger.activities["washer"]!.boxIdentity == box)
        // A copy held elsewhere (a snapshot, the store's queue) keeps what it had; the ledger moves on in a box of its own.
        let held = ledger.activities["washer"]!
        _ = ledger.apply(update("Spinning"), now: t0 + 20)
        #expect(held.state == ["message": "Rinsing"] && held.lastSeq == 2)
        #expect(ledger.activities["washer"]!.state == ["message": "Spinning"])
        #expect(ledger.activities["washer"]!.boxIdentity != held.boxIdentity)
        var twin = Activity(
            generation: held.generation, attributes: held.attributes, state: held.state, updatedAt: held.updatedAt,
            lastSeq: held.lastSeq)
        #expect(twin == held && twin.hashValue == held.hashValue)
        twin.phase = .stale
        #expect(twin != held && held.phase == .active)
    }

    /// The size an activity keeps with its state (what its history entries are weighed by) is the state's JSON size
    /// however the state was set: by the update that counted it once, by assignment, at creation.
    @Test func anActivityKeepsItsStatesSizeWithIt() {
        func size(_ state: ContentState) -> Int { JSONValue.object(state).serializedBytes().count }
        var live = LiveUpdate(tag: "washer", state: ["message": "Cycle started"])
        #expect(live.stateBytes == size(live.state))
        live.state = ["message": "Rinsing \"now\"", "progress": 40, "nested": ["é": [1, 2.5, true, .null]]]
        #expect(live.stateBytes == size(live.state))
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        _ = ledger.apply(update("Cycle started"), now: t0)
        _ = ledger.apply(.liveUpdate(live), now: t0 + 1)
        var activity = ledger.activities["washer"]!
        #expect(activity.stateBytes == size(live.state))
        // The history weighs the state an update replaced by the size kept with it, as counting it would.
        _ = ledger.apply(update("Spinning"), now: t0 + 2)
        let entry = ledger.history.changes(after: 2, current: 3)!.last!
        #expect(entry.bytes == ResumeHistory.Entry(seq: 3, tag: "washer", before: activity.view).bytes)
        activity.state = ["message": "Done"]
        #expect(activity.stateBytes == size(["message": "Done"]))
        let made = Activity(generation: 1, attributes: activity.attributes, state: live.state, updatedAt: t0, lastSeq: 1)
        #expect(made.stateBytes == size(live.state))
    }

    @Test func endKeepsFinalStateAndDefaultPolicyKeepsItVisibleFourHours() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        _ = ledger.apply(update("Done"), now: t0)
        #expect(ledger.apply(.end(EndRequest(tag: "washer", dismissal: .default)), now: t0 + 5).map(\.kind) == [.end, .clear])
        let a = ledger.activities["washer"]!
        #expect(a.phase == .ended && a.state == ["message": "Done"])
        #expect(a.dismissalDate == t0 + 5 + 4 * 3600)
        #expect(ledger.advance(to: t0 + 5 + 4 * 3600 - 1).isEmpty)
        #expect(ledger.advance(to: t0 + 5 + 4 * 3600).map(\.kind) == [.lifecycle])
        #expect(ledger.activities["washer"]!.phase == .dismissed)
    }

    @Test(arguments: [(nil as Double?, 4 * 3600.0), (0, 0), (-3, 0), (90, 90)])
    func dismissalPolicies(interval: Double?, visibleFor: Double) {
        let policy = DismissalPolicy(interval: interval)
        #expect(policy.dismissalDate(endedAt: t0) == t0 + visibleFor)
    }

    @Test func immediateDismissalEndsStraightIntoDismissed() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        _ = ledger.apply(update("x"), now: t0)
        _ = ledger.end(tag: "washer", dismissal: .immediate, now: t0 + 1)
        #expect(ledger.activities["washer"]!.phase == .dismissed)
        #expect(ledger.visibleActivities.isEmpty)
    }

    /// The relay body rides on the activity it came with: set by the change that brought it (in place), kept by one
    /// that brings none, replaced by a new start and by `setRelayBody`, copied with the box a copy holds — and never
    /// part of what the activity is (equality, hash).
    @Test func theRelayBodyRidesOnTheActivityItCameWith() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        _ = ledger.apply(update("Cycle started"), now: t0, relayBody: DeferredJSON(["message": "Cycle started"]))
        #expect(ledger.activities["washer"]?.relayBody == ["message": "Cycle started"])
        let box = ledger.activities["washer"]!.boxIdentity
        _ = ledger.apply(update("Rinsing"), now: t0 + 1, relayBody: DeferredJSON(["message": "Rinsing"]))
        #expect(ledger.activities["washer"]!.boxIdentity == box)
        #expect(ledger.activities["washer"]?.relayBody == ["message": "Rinsing"])
        _ = ledger.apply(update("Spinning"), now: t0 + 2)
        #expect(ledger.activities["washer"]?.relayBody == ["message": "Rinsing"])
        let held = ledger.activities["washer"]!
        _ = ledger.apply(.end(EndRequest(tag: "washer", dismissal: .after(60))), now: t0 + 3, relayBody: DeferredJSON(["message": "clear_notification"]))
        #expect(ledger.activities["washer"]?.relayBody == ["message": "clear_notification"])
        #expect(held.relayBody == ["message": "Rinsing"])
        ledger.setRelayBody(DeferredJSON(["message": "cleared by the gateway"]), of: "washer")
        #expect(ledger.activities["washer"]?.relayBody == ["message": "cleared by the gateway"])
        _ = ledger.apply(update("Again"), now: t0 + 4, relayBody: DeferredJSON(["message": "Again"]))  // a new start over the ended one
        #expect(ledger.activities["washer"]?.phase == .active && ledger.activities["washer"]?.relayBody == ["message": "Again"])
        var twin = held
        twin.deferredRelayBody = DeferredJSON(["message": "other"])
        #expect(twin == held && twin.hashValue == held.hashValue && held.relayBody == ["message": "Rinsing"])
    }

    /// What the ledger keeps for the relay is built when a hand-over reads it, never on the way in: an update a LAN
    /// session acknowledges never has its relay body made.
    @Test func theRelayBodyIsBuiltOnlyWhenRead() {
        let builds = Atomic<Int>(0)
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        let body = DeferredJSON {
            builds.add(1, ordering: .relaxed)
            return ["message": "Cycle started"]
        }
        _ = ledger.apply(update("Cycle started"), now: t0, relayBody: body)
        _ = ledger.apply(update("Rinsing"), now: t0 + 1)
        #expect(builds.load(ordering: .relaxed) == 0)
        #expect(ledger.activities["washer"]?.hasRelayBody == true)
        #expect(ledger.activities["washer"]?.relayBody == ["message": "Cycle started"])
        #expect(builds.load(ordering: .relaxed) == 1)
    }

    /// The ledger keeps its next deadline until an activity changes: every kind of change moves it.
    @Test func theNextDeadlineFollowsEveryChangeOfTheActivities() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        #expect(ledger.nextDeadline == nil)
        _ = ledger.apply(update("x", stale: t0 + 60), now: t0)
        #expect(ledger.nextDeadline == t0 + 60)
        _ = ledger.apply(update("y", stale: t0 + 30), now: t0 + 1)  // an update in place, through the tag's slot
        #expect(ledger.nextDeadline == t0 + 30)
        #expect(ledger.advance(to: t0 + 31).map(\.kind) == [.lifecycle])  // stale: only the 8 h ceiling is left
        #expect(ledger.nextDeadline == t0 + Lifecycle.maximumDuration)
        _ = ledger.end(tag: "washer", dismissal: .after(50), now: t0 + 40)
        #expect(ledger.nextDeadline == t0 + 90)
        _ = ledger.dismissedByUser(tag: "washer", now: t0 + 50)
        #expect(ledger.nextDeadline == t0 + 50)  // dismissed: due at once, to be pruned
        #expect(ledger.pruneDismissed() == ["washer"])
        #expect(ledger.nextDeadline == nil)
    }

    @Test func staleDateMakesItStaleAndAnUpdateMakesItActiveAgain() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        _ = ledger.apply(update("x", stale: t0 + 60), now: t0)
        #expect(ledger.nextDeadline == t0 + 60)
        #expect(ledger.advance(to: t0 + 61).map(\.kind) == [.lifecycle])
        #expect(ledger.activities["washer"]!.phase == .stale)
        _ = ledger.apply(update("y", stale: t0 + 600), now: t0 + 70)
        #expect(ledger.activities["washer"]!.phase == .active)
        #expect(ledger.activities["washer"]!.staleDate == t0 + 600)
    }

    @Test func appleEndsActivitiesAfterEightHours() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        _ = ledger.apply(update("x"), now: t0)
        #expect(ledger.advance(to: t0 + 8 * 3600 - 1).isEmpty)
        #expect(ledger.advance(to: t0 + 8 * 3600).map(\.kind) == [.end])
        #expect(ledger.activities["washer"]!.phase == .ended)
    }

    @Test func liveUpdateAfterEndStartsANewActivity() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        _ = ledger.apply(update("a"), now: t0)
        _ = ledger.apply(.end(EndRequest(tag: "washer")), now: t0 + 1)
        #expect(ledger.apply(update("b", title: "New"), now: t0 + 2).map(\.kind) == [.start])
        let a = ledger.activities["washer"]!
        #expect(a.generation == 4 && a.attributes.startedAt == t0 + 2 && a.attributes.title == "New")
    }

    @Test func clearOfATagWithoutActivityClearsTheNotification() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        #expect(ledger.apply(.end(EndRequest(tag: "door")), now: t0).map(\.kind) == [.clear])
        #expect(ledger.notifications.count == 1)
    }

    func update(_ tag: String, _ message: String) -> PushCommand {
        .liveUpdate(LiveUpdate(tag: tag, title: tag, state: ["message": .string(message)]))
    }

    @Test func endAllAndUserDismissal() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1")
        _ = ledger.apply(update("a", "1"), now: t0)
        _ = ledger.apply(update("b", "2"), now: t0)
        _ = ledger.apply(update("c", "3"), now: t0)
        #expect(ledger.dismissedByUser(tag: "c", now: t0 + 1)?.kind == .lifecycle)
        #expect(ledger.endAll(dismissal: .after(60), now: t0 + 2).map(\.tag) == ["a", "b"])
        #expect(ledger.activities.values.map(\.phase).sorted { $0.rawValue < $1.rawValue } == [.dismissed, .ended, .ended])
        #expect(ledger.activities["a"]!.dismissalDate == t0 + 62)
        #expect(ledger.pruneDismissed() == ["c"])
    }

    @Test func notificationQueueIsBoundedInBytesOldestFirst() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e1", notificationQueueBytes: 4096)
        let text = String(repeating: "n", count: 1200)
        for i in 0..<5 { _ = ledger.apply(.notification(NotifyMessage(message: "\(i)\(text)")), now: t0) }
        #expect(ledger.notifications.map(\.seq) == [3, 4, 5])
        #expect(ledger.droppedNotificationTotal == 2 && ledger.droppedNotificationSeqs == [1, 2])
        #expect(ledger.notificationBytes == ledger.notifications.reduce(0) { $0 + $1.bytes })
        ledger.pruneNotifications(through: 4)
        #expect(ledger.notifications.map(\.seq) == [5])
        #expect(ledger.notificationBytes == ledger.notifications[0].bytes)
        // One notification larger than the whole queue still stays: the newest is never dropped.
        _ = ledger.apply(.notification(NotifyMessage(message: String(repeating: "x", count: 8000))), now: t0)
        #expect(ledger.notifications.map(\.seq) == [6])
    }
}
