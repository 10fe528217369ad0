import Testing

@testable import LanpushCore

/// A publisher's stream without the gateway: frames decoded and numbered, answers in order, `accepted` cumulative
/// and only as far as commits reached, and the two bounds on what a publisher can make the gateway hold.
@Suite struct PublisherStreamTests {
    static func frame(_ value: JSONValue) -> [UInt8] { value.serializedBytes() }

    @Test func aPushFrameIsItsBodyAndItsId() throws {
        let frame: JSONValue = ["type": "push", "id": "a-1", "targets": ["phone"], "message": "Hi"]
        guard case .success(.push(let id, let body)) = PublisherFrame.decode(Self.frame(frame)) else {
            Issue.record("not decoded as a push")
            return
        }
        #expect(id == "a-1")
        #expect(body["targets"] == ["phone"] && body["message"] == "Hi")
        #expect(PublisherFrame.decode(Self.frame(["type": "push", "id": 7])) == .success(.push(id: 7, body: ["type": "push", "id": 7])))
        #expect(PublisherFrame.decode(Self.frame(["type": "ping"])) == .success(.ping))
    }

    @Test(arguments: [
        ("{", "", "json"), ("[1]", "", "type"), (#"{"message":"x"}"#, "type", "required"), (#"{"type":3}"#, "type", "required"),
        (#"{"type":"ack","seq":1}"#, "type", "value"), (#"{"type":"push","id":{"a":1}}"#, "id", "type"),
        (#"{"type":"push","id":1.5}"#, "id", "type"), (#"{"type":"push","id":true}"#, "id", "type"),
    ])
    func aFrameThatIsNotAPushIsRefusedNamingTheField(_ text: String, _ field: String, _ rule: String) {
        guard case .failure(let refusal) = PublisherFrame.decode(Array(text.utf8)) else {
            Issue.record("\(text) was taken")
            return
        }
        #expect(refusal.error.field == field && refusal.error.rule == rule, "\(text): \(refusal.error)")
    }

    @Test func anOverlongStringIdIsRefused() {
        let long = String(repeating: "x", count: PublisherFrame.maxIdLength + 1)
        let frame: JSONValue = ["type": "push", "id": .string(long)]
        guard case .failure(let refusal) = PublisherFrame.decode(Self.frame(frame)) else {
            Issue.record("an id of \(long.count) characters was taken")
            return
        }
        #expect(refusal.error.field == "id")
    }

    @Test func itemsAreNumberedInArrivalOrderAndPingsAreNot() {
        var stream = PublisherStream()
        #expect(stream.receive(Self.frame(["type": "push", "message": "a"])) == .item(number: 1, id: nil, body: ["type": "push", "message": "a"]))
        #expect(stream.receive(Self.frame(["type": "ping"])) == .none)
        // A broken frame was meant as an item: it takes number 2 and is rejected as item 2.
        #expect(stream.receive(Array("not json".utf8)) == .none)
        #expect(stream.receive(Self.frame(["type": "push", "id": "c"])) == .item(number: 3, id: "c", body: ["type": "push", "id": "c"]))
        #expect(stream.nextReply() == .pong)
        guard case .rejected(2, nil, let error)? = stream.nextReply() else {
            Issue.record("item 2 not rejected")
            return
        }
        #expect(error.rule == "json")
        #expect(stream.nextReply() == nil, "nothing is accepted before a commit")
    }

    @Test func acceptedIsCumulativeAndFollowsTheCommits() {
        var stream = PublisherStream()
        for _ in 1...5 { _ = stream.receive(Self.frame(["type": "push"])) }
        stream.reject(2, id: "b", FieldError(field: "data.progress", rule: "type", message: "data.progress: must be a number"))
        stream.warn(4, id: nil, FieldWarning(field: "title", rule: "android_title", message: "no title"))
        stream.committed(through: 3)
        #expect(stream.nextReply() == .rejected(item: 2, id: "b", FieldError(field: "data.progress", rule: "type", message: "data.progress: must be a number")))
        #expect(stream.nextReply() == .warning(item: 4, id: nil, FieldWarning(field: "title", rule: "android_title", message: "no title")))
        #expect(stream.nextReply() == .accepted(through: 3))
        #expect(stream.nextReply() == nil)
        // Two commits before the next write: one frame for both.
        _ = stream.receive(Self.frame(["type": "push"]))
        stream.committed(through: 5)
        stream.committed(through: 6)
        #expect(stream.nextReply() == .accepted(through: 6))
        #expect(!stream.hasReplies)
        // A commit never claims items that were not read.
        stream.committed(through: 99)
        #expect(stream.nextReply() == nil)
    }

    @Test func theStreamStopsReadingAtAWindowOfUncommittedItems() {
        var stream = PublisherStream(window: 3)
        for _ in 1...2 { _ = stream.receive(Self.frame(["type": "push"])) }
        #expect(stream.wantsInput)
        _ = stream.receive(Self.frame(["type": "push"]))
        #expect(!stream.wantsInput, "three items wait for their commit")
        stream.committed(through: 1)
        #expect(stream.wantsInput)
    }

    @Test func theStreamStopsReadingWhileAWindowOfAnswersIsUnread() {
        var stream = PublisherStream(window: 3)
        for _ in 1...3 { _ = stream.receive(Array("{".utf8)) }  // three rejected items, nothing to commit
        stream.committed(through: 3)
        #expect(!stream.wantsInput, "three answers wait for a reader")
        _ = stream.nextReply()
        #expect(stream.wantsInput)
    }

    /// Answers wait in the gateway until read; one quoting a large wrong string must not keep a copy of it.
    @Test func aRejectionQuotingALargeInputIsCut() {
        var stream = PublisherStream()
        let type = String(repeating: "é", count: 20_000)
        _ = stream.receive(Self.frame(["type": .string(type)]))
        guard case .rejected(1, nil, let error)? = stream.nextReply() else {
            Issue.record("not rejected")
            return
        }
        #expect(error.field == "type" && error.rule == "value")
        #expect(error.message.utf8.count <= PublisherStream.maxMessageBytes)
        #expect(error.message.hasPrefix("type: a publisher sends \"push\" or \"ping\" (got \"éé") && error.message.hasSuffix("é…"))
    }

    @Test func anAcceptedFrameIsWhatItsJSONSays() throws {
        let reply = PublisherReply.accepted(through: 12_345)
        #expect(try JSONValue.parse(reply.serializedBytes()) == reply.json)
        #expect(reply.json == ["type": "accepted", "through": 12_345])
        let rejected = PublisherReply.rejected(item: 3, id: "x", FieldError(field: "targets", rule: "exists", message: "targets: no such device"))
        #expect(rejected.json == ["type": "rejected", "item": 3, "id": "x", "field": "targets", "rule": "exists", "message": "targets: no such device"])
    }
}
