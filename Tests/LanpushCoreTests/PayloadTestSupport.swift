import Testing
import LanpushCore

/// Shared fixtures of the payload tests: payloads are written as the JSON HA posts, run through the same
/// decode → interpret pipeline as the gateway, at a fixed clock.
enum PayloadFixture {
    static let now: Double = 1_750_000_000

    static func json(_ text: String) -> JSONValue {
        do {
            return try JSONValue.parse(text)
        } catch {
            fatalError("bad JSON in test fixture: \(error) — \(text)")
        }
    }

    static func object(_ text: String) -> [String: JSONValue] {
        guard case .object(let object) = json(text) else { fatalError("fixture is not an object: \(text)") }
        return object
    }

    static func command(_ text: String, now: Double = now) throws(FieldError) -> PushCommand {
        try PayloadInterpreter.interpret(NotifyMessage.decode(object(text)), now: now)
    }

    static func liveUpdate(_ text: String, now: Double = now) throws -> LiveUpdate {
        guard case .liveUpdate(let update) = try command(text, now: now) else {
            throw PayloadFixtureError.notALiveUpdate(text)
        }
        return update
    }

    /// The error the pipeline reports for `text`, or nil when it accepts it.
    static func rejection(_ text: String) -> FieldError? {
        do {
            _ = try command(text)
            return nil
        } catch {
            return error
        }
    }
}

enum PayloadFixtureError: Error {
    case notALiveUpdate(String)
}

/// One row of a rejection table: a payload and the field path and rule its error must name.
struct PayloadRejection: Sendable, CustomTestStringConvertible {
    let name: String
    let payload: String
    let field: String
    let rule: String

    init(_ name: String, _ payload: String, field: String, rule: String) {
        self.name = name
        self.payload = payload
        self.field = field
        self.rule = rule
    }

    var testDescription: String { name }
}
