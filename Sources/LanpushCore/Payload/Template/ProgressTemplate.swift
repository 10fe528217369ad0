/// Template `progress` (Aivi's template docs): a bar, `simple` or `segmented`, with header / footer slots.
enum ProgressTemplate {
    static let valueSlots = ["header_left", "header_right", "footer_left", "footer_right", "compact_value"]

    static func validate(_ template: ObjectReader) throws(FieldError) {
        try template.rejectUnknownKeys(Set(["template", "progress", "icon", "tap_url"] + valueSlots))
        try template.required("progress", ProgressBar.validate)
        try template.optional("icon", TemplateIcon.validate)
        for slot in valueSlots {
            try template.optional(slot, TemplateValue.validate)
        }
        try template.optional("tap_url", TemplateRules.string)
    }
}

/// `ProgressBar`: the keys allowed depend on `style`, so a `color` on a segmented bar is reported, not lost.
enum ProgressBar {
    static func validate(_ value: JSONValue, at path: FieldPath) throws(FieldError) {
        let bar = try ObjectReader(value, at: path)
        switch try bar.required("style", TemplateRules.oneOf(["simple", "segmented"])) {
        case "simple":
            try bar.rejectUnknownKeys(["style", "value", "color"])
            try bar.required("value", TemplateRules.unitFloat)
            try bar.optional("color", TemplateRules.color)
        default:
            try bar.rejectUnknownKeys(["style", "value", "segments", "display"])
            try bar.required("value", TemplateRules.unitFloat)
            try bar.required("segments", Segments.validate)
            try bar.optional("display", TemplateRules.oneOf(["split", "layered"]))
        }
    }
}

/// `segments` of a segmented bar: 1–4 shares of the bar that together fill it.
enum Segments {
    static let count = 1...4
    /// JSON decimals such as 0.1 + 0.2 do not add up exactly.
    static let sumTolerance = 1e-6

    static func validate(_ value: JSONValue, at path: FieldPath) throws(FieldError) {
        guard case .array(let segments) = value else {
            throw path.error("type", "expected an array of segments, got \(value.typeName).")
        }
        guard count.contains(segments.count) else {
            throw path.error("count", "expected 1 to 4 segments, got \(segments.count).")
        }
        var sum = 0.0
        for (i, segment) in segments.enumerated() {
            sum += try validateSegment(segment, at: path.index(i))
        }
        guard abs(sum - 1) <= sumTolerance else {
            throw path.error("sum", "segment values must sum to 1.0, got \(JSONValue.number(sum).serialized()).")
        }
    }

    /// Returns the segment's share.
    private static func validateSegment(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Double {
        let segment = try ObjectReader(value, at: path)
        try segment.rejectUnknownKeys(["value", "fill_color", "track_color", "track_fill", "label"])
        let share = try segment.required("value", TemplateRules.unitFloat)
        try segment.required("fill_color", TemplateRules.color)
        try segment.optional("track_color", TemplateRules.color)
        try segment.optional("track_fill", TemplateRules.oneOf(["solid", "hatched"]))
        try segment.optional("label", TemplateRules.string)
        return share
    }
}
