/// Template `generic` (Aivi's template docs, "legacy"): a progress fraction, a state line and a remaining time.
enum GenericTemplate {
    static func validate(_ template: ObjectReader) throws(FieldError) {
        try template.rejectUnknownKeys(["template", "progress", "state", "icon", "remaining_time", "tap_url"])
        try template.required("progress", TemplateRules.unitFloat)
        try template.optional("state", TemplateRules.string)
        try template.optional("icon", TemplateIcon.validate)
        try template.optional("remaining_time", TemplateRules.nonNegativeInteger)
        try template.optional("tap_url", TemplateRules.string)
    }
}
