/// `data.template`: an activity rendered with one of Aivi's templates (Aivi's template docs; where the older revision of Aivi's docs
/// differs, 002 wins). Validated strictly — unknown keys included — so a typo is reported instead of
/// silently losing content on the device.
public enum AiviTemplate {
    public static let ids = ["progress", "monitor", "generic"]

    /// The template as given, minus null members: Aivi's template docs reads a null `formatter` as absent, and states
    /// never hold nulls (a null in a merge patch means "remove").
    public static func validate(_ value: JSONValue, path: FieldPath) throws(FieldError) -> JSONValue {
        let template = try ObjectReader(value, at: path)
        switch try template.required("template", TemplateRules.oneOf(ids)) {
        case "progress": try ProgressTemplate.validate(template)
        case "monitor": try MonitorTemplate.validate(template)
        default: try GenericTemplate.validate(template)
        }
        return value.removingNullMembers()
    }
}

extension JSONValue {
    fileprivate func removingNullMembers() -> JSONValue {
        switch self {
        case .object(let object):
            return .object(object.filter { !$0.value.isNull }.mapValues { $0.removingNullMembers() })
        case .array(let items):
            return .array(items.map { $0.removingNullMembers() })
        default:
            return self
        }
    }
}
