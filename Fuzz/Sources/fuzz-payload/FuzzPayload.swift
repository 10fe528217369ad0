import FuzzSupport
import LanpushCore

/// HA's relay body and the notify data of `/v1/push`, decoded and interpreted (tags, lifecycle dates, live update
/// mapping, Aivi templates, companion commands, routing options): no crash on any JSON; a refusal names its field
/// and rule; the same body always means the same; what is accepted serializes as JSON that parses back equal; and
/// the body lanpush would forward to the relay is itself one lanpush accepts as the same command — nothing
/// invalid is relayed.
@main
struct FuzzPayload {
    static let now = 1_800_000_000.0

    static func main() {
        runFuzzer { bytes in
            guard let body = try? JSONValue.parse(bytes) else { return }
            relayBody(body)
            if let object = body.objectValue { notify(object) }
        }
    }

    static func relayBody(_ body: JSONValue) {
        let request: RelayPushRequest
        do {
            request = try RelayPushRequest.decode(body)
        } catch {
            return checkRefusal(error)
        }
        Fuzz.require(!request.pushToken.isEmpty, "an empty push_token was accepted")
        guard let accepted = accept(request.notification) else { return }
        let forwarded = RelayBody.forwarding(request.raw, acceptedAt: now, liveActivityToken: request.liveActivityToken)
        roundTrips(forwarded.json, "relay body")
        let data = forwarded.json["data"]?.objectValue ?? [:]
        Fuzz.require(data[PayloadInterpreter.optionsKey] == nil && data["template"] == nil,
            "lanpush's options or a template would reach the relay: \(forwarded.json.serialized())")
        // The relay gets what HA would have sent: lanpush must accept it as the same thing.
        guard let again = try? RelayPushRequest.decode(forwarded.json) else {
            return Fuzz.require(false, "the forwarded body is refused: \(forwarded.json.serialized())")
        }
        guard let reaccepted = try? PayloadInterpreter.accept(again.notification, now: now) else {
            return Fuzz.require(false, "the forwarded body's payload is refused: \(forwarded.json.serialized())")
        }
        Fuzz.require(kind(reaccepted.command) == kind(accepted.command),
            "the forwarded body means another command: \(forwarded.json.serialized())")
    }

    static func notify(_ object: [String: JSONValue]) {
        let message: NotifyMessage
        do {
            message = try NotifyMessage.decode(object)
        } catch {
            return checkRefusal(error)
        }
        guard let accepted = accept(message) else { return }
        if case .liveUpdate(let update) = accepted.command {
            Fuzz.require(ActivityTagCheck.valid(update.tag), "a live update with tag \(update.tag.debugDescription)")
            roundTrips(.object(update.state), "live update state")
        }
        let native = RelayBody.native(message, pushToken: "tok", registrationInfo: nil, acceptedAt: now)
        roundTrips(native.json, "native relay body")
    }

    static func accept(_ message: NotifyMessage) -> AcceptedPush? {
        let first: AcceptedPush
        do {
            first = try PayloadInterpreter.accept(message, now: now)
        } catch {
            checkRefusal(error)
            return nil
        }
        let second = try? PayloadInterpreter.accept(message, now: now)
        Fuzz.require(second == first, "the same message was interpreted twice differently")
        return first
    }

    static func checkRefusal(_ error: FieldError) {
        Fuzz.require(!error.rule.isEmpty && !error.message.isEmpty, "a refusal without rule or message: \(error)")
        Fuzz.require(error.json["field"] != nil, "a refusal without field: \(error)")
    }

    static func roundTrips(_ value: JSONValue, _ what: String) {
        let text = value.serializedBytes()
        Fuzz.require((try? JSONValue.parse(text)) == value, "\(what) does not survive JSON: \(String(decoding: text, as: UTF8.self))")
    }

    static func kind(_ command: PushCommand) -> String {
        switch command {
        case .liveUpdate(let u): return "live:\(u.tag)"
        case .end(let e): return "end:\(e.tag)"
        case .command: return "command"
        case .notification(let n): return "notification:\(n.tag ?? "")"
        }
    }
}

/// HA's Live Activity tag rule (letters, digits, '-', '_', 1-64), written out again here so the fuzz target does
/// not trust the code it checks.
enum ActivityTagCheck {
    static func valid(_ tag: String) -> Bool {
        (1...64).contains(tag.unicodeScalars.count)
            && tag.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }
}
