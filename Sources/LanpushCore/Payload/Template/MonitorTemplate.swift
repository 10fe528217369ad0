/// Template `monitor` (Aivi's template docs): one or two columns of labeled values.
enum MonitorTemplate {
    static func validate(_ template: ObjectReader) throws(FieldError) {
        try template.rejectUnknownKeys(["template", "icon", "left_column", "right_column", "primary_column", "tap_url"])
        try template.optional("icon", TemplateIcon.validate)
        try template.optional("left_column", TemplateColumn.validate)
        try template.optional("right_column", TemplateColumn.validate)
        try template.optional("primary_column", TemplateRules.oneOf(["left", "right"]))
        try template.optional("tap_url", TemplateRules.string)
    }
}
