/// A frame a publisher session sends after `auth_ok` (docs/PROTOCOL.md, "Publishers").
public enum PublisherFrame: Sendable, Hashable {
    /// One update: `body` is what `POST /v1/push` takes (`targets`, `title`, `message`, `data`; `type` and `id` are
    /// the frame's own and read by nobody else). `id` is the publisher's label for it, echoed in what the gateway
    /// says about the item.
    case push(id: JSONValue?, body: [String: JSONValue])
    case ping

    /// Longest string `id` taken (it is echoed in every rejection and warning of its item).
    public static let maxIdLength = 128

    /// Decodes one text message. Refusals name the field and rule, as `POST /v1/push`'s do: `""`/`json` (not
    /// JSON), `""`/`type` (not an object), `type`/`required` or `type`/`value`, `id`/`type`.
    ///
    /// `id` comes back with the refusal when it was readable, so the rejection can still name it.
    public static func decode(_ bytes: [UInt8]) -> Result<PublisherFrame, Refusal> {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            return .failure(Refusal(id: nil, error: FieldError(field: "", rule: "json", message: "the frame is not valid JSON: \(error)")))
        }
        guard case .object(let object) = value else {
            return .failure(Refusal(id: nil, error: FieldError(field: "", rule: "type", message: "a frame must be a JSON object")))
        }
        let id = object["id"].flatMap(validID)
        switch object["type"] {
        case .string("push")?:
            if let raw = object["id"], id == nil {
                return .failure(Refusal(id: nil, error: FieldError(
                    field: "id", rule: "type",
                    message: "id: must be a string of at most \(maxIdLength) characters or an integer (got \(raw.typeName))")))
            }
            return .success(.push(id: id, body: object))
        case .string("ping")?:
            return .success(.ping)
        case .string(let other)?:
            return .failure(Refusal(id: id, error: FieldError(
                field: "type", rule: "value", message: "type: a publisher sends \"push\" or \"ping\" (got \"\(other)\")")))
        default:
            return .failure(Refusal(id: id, error: FieldError(field: "type", rule: "required", message: "type: \"push\" is required")))
        }
    }

    /// A frame that is not one the stream takes: what was wrong, and its `id` if it had a usable one.
    public struct Refusal: Error, Sendable, Equatable {
        public var id: JSONValue?
        public var error: FieldError
    }

    private static func validID(_ value: JSONValue) -> JSONValue? {
        switch value {
        case .string(let s) where s.count <= maxIdLength:
            return value
        case .number(let n) where n.isFinite && n == n.rounded(.towardZero) && abs(n) <= 9_007_199_254_740_992:
            return value
        default:
            return nil
        }
    }
}
