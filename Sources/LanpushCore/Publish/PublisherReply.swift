/// What the gateway tells a publisher session (docs/PROTOCOL.md, "Publishers").
public enum PublisherReply: Sendable, Equatable {
    /// Every item up to `through` was handled in order; those no `rejected` named are applied and, with the store
    /// on, committed. Cumulative.
    case accepted(through: UInt64)
    /// Item `item` changed nothing: the field and rule `POST /v1/push` would have answered with.
    case rejected(item: UInt64, id: JSONValue?, FieldError)
    /// Item `item` was applied with a caveat (`POST /v1/push`'s `warnings`, or targets that name no device).
    case warning(item: UInt64, id: JSONValue?, FieldWarning)
    case pong

    public var json: JSONValue {
        switch self {
        case .accepted(let through):
            return ["type": "accepted", "through": .number(Double(through))]
        case .rejected(let item, let id, let error):
            var o: [String: JSONValue] = [
                "type": "rejected", "item": .number(Double(item)), "message": .string(error.message),
                "field": .string(error.field), "rule": .string(error.rule),
            ]
            if let id { o["id"] = id }
            return .object(o)
        case .warning(let item, let id, let warning):
            var o: [String: JSONValue] = [
                "type": "warning", "item": .number(Double(item)), "field": .string(warning.field),
                "rule": .string(warning.rule), "message": .string(warning.message),
            ]
            if let id { o["id"] = id }
            return .object(o)
        case .pong:
            return ["type": "pong"]
        }
    }

    /// The frame's bytes. `accepted`, sent for every commit at full rate, is written without building a value.
    public func serializedBytes() -> [UInt8] {
        guard case .accepted(let through) = self else { return json.serializedBytes() }
        var out: [UInt8] = []
        out.reserveCapacity(48)
        out.append(contentsOf: #"{"through":"#.utf8)
        JSONWriter.writeInteger(Int64(clamping: through), into: &out)
        out.append(contentsOf: #","type":"accepted"}"#.utf8)
        return out
    }
}
