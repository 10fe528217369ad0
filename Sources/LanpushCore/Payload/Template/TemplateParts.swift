/// `Value` (Aivi's template docs): a text slot, optionally colored, optionally a live timer over an ISO 8601 timestamp.
enum TemplateValue {
    static let formatters = ["time_since", "time_until"]

    static func validate(_ value: JSONValue, at path: FieldPath) throws(FieldError) {
        let slot = try ObjectReader(value, at: path)
        try slot.rejectUnknownKeys(["value", "text_color", "formatter"])
        let text = try slot.required("value", TemplateRules.string)
        try slot.optional("text_color", TemplateRules.color)
        // A timer over something that is not a timestamp would render garbage on the device.
        if let formatter = try slot.optional("formatter", TemplateRules.oneOf(formatters)),
            !ISO8601Timestamp.isValid(text)
        {
            let got = JSONValue.string(text).serialized()
            throw slot.path.key("value").error(
                "iso8601", "formatter \(formatter) needs an ISO 8601 timestamp like 2025-01-31T18:30:00Z, got \(got).")
        }
    }
}

/// `Column` of the monitor template.
enum TemplateColumn {
    static func validate(_ value: JSONValue, at path: FieldPath) throws(FieldError) {
        let column = try ObjectReader(value, at: path)
        try column.rejectUnknownKeys(["header", "value", "footer"])
        try column.optional("header", TemplateRules.string)
        try column.required("value", TemplateValue.validate)
        try column.optional("footer", TemplateRules.string)
    }
}

/// `icon`: an SF Symbol name, or an `Icon` object with rendering options (Aivi's template docs).
enum TemplateIcon {
    static let renderingModes = ["monochrome", "hierarchical", "palette", "multicolor"]
    static let colorRenderings = ["flat", "gradient"]

    static func validate(_ value: JSONValue, at path: FieldPath) throws(FieldError) {
        if case .string = value {
            try symbolName(value, at: path)
            return
        }
        guard case .object = value else {
            throw path.error("type", "expected an SF Symbol name or an Icon object, got \(value.typeName).")
        }
        let icon = try ObjectReader(value, at: path)
        try icon.rejectUnknownKeys([
            "name", "rendering_mode", "primary_color", "secondary_color", "tertiary_color", "color_rendering",
        ])
        try icon.required("name", symbolName)
        try icon.optional("rendering_mode", TemplateRules.oneOf(renderingModes))
        for key in ["primary_color", "secondary_color", "tertiary_color"] {
            try icon.optional(key, TemplateRules.color)
        }
        try icon.optional("color_rendering", TemplateRules.oneOf(colorRenderings))
    }

    private static func symbolName(_ value: JSONValue, at path: FieldPath) throws(FieldError) {
        guard try !TemplateRules.string(value, at: path).isEmpty else {
            throw path.error("required", "an SF Symbol name must not be empty.")
        }
    }
}
