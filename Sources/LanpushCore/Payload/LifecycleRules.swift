/// The activity-level fields of `data` shared by updates and ends: `stale_date`, `relevance_score`,
/// `dismissal_date` (the Scripting app's LiveActivity options, which wrap ActivityKit's).
enum LifecycleRules {
    /// Above this a time is surely milliseconds (10^11 s is the year 5138): the Scripting app's LiveActivity API
    /// takes its dates in milliseconds, so a script author's value is read in that unit rather than refused.
    static let millisecondThreshold: Double = 1e11

    /// Unix seconds, as a number or a numeric string (HA templates render `as_timestamp(...)` either way); a value
    /// in milliseconds is converted. Anything else out of 0 ..< 10^11 s is refused: it would overflow a later
    /// conversion and means no real date.
    static func unixTime(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Double {
        var seconds = try Coerce.number(value, at: path)
        if seconds >= millisecondThreshold { seconds /= 1000 }
        guard seconds >= 0, seconds < millisecondThreshold else {
            throw path.error(
                "range",
                "expected a Unix time in seconds (or milliseconds above 10^11), got \(value.serialized()).")
        }
        return seconds
    }

    /// Any finite number, as ActivityKit takes it: higher is more relevant, and 50 and 100 keep their order.
    static func score(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Double {
        try Coerce.number(value, at: path)
    }

    static func staleDate(in data: ObjectReader) throws(FieldError) -> Double? {
        try data.optional("stale_date", unixTime)
    }

    static func relevanceScore(in data: ObjectReader) throws(FieldError) -> Double? {
        try data.optional("relevance_score", score)
    }
}
