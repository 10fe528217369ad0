import LanpushCore
import LanpushTesting
import Testing

@testable import LanpushGateway

/// Publisher sessions (docs/PROTOCOL.md, "Publishers"): the admin token only; every `push` through the one ingest as
/// `POST /v1/push` would take it; answers per item and a cumulative `accepted` that, with the store on, waits for the
/// commit; and the bounds that keep a publisher from making the gateway buffer without end.
@Suite struct PublisherTests {
    static func update(_ tag: String, _ message: String, targets: [String] = ["phone"]) -> JSONValue {
        Payload.liveUpdate(targets, tag: tag, message: message)
    }

    @Test func theAdminTokenOpensAPublisherSession() throws {
        let gw = try TestGateway()
        let p = gw.publisher()
        #expect(p.frames.last == ["type": "auth_ok", "role": "publisher", "version": "lanpush.v1", "window": 1024])
    }

    @Test func thePublisherSubprotocolCarriesAPublisherStream() throws {
        let gw = try TestGateway()
        let phone = gw.connect("phone")
        let p = gw.publisher(subprotocol: PublisherStream.subprotocol)
        #expect(p.frames.last == ["type": "auth_ok", "role": "publisher", "version": "lanpush.v1", "window": 1024])
        p.push(Self.update("washer", "Washing"))
        #expect(p.frames.last == ["type": "accepted", "through": 1])
        phone.read()
        #expect(phone.state("washer")?["message"] == "Washing")
    }

    /// The publisher subprotocol's large receive buffer is for streams: a device or observer on it is refused, without
    /// counting as a failed authentication (its token may be good).
    @Test(arguments: [
        ["type": "auth", "token": .string(TestGateway.token(for: "phone"))],
        ["type": "auth", "token": .string(TestGateway.viewerToken), "role": "observer"],
    ] as [JSONValue])
    func onlyAPublisherAuthenticatesOnThePublisherSubprotocol(_ auth: JSONValue) throws {
        var config = TestGateway.defaultConfig()
        config.limits.authFailures = 1
        let gw = try TestGateway(config: config)
        let s = gw.open(subprotocol: PublisherStream.subprotocol)
        s.send(auth)
        #expect(s.frames.last == ["type": "auth_invalid", "message": "the lanpush.publisher subprotocol is for publishers"])
        #expect(s.closeCode == 4001)
        #expect(gw.connect("phone").frames("auth_ok").count == 1)
    }

    @Test(arguments: [TestGateway.token(for: "phone"), TestGateway.viewerToken])
    func aDeviceOrViewerTokenIsRefusedWithoutCountingAsAFailure(_ token: String) throws {
        var config = TestGateway.defaultConfig()
        config.limits.authFailures = 1
        let gw = try TestGateway(config: config)
        let p = gw.publisher(token: token)
        #expect(p.frames.last?["type"] == "auth_invalid")
        #expect(p.frames.last?["message"] == "a publisher needs the admin token")
        #expect(p.closeCode == 4001)
        // A known token used for the wrong thing does not lock the address out.
        #expect(gw.connect("phone").frames("auth_ok").count == 1)
    }

    @Test func aWrongTokenIsAFailedAuthentication() throws {
        var config = TestGateway.defaultConfig()
        config.limits.authFailures = 1
        let gw = try TestGateway(config: config)
        #expect(gw.publisher(token: "nope-nope-nope").closeCode == 4001)
        #expect(gw.connect("phone").closeCode == 4029)
    }

    @Test func itemsReachDeviceSessionsAndAreAcceptedAtTheEndOfTheTurn() throws {
        let gw = try TestGateway()
        let phone = gw.connect("phone")
        let p = gw.publisher()
        p.push(Self.update("washer", "Washing"), id: "w-1")
        #expect(p.frames.last == ["type": "accepted", "through": 1])
        phone.ack()
        p.push(Self.update("washer", "Rinsing"))
        p.push(Payload.push(["phone"], title: "Door", message: "Front door opened"))
        #expect(p.frames.last == ["type": "accepted", "through": 3])
        phone.read()
        #expect(phone.state("washer")?["message"] == "Rinsing")
        #expect(phone.notifications.count == 1)
        #expect(p.frames("rejected").isEmpty && p.frames("warning").isEmpty)
    }

    @Test func aRejectedItemIsNamedWithItsFieldAndChangesNothing() throws {
        let gw = try TestGateway()
        let phone = gw.connect("phone")
        let p = gw.publisher()
        p.push(Self.update("washer", "Washing"))
        p.push(Payload.liveUpdate(["phone"], tag: "washer", message: "x", ["progress": "lots"]), id: 42)
        p.push(Self.update("washer", "Spinning", targets: ["fridge"]), id: "no-such")
        p.send(text: "{not json")
        p.push(Self.update("washer", "Rinsing"))
        let rejected = p.frames("rejected")
        #expect(rejected.count == 3)
        #expect(rejected[0]["item"] == 2 && rejected[0]["id"] == 42 && rejected[0]["field"] == "data.progress")
        #expect(rejected[1] == [
            "type": "rejected", "item": 3, "id": "no-such", "field": "targets", "rule": "exists",
            "message": "targets: no such device",
        ])
        #expect(rejected[2]["item"] == 4 && rejected[2]["rule"] == "json")
        #expect(p.frames.last == ["type": "accepted", "through": 5])
        phone.read()
        #expect(phone.state("washer")?["message"] == "Rinsing")
        #expect(gw.device("phone")?["seq"] == 2, "only the two valid items took a seq")
    }

    /// Every kind of wrong frame between valid ones: each is rejected as its own item, the valid ones are applied in
    /// order and the session stays open.
    @Test func wrongFramesBetweenValidOnesLoseNothing() throws {
        let gw = try TestGateway()
        let phone = gw.connect("phone")
        let p = gw.publisher()
        let wrong: [String] = [
            "", "null", "[]", "\"push\"", #"{"type":"push","targets":{"a":1},"message":"x"}"#,
            #"{"type":"push","targets":["phone"],"message":"x","data":{"tag":"washer","live_update":true,"progress":"#
                + String(repeating: "[", count: 10_000) + "}}",
            #"{"type":"push","id":1e300,"message":"x"}"#, #"{"type":"push","targets":["phone"],"data":[]}"#,
            #"{"type":"\#(String(repeating: "x", count: 60_000))"}"#, "{\"type\":\"push\",\"message\":\"\u{FFFF}\"",
        ]
        var valid = 0
        for text in wrong {
            p.push(Self.update("washer", "m\(valid)"))
            valid += 1
            p.send(text: text)
        }
        p.push(Self.update("washer", "last"))
        let rejected = p.frames("rejected")
        #expect(rejected.map(\.["item"]) == (0..<wrong.count).map { .number(Double(2 * $0 + 2)) })
        #expect(rejected.allSatisfy { ($0["message"]?.stringValue?.utf8.count ?? 0) <= PublisherStream.maxMessageBytes })
        #expect(p.frames.last == .object(["type": "accepted", "through": .number(Double(2 * wrong.count + 1))]))
        #expect(p.closeCode == nil)
        phone.read()
        #expect(phone.state("washer")?["message"] == "last")
        #expect(gw.device("phone")?["seq"] == .number(Double(valid + 1)), "every valid item and only those took a seq")
    }

    @Test func unknownTargetsBesideKnownOnesAreAWarning() throws {
        let gw = try TestGateway()
        let p = gw.publisher()
        p.push(Self.update("washer", "Washing", targets: ["phone", "fridge"]), id: "w")
        #expect(p.frames("warning") == [["type": "warning", "item": 1, "id": "w", "field": "targets", "rule": "exists", "message": "no such device: 'fridge'"]])
        #expect(p.frames.last == ["type": "accepted", "through": 1])
    }

    @Test func aPingIsAnsweredAndIsNotAnItem() throws {
        let gw = try TestGateway()
        let p = gw.publisher()
        p.send(["type": "ping"])
        #expect(p.frames.last == ["type": "pong"])
        p.push(Self.update("washer", "Washing"))
        #expect(p.frames.last == ["type": "accepted", "through": 1])
    }

    /// With the store on, an accept means committed, as a 2xx does.
    @Test func withTheStoreOnAnItemIsAcceptedOnlyOnceItsCommitCompleted() throws {
        let gw = try TestGateway(store: true)
        gw.holdCommits = true
        let phone = gw.connect("phone")
        let p = gw.publisher()
        p.push(Self.update("washer", "Washing"))
        phone.read()
        #expect(phone.state("washer")?["message"] == "Washing", "LAN delivery does not wait for the commit")
        p.push(Self.update("washer", "Rinsing"))
        #expect(p.frames("accepted").isEmpty)
        #expect(gw.pendingCommits == 2)
        gw.completeCommits()
        #expect(p.frames("accepted").last == ["type": "accepted", "through": 2])
        let stored = try gw.storedState()
        #expect(stored.activities["phone"]?.first?.state["message"] == "Rinsing")
    }

    /// A turn that stored nothing (a rejected item, a ping) is "committed" at its end; the accept must still wait for
    /// the earlier turns' commits, or it would claim an item stored that is not.
    @Test func anAcceptNeverOvertakesAnEarlierItemsCommit() throws {
        let gw = try TestGateway(store: true)
        gw.holdCommits = true
        let p = gw.publisher()
        p.push(Self.update("washer", "Washing"))
        p.push(Self.update("washer", "Spinning", targets: ["fridge"]))
        p.send(["type": "ping"])
        #expect(p.frames("rejected").map(\.["item"]) == [2])
        #expect(p.frames("accepted").isEmpty, "item 1 is not committed yet")
        gw.completeCommits()
        #expect(p.frames("accepted") == [["type": "accepted", "through": 2]])
        p.push(Self.update("washer", "Rinsing", targets: ["fridge"]))
        #expect(p.frames("accepted").last == ["type": "accepted", "through": 3])
    }

    @Test func aPublisherThatOutrunsItsCommitsIsNotReadUntilTheyCatchUp() throws {
        let gw = try TestGateway(store: true)
        gw.holdCommits = true
        let p = gw.publisher()
        for i in 0..<1023 { p.push(Self.update("t\(i % 10)", "m\(i)")) }
        #expect(!p.transport.inputPaused)
        p.push(Self.update("t0", "last"))
        #expect(p.transport.inputPaused, "a window of items waits for its commit")
        gw.completeCommits()
        #expect(!p.transport.inputPaused)
        #expect(p.frames.last == ["type": "accepted", "through": 1024])
    }

    @Test func aPublisherThatDoesNotReadItsAnswersIsNotRead() throws {
        let gw = try TestGateway()
        let p = gw.publisher()
        p.transport.choked = true
        for _ in 0..<1024 { p.send(text: "[]") }
        #expect(p.transport.inputPaused, "a window of rejections waits for a reader")
        p.drain()
        #expect(!p.transport.inputPaused)
        #expect(p.frames("rejected").count == 1024)
        #expect(p.frames.last == ["type": "accepted", "through": 1024])
    }

    @Test func aFailedCommitClosesThePublisherWithWhatWasAccepted() throws {
        let gw = try TestGateway(store: true)
        let p = gw.publisher()
        p.push(Self.update("washer", "Washing"))
        #expect(p.frames.last == ["type": "accepted", "through": 1])
        gw.failCommits = true
        p.push(Self.update("washer", "Rinsing"))
        #expect(p.frames.last?["type"] == "error")
        #expect(p.frames.last?["through"] == 1)
        #expect(p.closeCode == 1011)
    }

    @Test func publisherFramesGoNowhereElse() throws {
        let gw = try TestGateway()
        let observer = gw.observe()
        let p = gw.publisher()
        p.send(["type": "subscribe"])
        p.send(["type": "ack", "seq": 1])
        #expect(p.frames("rejected").map(\.["rule"]) == ["value", "value"])
        #expect(gw.device("phone")?["sessions"] == 0, "a publisher is no device session")
        #expect(observer.frames("device").isEmpty)
    }
}
