import Testing

@testable import LanpushCore

/// What HA really sends is valid input, and the phone's behaviour is the spec: the regressions found when lanpush
/// was put in a phone's push path (opaque tags, stale dates per update, clear_notification that ends and dismisses,
/// companion-app commands, dismissing an ended activity, unbounded numbers).
@Suite struct DropInConformanceTests {
    let t0 = PayloadFixture.now

    func accept(_ text: String, now: Double? = nil) throws(FieldError) -> AcceptedPush {
        try PayloadInterpreter.accept(NotifyMessage.decode(PayloadFixture.object(text)), now: now ?? t0)
    }

    // MARK: Tags

    @Test(arguments: ["camera.front_door", "Front door: motion", "a:b:c", String(repeating: "x", count: 300), "42"])
    func aNotifyMessageTagIsOpaque(tag: String) throws {
        let command = try PayloadFixture.command(#"{"message":"Motion","data":{"tag":\#(JSONValue.string(tag).serialized())}}"#)
        guard case .notification(let n) = command else {
            Issue.record("expected a plain notification, got \(command)")
            return
        }
        #expect(n.tag == tag)
    }

    @Test func aNumericPlainTagKeepsItsSpelling() throws {
        guard case .notification(let n) = try PayloadFixture.command(#"{"message":"m","data":{"tag":42}}"#) else {
            Issue.record("expected a notification")
            return
        }
        #expect(n.tag == "42")
    }

    @Test func aClearOfAnOpaqueTagOnlyClears() throws {
        let command = try PayloadFixture.command(#"{"message":"clear_notification","data":{"tag":"camera.front_door"}}"#)
        #expect(command == .end(EndRequest(tag: "camera.front_door", dismissal: .immediate)))
        var ledger = DeviceLedger(deviceId: "d", epoch: "e")
        #expect(ledger.apply(command, now: t0).map(\.kind) == [.clear])
    }

    @Test func aLiveUpdateStillNeedsTheActivityTagRule() {
        let error = PayloadFixture.rejection(#"{"message":"m","data":{"tag":"camera.front_door","live_update":true}}"#)
        #expect(error?.field == "data.tag" && error?.rule == "pattern")
    }

    // MARK: Stale dates belong to each update

    @Test(arguments: [#""stale_date":null"#, #""other":1"#])
    func anUpdateOfAStaleActivityWithoutAStaleDateMakesItActive(key: String) throws {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e")
        _ = ledger.apply(try PayloadFixture.command(
            #"{"title":"W","message":"a","data":{"tag":"w","live_update":true,"stale_date":\#(t0 + 2)}}"#), now: t0)
        #expect(ledger.advance(to: t0 + 3).map(\.kind) == [.lifecycle])
        #expect(ledger.activities["w"]?.phase == .stale)
        _ = ledger.apply(try PayloadFixture.command(#"{"message":"b","data":{"tag":"w","live_update":true,\#(key)}}"#), now: t0 + 4)
        #expect(ledger.activities["w"]?.phase == .active)
        #expect(ledger.activities["w"]?.staleDate == nil)
        #expect(ledger.nextDeadline == t0 + Lifecycle.maximumDuration)
    }

    @Test func aStaleDateInMillisecondsIsReadAsMilliseconds() throws {
        let update = try PayloadFixture.liveUpdate(#"{"message":"a","data":{"tag":"w","live_update":true,"stale_date":\#((t0 + 60) * 1000)}}"#)
        #expect(update.staleDate == t0 + 60)
    }

    @Test(arguments: ["1e20", "-5", "1e300", "\"1e17\""])
    func anAbsurdDateIsRefusedNamingTheField(value: String) {
        let error = PayloadFixture.rejection(#"{"message":"a","data":{"tag":"w","live_update":true,"stale_date":\#(value)}}"#)
        #expect(error?.field == "data.stale_date" && error?.rule == "range")
        let end = PayloadFixture.rejection(#"{"message":"clear_notification","data":{"tag":"w","dismissal_date":\#(value)}}"#)
        #expect(end?.field == "data.dismissal_date" && end?.rule == "range")
    }

    @Test func relevanceKeepsItsOrder() throws {
        let a = try PayloadFixture.liveUpdate(#"{"message":"a","data":{"tag":"a","live_update":true,"relevance_score":50}}"#)
        let b = try PayloadFixture.liveUpdate(#"{"message":"b","data":{"tag":"b","live_update":true,"relevance_score":100}}"#)
        #expect(a.relevanceScore == 50 && b.relevanceScore == 100)
    }

    // MARK: clear_notification ends and dismisses at once

    @Test func clearNotificationEndsAndDismissesAtOnceAndClearsTheTag() throws {
        var h = SessionHarness()
        h.apply(.liveUpdate(LiveUpdate(tag: "washer", title: "Washer", state: ["message": "Rinsing", "progress": 10])))
        h.read()
        h.apply(try PayloadFixture.command(#"{"message":"clear_notification","data":{"tag":"washer"}}"#))
        let frames = h.read().map(\.json)
        #expect(frames.count == 2)
        #expect(frames.first?["type"] == "end" && frames.first?["phase"] == "dismissed")
        #expect(frames.first?["dismissal_date"] == .number(t0.rounded()))
        #expect(frames.last == ["type": "clear", "seq": 3, "tag": "washer"])
        #expect(h.ledger.visibleActivities.isEmpty)
    }

    @Test func aClearNamingADismissalDateKeepsTheCardUntilThen() throws {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e")
        _ = ledger.apply(.liveUpdate(LiveUpdate(tag: "w", state: ["message": "x"])), now: t0)
        let clear = try PayloadFixture.command(#"{"message":"clear_notification","data":{"tag":"w","dismissal_date":\#(t0 + 600)}}"#)
        #expect(ledger.apply(clear, now: t0 + 1).map(\.kind) == [.end, .clear])
        #expect(ledger.activities["w"]?.phase == .ended && ledger.activities["w"]?.dismissalDate == t0 + 600)
    }

    // MARK: An ended activity can still be dismissed

    @Test func anEndedActivityTakesANewDismissal() {
        var h = SessionHarness()
        h.apply(.liveUpdate(LiveUpdate(tag: "w", title: "W", state: ["message": "x"])))
        #expect(h.end("w", dismissal: .default)?.kind == .end)
        h.read()
        h.now += 10
        #expect(h.end("w", dismissal: .after(30))?.kind == .end)
        #expect(h.read().map(\.json) == [["type": "end", "seq": 3, "tag": "w", "patch": [:], "dismissal_date": .number(h.now + 30)]])
        #expect(h.end("w", dismissal: .immediate)?.kind == .end)
        #expect(h.read().map(\.json) == [["type": "lifecycle", "seq": 4, "tag": "w", "phase": "dismissed"]])
        #expect(h.end("w", dismissal: .immediate) == nil)
    }

    @Test func anEndFrameCarriesTheStaleDateAndRelevanceTheEndSet() throws {
        var h = SessionHarness()
        h.apply(.liveUpdate(LiveUpdate(tag: "w", title: "W", state: ["message": "x"])))
        h.read()
        h.apply(.end(EndRequest(tag: "w", dismissal: .after(60), staleDate: t0 + 30, relevanceScore: 75)))
        let end = h.read().first?.json
        #expect(end?["stale_date"] == .number(t0 + 30) && end?["relevance_score"] == 75)
    }

    // MARK: Companion-app commands and routing options

    @Test(arguments: ["request_location_update", "clear_badge", "update_complications", "update_widgets", "remove_channel", "TTS",
                      "command_dnd", "command_volume_level", "command_activity", "command_webview"])
    func aCompanionCommandIsACommand(name: String) throws {
        let command = try PayloadFixture.command(#"{"message":"\#(name)","data":{"tag":"x","live_update":true}}"#)
        guard case .command(let c) = command else {
            Issue.record("expected a command, got \(command)")
            return
        }
        #expect(c.name == name)
        var ledger = DeviceLedger(deviceId: "d", epoch: "e")
        #expect(ledger.apply(command, now: t0).isEmpty)
    }

    @Test func theRoutingOptionIsReadValidatedAndStripped() throws {
        let accepted = try accept(#"{"message":"Door","data":{"tag":"door","lanpush":{"path":"both"}}}"#)
        #expect(accepted.path == .both)
        guard case .notification(let n) = accepted.command else {
            Issue.record("expected a notification")
            return
        }
        #expect(n.data["lanpush"] == nil && n.data["tag"] == "door")
        #expect(throws: FieldError.self) { try accept(#"{"message":"m","data":{"lanpush":{"path":"mqtt"}}}"#) }
        do {
            _ = try accept(#"{"message":"m","data":{"lanpush":{"route":"lan"}}}"#)
            Issue.record("an unknown option key must be refused")
        } catch {
            #expect(error.field == "data.lanpush.route" && error.rule == "unknown_key")
        }
        let body = RelayBody.forwarding(PayloadFixture.object(#"{"message":"m","data":{"lanpush":{"path":"relay"},"x":1}}"#), acceptedAt: t0)
        #expect(body.json["data"] == ["x": 1])
    }

    @Test func aDeviceSettingRoutesNotificationsAndAMessageOverridesIt() {
        #expect(NotificationRouting.auto.path(override: nil, hasRelayCredentials: true) == .relay)
        #expect(NotificationRouting.auto.path(override: nil, hasRelayCredentials: false) == .lan)
        #expect(NotificationRouting.lan.path(override: .both, hasRelayCredentials: true) == .both)
        #expect(NotificationRouting.relay.path(override: nil, hasRelayCredentials: false) == .relay)
    }

    @Test func aLiveUpdateWithoutATitleIsAcceptedWithAWarning() throws {
        let accepted = try accept(#"{"message":"Rinsing","data":{"tag":"w","live_update":true}}"#)
        #expect(accepted.warnings.map(\.field) == ["title"])
        #expect(try accept(#"{"title":"W","message":"Rinsing","data":{"tag":"w","live_update":true}}"#).warnings.isEmpty)
        #expect(try accept(#"{"message":"plain"}"#).warnings.isEmpty)
    }

    // MARK: The notification queue is bounded in bytes and never silent

    @Test func aFullQueueDropsTheOldestAndTellsASessionThatMissedThem() {
        var h = SessionHarness(queueBytes: 4096)
        h.read()
        let big = String(repeating: "x", count: 1000)
        for i in 0..<10 { h.apply(.notification(NotifyMessage(message: "\(i) \(big)"))) }
        #expect(h.ledger.notificationBytes <= 4096)
        #expect(h.ledger.droppedNotificationTotal == UInt64(10 - h.ledger.notifications.count))
        let frames = h.read().map(\.json)
        let dropped = Int(h.ledger.droppedNotificationTotal)
        #expect(frames.first == ["type": "notifications_dropped", "count": .number(Double(dropped)), "through": .number(Double(dropped))])
        #expect(frames.dropFirst().map { $0["seq"] } == h.ledger.notifications.map { .number(Double($0.seq)) })
        // A session that starts afresh never had them: it is not told.
        var fresh = Coalescer.subscribe(ledger: h.ledger, resume: nil, window: 32).0
        #expect(fresh.next(ledger: &h.ledger, now: h.now)?.json["type"] != "notifications_dropped")
        // One resuming from before the drop is.
        var resumed = Coalescer.subscribe(ledger: h.ledger, resume: ("e1", 0), window: 32).0
        #expect(resumed.next(ledger: &h.ledger, now: h.now)?.json["type"] == "notifications_dropped")
    }

    @Test func aSessionThatWasSentThemHearsNothing() {
        var h = SessionHarness(queueBytes: 4096)
        h.read()
        h.received = []
        let big = String(repeating: "x", count: 1000)
        for i in 0..<10 {
            h.apply(.notification(NotifyMessage(message: "\(i) \(big)")))
            h.read(ack: false)
        }
        #expect(h.ledger.droppedNotificationTotal > 0)
        #expect(h.received.map { $0.json["type"] } == Array(repeating: "notification", count: 10))
    }

    // MARK: A snapshot needs no ack

    @Test func aSnapshotIsNotAwaitingAnAck() {
        var ledger = DeviceLedger(deviceId: "d", epoch: "e")
        var (c, start) = Coalescer.subscribe(ledger: ledger, resume: nil, window: 32)
        #expect(start == .snapshot)
        #expect(c.next(ledger: &ledger, now: t0)?.json["type"] == "snapshot")
        #expect(c.oldestUnacknowledgedSentAt == nil && c.unacknowledged == 0)
        #expect(c.takeSynced(queued: ledger.notifications) == 0)
    }

    // MARK: Android relay pacing

    @Test func androidItemsSkipApplesRenderIntervalAndStartBudget() {
        var pacer = RelayPacer(limits: RelayLimits(minUpdateInterval: 15, startsPerHour: 1))
        let url = "http://relay/api/sendPush/android/v1"
        func item(_ kind: RelayItem.Kind, _ tag: String, _ seq: UInt64) -> RelayItem {
            RelayItem(device: "pixel", tag: tag, kind: kind, url: url, body: ["message": .string("m\(seq)")], seq: seq)
        }
        #expect(item(.start, "a", 1).isAndroid)
        var sent = 0
        for (i, kind) in [RelayItem.Kind.start, .update, .update].enumerated() {
            pacer.submit(item(kind, "a", UInt64(i + 1)), now: t0 + Double(i))
            for due in pacer.due(now: t0 + Double(i)) {
                sent += 1
                pacer.complete(due, outcome: .success(remaining: nil, resetsAt: nil), now: t0 + Double(i))
            }
        }
        pacer.submit(item(.start, "b", 9), now: t0 + 5)
        sent += pacer.due(now: t0 + 5).count
        #expect(sent == 4)
        let apple = RelayItem(device: "iphone", tag: "a", kind: .start, url: "http://relay/api/sendPushNotification",
                              body: ["registration_info": ["app_id": "io.robbie.HomeAssistant"]], seq: 1)
        #expect(!apple.isAndroid)
        let byAppId = RelayItem(device: "p", tag: nil, kind: .notification, url: "http://x/",
                                body: ["registration_info": ["app_id": "io.homeassistant.companion.android"]], seq: 1)
        #expect(byAppId.isAndroid)
    }
}

/// One device session over a ledger with the gateway's fan-out rule: every change is noted, frames are read as a
/// fast client would.
struct SessionHarness {
    var ledger: DeviceLedger
    var coalescer: Coalescer
    var now = PayloadFixture.now
    var received: [OutboundEvent] = []

    init(queueBytes: Int = DeviceLedger.defaultNotificationQueueBytes) {
        ledger = DeviceLedger(deviceId: "phone", epoch: "e1", notificationQueueBytes: queueBytes)
        coalescer = Coalescer.subscribe(ledger: ledger, resume: nil, window: 32).0
    }

    mutating func apply(_ command: PushCommand) {
        for change in ledger.apply(command, now: now) { coalescer.note(change) }
    }

    /// Ends `tag` on the ledger directly (as the API's end does) and notes the change.
    @discardableResult
    mutating func end(_ tag: String, dismissal: DismissalPolicy) -> Change? {
        let change = ledger.end(tag: tag, dismissal: dismissal, now: now)
        if let change { coalescer.note(change) }
        return change
    }

    @discardableResult
    mutating func read(ack: Bool = true) -> [OutboundEvent] {
        var frames = [OutboundEvent]()
        while let frame = coalescer.next(ledger: &ledger, now: now) { frames.append(frame) }
        _ = coalescer.takeSynced(queued: ledger.notifications)
        if ack { coalescer.acknowledge(coalescer.lastSentSeq) }
        received += frames
        return frames
    }
}
