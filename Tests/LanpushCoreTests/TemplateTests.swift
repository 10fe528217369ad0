import LanpushCore
import Testing

/// Aivi templates (the newer revision of Aivi's template docs): the documented examples travel in the state unchanged, and every
/// rule of the schema is enforced with the exact field path.
struct TemplateTests {
    struct Example: Sendable, CustomTestStringConvertible {
        let name: String
        let template: String
        var testDescription: String { name }
    }

    static let seedExamples: [Example] = [
        Example(
            name: "progress, simple bar",
            template: """
                { "template": "progress", "icon": "washer", "header_left": { "value": "In progress", "text_color": "green" },
                  "header_right": { "value": "1h 32m" }, "progress": { "style": "simple", "value": 0.65, "color": "blue" },
                  "footer_left": { "value": "Progress" }, "footer_right": { "value": "65%" }}
                """),
        Example(
            name: "progress, segmented layered bar with hatched overflow",
            template: """
                { "template": "progress", "icon": "bolt.car", "header_left": { "value": "90%", "text_color": "green" },
                  "header_right": { "value": "3 min left" }, "progress": { "style": "segmented", "value": 0.90,
                  "display": "layered", "segments": [
                    { "value": 0.8, "fill_color": "green", "track_color": "gray", "label": "Standard" },
                    { "value": 0.2, "fill_color": "green", "track_color": "gray", "track_fill": "hatched", "label": "Extended" } ] },
                  "footer_left": { "value": "Supercharger", "text_color": "gray" }, "footer_right": { "value": "Est. $4.85" },
                  "compact_value": { "value": "90%" }}
                """),
        Example(
            name: "monitor",
            template: """
                { "template": "monitor", "icon": "robotic.vacuum.and.ellipsis",
                  "left_column": { "value": { "value": "Mopping", "text_color": "indigo" }, "footer": "In living room" },
                  "right_column": { "value": { "value": "20.1 m²" }, "footer": "Battery: 87%" }}
                """),
        Example(
            name: "generic",
            template: #"{ "template": "generic", "progress": 0.35, "state": "In progress", "icon": "washer", "remaining_time": 2120}"#
        ),
        Example(
            name: "palette Icon object with gradient",
            template: """
                { "template": "monitor", "icon": { "name": "thermometer.sun", "rendering_mode": "palette",
                  "primary_color": "red", "secondary_color": "orange", "color_rendering": "gradient" },
                  "left_column": { "value": { "value": "31 °C" } }, "primary_column": "left" }
                """),
        Example(
            name: "monitor with timers, hex and CSS colors, tap_url",
            template: """
                { "template": "monitor", "icon": { "name": "timer", "tertiary_color": "gray6" },
                  "left_column": { "header": "Started", "value": { "value": "2025-01-31T18:30:00Z", "formatter": "time_since" } },
                  "right_column": { "value": { "value": "2025-01-31T19:45:10.500+01:00", "formatter": "time_until",
                                               "text_color": "#FF8800" } },
                  "primary_column": "right", "tap_url": "homeassistant://navigate/lovelace/climate" }
                """),
        Example(
            name: "generic with tap_url and single full segment elsewhere",
            template: #"{"template":"generic","progress":1,"remaining_time":0,"tap_url":"https://example.com/status"}"#),
        Example(
            name: "segments that sum to 1 only within float tolerance",
            template: """
                {"template":"progress","progress":{"style":"segmented","value":0.3,"segments":[
                  {"value":0.1,"fill_color":"mint"},{"value":0.2,"fill_color":"RebeccaPurple"},{"value":0.7,"fill_color":"#0f0"}]}}
                """),
    ]

    @Test(arguments: seedExamples)
    func seedTemplateTravelsInState(_ example: Example) throws {
        let template = PayloadFixture.json(example.template)
        let update = try PayloadFixture.liveUpdate(
            #"{"title":"Aivi","message":"m","data":{"tag":"aivi","live_update":true,"template":\#(example.template)}}"#)
        #expect(update.state == ["message": "m", "title": "Aivi", "template": template])
        #expect(try AiviTemplate.validate(template, path: FieldPath("t")) == template)
    }

    @Test func nullFormatterMeansNone() throws {
        let template = PayloadFixture.json(
            #"{"template":"monitor","left_column":{"value":{"value":"Idle","formatter":null},"header":null}}"#)
        #expect(
            try AiviTemplate.validate(template, path: .root)
                == ["template": "monitor", "left_column": ["value": ["value": "Idle"]]])
    }

    // MARK: - Rejections

    static func templatePayload(_ template: String) -> String {
        #"{"message":"m","data":{"tag":"t","live_update":true,"template":\#(template)}}"#
    }

    static func progressBar(_ bar: String) -> String {
        templatePayload(#"{"template":"progress","progress":\#(bar)}"#)
    }

    static func segments(_ segments: String) -> String {
        progressBar(#"{"style":"segmented","value":0.5,"segments":\#(segments)}"#)
    }

    static let rejections: [PayloadRejection] = [
        .init("template not an object", templatePayload(#""progress""#), field: "data.template", rule: "type"),
        .init("unknown template id", templatePayload(#"{"template":"gauge"}"#), field: "data.template.template", rule: "enum"),
        .init("missing template id", templatePayload(#"{"progress":0.5}"#), field: "data.template.template", rule: "required"),
        .init(
            "unknown template key", templatePayload(#"{"template":"generic","progress":0.5,"remaining":10}"#),
            field: "data.template.remaining", rule: "unknown_key"),
        .init(
            "misspelt key with null value", templatePayload(#"{"template":"generic","progress":0.5,"stat":null}"#),
            field: "data.template.stat", rule: "unknown_key"),
        .init("generic progress above 1", templatePayload(#"{"template":"generic","progress":1.2}"#), field: "data.template.progress", rule: "range"),
        .init("generic progress as string", templatePayload(#"{"template":"generic","progress":"0.5"}"#), field: "data.template.progress", rule: "type"),
        .init("generic progress missing", templatePayload(#"{"template":"generic","state":"x"}"#), field: "data.template.progress", rule: "required"),
        .init(
            "negative remaining_time", templatePayload(#"{"template":"generic","progress":0,"remaining_time":-5}"#),
            field: "data.template.remaining_time", rule: "non_negative"),
        .init(
            "fractional remaining_time", templatePayload(#"{"template":"generic","progress":0,"remaining_time":1.5}"#),
            field: "data.template.remaining_time", rule: "type"),
        .init("progress template without bar", templatePayload(#"{"template":"progress","icon":"washer"}"#), field: "data.template.progress", rule: "required"),
        .init("bar without style", progressBar(#"{"value":0.5}"#), field: "data.template.progress.style", rule: "required"),
        .init("unknown bar style", progressBar(#"{"style":"ring","value":0.5}"#), field: "data.template.progress.style", rule: "enum"),
        .init("simple bar value above 1", progressBar(#"{"style":"simple","value":1.01}"#), field: "data.template.progress.value", rule: "range"),
        .init("simple bar without value", progressBar(#"{"style":"simple"}"#), field: "data.template.progress.value", rule: "required"),
        .init("simple bar with segments", progressBar(#"{"style":"simple","value":0.5,"segments":[]}"#), field: "data.template.progress.segments", rule: "unknown_key"),
        .init("simple bar bad color", progressBar(#"{"style":"simple","value":0.5,"color":"gray7"}"#), field: "data.template.progress.color", rule: "color"),
        .init(
            "segmented bar with color", progressBar(#"{"style":"segmented","value":0.5,"color":"red","segments":[{"value":1,"fill_color":"red"}]}"#),
            field: "data.template.progress.color", rule: "unknown_key"),
        .init(
            "segmented bar bad display", progressBar(#"{"style":"segmented","value":0.5,"display":"stacked","segments":[{"value":1,"fill_color":"red"}]}"#),
            field: "data.template.progress.display", rule: "enum"),
        .init("segmented bar without segments", progressBar(#"{"style":"segmented","value":0.5}"#), field: "data.template.progress.segments", rule: "required"),
        .init(
            "segments sum 0.9", segments(#"[{"value":0.5,"fill_color":"red"},{"value":0.4,"fill_color":"blue"}]"#),
            field: "data.template.progress.segments", rule: "sum"),
        .init(
            "five segments",
            segments(
                #"[{"value":0.2,"fill_color":"red"},{"value":0.2,"fill_color":"red"},{"value":0.2,"fill_color":"red"},{"value":0.2,"fill_color":"red"},{"value":0.2,"fill_color":"red"}]"#
            ),
            field: "data.template.progress.segments", rule: "count"),
        .init("no segments", segments("[]"), field: "data.template.progress.segments", rule: "count"),
        .init("segments not an array", segments(#"{"value":1}"#), field: "data.template.progress.segments", rule: "type"),
        .init(
            "segment value 1.5",
            segments(#"[{"value":0.25,"fill_color":"red"},{"value":0.25,"fill_color":"red"},{"value":1.5,"fill_color":"red"}]"#),
            field: "data.template.progress.segments[2].value", rule: "range"),
        .init("segment not an object", segments(#"[1]"#), field: "data.template.progress.segments[0]", rule: "type"),
        .init("segment without fill_color", segments(#"[{"value":1}]"#), field: "data.template.progress.segments[0].fill_color", rule: "required"),
        .init(
            "segment bad track_fill", segments(#"[{"value":1,"fill_color":"red","track_fill":"dotted"}]"#),
            field: "data.template.progress.segments[0].track_fill", rule: "enum"),
        .init(
            "segment bad track_color", segments(##"[{"value":1,"fill_color":"red","track_color":"#12"}]"##),
            field: "data.template.progress.segments[0].track_color", rule: "color"),
        .init(
            "segment unknown key", segments(#"[{"value":1,"fill_color":"red","colour":"red"}]"#),
            field: "data.template.progress.segments[0].colour", rule: "unknown_key"),
        .init(
            "formatter with non-ISO value",
            templatePayload(#"{"template":"monitor","left_column":{"value":{"value":"5 minutes ago","formatter":"time_since"}}}"#),
            field: "data.template.left_column.value.value", rule: "iso8601"),
        .init(
            "formatter with zone-less timestamp",
            templatePayload(#"{"template":"progress","progress":{"style":"simple","value":0},"footer_right":{"value":"2025-01-31T18:30:00","formatter":"time_until"}}"#),
            field: "data.template.footer_right.value", rule: "iso8601"),
        .init(
            "unknown formatter", templatePayload(#"{"template":"monitor","right_column":{"value":{"value":"x","formatter":"relative"}}}"#),
            field: "data.template.right_column.value.formatter", rule: "enum"),
        .init(
            "value not a string", templatePayload(#"{"template":"monitor","left_column":{"value":{"value":20.1}}}"#),
            field: "data.template.left_column.value.value", rule: "type"),
        .init(
            "column without value", templatePayload(#"{"template":"monitor","left_column":{"header":"h"}}"#),
            field: "data.template.left_column.value", rule: "required"),
        .init(
            "value slot as plain string", templatePayload(#"{"template":"progress","progress":{"style":"simple","value":0},"header_left":"x"}"#),
            field: "data.template.header_left", rule: "type"),
        .init(
            "bad text_color", templatePayload(#"{"template":"monitor","left_column":{"value":{"value":"x","text_color":"grey7"}}}"#),
            field: "data.template.left_column.value.text_color", rule: "color"),
        .init("bad primary_column", templatePayload(#"{"template":"monitor","primary_column":"center"}"#), field: "data.template.primary_column", rule: "enum"),
        .init("empty icon name", templatePayload(#"{"template":"monitor","icon":""}"#), field: "data.template.icon", rule: "required"),
        .init("icon as number", templatePayload(#"{"template":"monitor","icon":3}"#), field: "data.template.icon", rule: "type"),
        .init("Icon without name", templatePayload(#"{"template":"monitor","icon":{"rendering_mode":"palette"}}"#), field: "data.template.icon.name", rule: "required"),
        .init(
            "Icon bad rendering_mode", templatePayload(#"{"template":"monitor","icon":{"name":"sun.max","rendering_mode":"duotone"}}"#),
            field: "data.template.icon.rendering_mode", rule: "enum"),
        .init(
            "Icon bad color_rendering", templatePayload(#"{"template":"monitor","icon":{"name":"sun.max","color_rendering":"radial"}}"#),
            field: "data.template.icon.color_rendering", rule: "enum"),
        .init(
            "Icon bad palette color", templatePayload(#"{"template":"monitor","icon":{"name":"sun.max","secondary_color":"sunny"}}"#),
            field: "data.template.icon.secondary_color", rule: "color"),
        .init(
            "Icon unknown key", templatePayload(#"{"template":"monitor","icon":{"name":"sun.max","weight":"bold"}}"#),
            field: "data.template.icon.weight", rule: "unknown_key"),
        .init("tap_url not a string", templatePayload(#"{"template":"monitor","tap_url":1}"#), field: "data.template.tap_url", rule: "type"),
        .init(
            "progress-only key on monitor", templatePayload(#"{"template":"monitor","header_left":{"value":"x"}}"#),
            field: "data.template.header_left", rule: "unknown_key"),
    ]

    @Test(arguments: rejections)
    func rejects(_ row: PayloadRejection) throws {
        let error = try #require(PayloadFixture.rejection(row.payload))
        #expect(error.field == row.field)
        #expect(error.rule == row.rule)
        #expect(error.message.contains(row.field))
    }

    // MARK: - Building blocks

    @Test(arguments: [
        ("1970-01-01T00:00:00Z", 0.0),
        ("1969-12-31T23:59:59Z", -1),
        ("2000-03-01T00:00:00Z", 951_868_800),
        ("2024-02-29T12:00:00+02:00", 1_709_200_800),
        ("2025-01-31T18:30:00.250-05:30", 1_738_368_000.25),
    ])
    func iso8601Parses(text: String, unixSeconds: Double) {
        #expect(ISO8601Timestamp.unixSeconds(text) == unixSeconds)
    }

    @Test(arguments: [
        "", "2025-01-31", "2025-01-31T18:30:00", "2025-01-31 18:30:00Z", "2025-1-31T18:30:00Z",
        "2023-02-29T00:00:00Z", "2025-13-01T00:00:00Z", "2025-04-31T00:00:00Z", "2025-01-31T24:00:00Z",
        "2025-01-31T18:60:00Z", "2025-01-31T18:30:00.Z", "2025-01-31T18:30:00+0100", "2025-01-31T18:30:00Zjunk",
        "2025-01-31T18:30:00+24:00",
    ])
    func iso8601Rejects(text: String) {
        #expect(ISO8601Timestamp.unixSeconds(text) == nil)
    }

    @Test(arguments: ["#fff", "#A1b2C3", "#80FF0000", "RebeccaPurple", "teal", "Black", "lightgoldenrodyellow"])
    func colorsAcceptedEverywhere(color: String) {
        #expect(ColorRule.isValid(color))
        #expect(ColorRule.isValid(color, allowAiviNames: true))
    }

    @Test(arguments: ["mint", "gray2", "gray6", "GRAY4"])
    func aiviColorsOnlyInTemplates(color: String) {
        #expect(!ColorRule.isValid(color))
        #expect(ColorRule.isValid(color, allowAiviNames: true))
    }

    @Test(arguments: ["#12", "#1234", "#12345", "#1234567", "#GGG", "grey7", "transparent", "", "#", "red "])
    func colorsRejected(color: String) {
        #expect(!ColorRule.isValid(color, allowAiviNames: true))
    }

    @Test func cssColorListIsComplete() {
        #expect(ColorRule.isValid("rebeccapurple") && ColorRule.isValid("darkslategrey") && ColorRule.isValid("aliceblue"))
        #expect(ColorRule.aiviNames.count == 18)
    }
}
