/// The activity-level fields of `data` shared by updates and ends (seed 004): `stale_date`, `relevance_score`.
enum LifecycleRules {
    /// Unix seconds, as a number or a numeric string (HA templates render `as_timestamp(...)` either way).
    static func unixTime(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Double {
        try Coerce.number(value, at: path)
    }

    /// Clamped, not refused: ActivityKit clamps too, and a score is a hint, not content.
    static func score(_ value: JSONValue, at path: FieldPath) throws(FieldError) -> Double {
        min(max(try Coerce.number(value, at: path), 0), 1)
    }

    static func staleDate(in data: ObjectReader) throws(FieldError) -> Double? {
        try data.optional("stale_date", unixTime)
    }

    static func relevanceScore(in data: ObjectReader) throws(FieldError) -> Double? {
        try data.optional("relevance_score", score)
    }
}
