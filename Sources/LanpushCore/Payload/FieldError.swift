/// Why an input was refused: the field path (rooted at the request body, e.g. `data.progress` or
/// `data.template.progress.segments[2].value`), the rule it broke, and a sentence for people.
///
/// The HTTP layer turns this into `{"message","field","rule"}` with a 4xx status; HA reads `message`.
public struct FieldError: Error, Sendable, Equatable, CustomStringConvertible {
    public let field: String
    public let rule: String
    public let message: String

    public init(field: String, rule: String, message: String) {
        self.field = field
        self.rule = rule
        self.message = message
    }

    public var description: String { "\(field): \(message)" }

    /// Longest message (and field) of a refusal, in UTF-8 bytes. Messages and fields quote what was sent (an unknown
    /// key, a wrong header), so a refusal of a large input would otherwise repeat it whole: an answer as large as the
    /// request, and on the publisher stream a window of such copies held until the publisher reads them.
    public static let maxMessageBytes = 512

    /// This refusal with its message and field cut to `maxMessageBytes` (ending in `…` where cut).
    public var bounded: FieldError {
        FieldError(field: Self.bounded(field), rule: rule, message: Self.bounded(message))
    }

    /// `text` cut to `maxMessageBytes` UTF-8 bytes at a character boundary, ending in `…` where cut.
    public static func bounded(_ text: String) -> String {
        guard text.utf8.count > maxMessageBytes else { return text }
        var cut = ""
        for c in text {
            if cut.utf8.count + c.utf8.count > maxMessageBytes - 3 { break }
            cut.append(c)
        }
        return cut + "…"
    }

    public var json: JSONValue {
        .object(["message": .string(message), "field": .string(field), "rule": .string(rule)])
    }
}

/// Builds field paths as validation descends into a document.
public struct FieldPath: Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public static let root = FieldPath(description: "")

    public init(_ path: String) {
        self.description = path
    }

    private init(description: String) {
        self.description = description
    }

    public func key(_ name: String) -> FieldPath {
        FieldPath(description: description.isEmpty ? name : "\(description).\(name)")
    }

    public func index(_ i: Int) -> FieldPath {
        FieldPath(description: "\(description)[\(i)]")
    }

    public func error(_ rule: String, _ message: String) -> FieldError {
        FieldError(field: description, rule: rule, message: "\(description): \(message)")
    }
}
