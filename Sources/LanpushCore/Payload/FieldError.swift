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
