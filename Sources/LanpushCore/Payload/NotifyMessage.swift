/// HA's notify service data — `{"title","message","data":{...}}` — the common shape of the relay body
/// and of the native `/v1/push` body. Other top-level keys belong to the envelope and are not read here.
public struct NotifyMessage: Sendable, Hashable {
    public var title: String?
    public var message: String?
    /// As sent, unknown keys and nulls included: plain notifications pass it through unchanged.
    public var data: [String: JSONValue]

    public init(title: String? = nil, message: String? = nil, data: [String: JSONValue] = [:]) {
        self.title = title
        self.message = message
        self.data = data
    }

    /// `path` is where `body` sits in the request, for error field paths.
    /// A plain notification's tag: opaque, whatever HA sent (dots, spaces, colons, long ids), numbers in their JSON
    /// spelling.
    public var tag: String? {
        switch data["tag"] {
        case .string(let s)?: return s
        case .number(let n)? where n.isFinite: return JSONValue.number(n).serialized()
        default: return nil
        }
    }

    public static func decode(_ body: [String: JSONValue], path: FieldPath = .root) throws(FieldError) -> NotifyMessage
    {
        let reader = ObjectReader(body, at: path)
        return NotifyMessage(
            title: try reader.optional("title", Coerce.text),
            message: try reader.optional("message", Coerce.text),
            data: try reader.optional("data", Coerce.object) ?? [:]
        )
    }
}
