import LanpushCore

/// One HTTP answer of the API before it is written: status, content type, extra headers and body. Every answer is
/// JSON (`{"message","field","rule"}` for errors, which HA reads as `message`) except pages and `/metrics`.
struct APIResponse: Equatable {
    var status: Int
    var contentType: String
    var headers: [Header] = []
    var body: [UInt8]

    struct Header: Equatable {
        var name: String
        var value: String
    }

    static func json(_ status: Int, _ value: JSONValue) -> APIResponse {
        APIResponse(status: status, contentType: "application/json", body: value.serializedBytes())
    }

    static func error(_ status: Int, _ error: FieldError, extra: [String: JSONValue] = [:]) -> APIResponse {
        let error = error.bounded
        guard !extra.isEmpty, case .object(var o) = error.json else { return json(status, error.json) }
        for (k, v) in extra { o[k] = v }
        return json(status, .object(o))
    }

    static func error(
        _ status: Int, field: String, rule: String, _ message: String, extra: [String: JSONValue] = [:]
    ) -> APIResponse {
        error(status, FieldError(field: field, rule: rule, message: message), extra: extra)
    }

    /// Pages and metrics change with every release and every scrape: never served from a cache.
    static func uncached(_ contentType: String, _ body: [UInt8]) -> APIResponse {
        APIResponse(status: 200, contentType: contentType, headers: [Header(name: "Cache-Control", value: "no-cache")], body: body)
    }

    /// A page file: the bytes with their validators, or 304 when the browser holds these very bytes.
    static func asset(_ contentType: String, headers: [Header], body: [UInt8], notModified: Bool) -> APIResponse {
        APIResponse(status: notModified ? 304 : 200, contentType: contentType, headers: headers, body: notModified ? [] : body)
    }

    /// What an accepted change is answered with when its commit failed: nothing was stored, so the sender retries.
    static let storeFailed = error(503, field: "store", rule: "durable", "the update could not be stored; retry")

    /// The metric reason of a request the adapter refused before it was routed.
    static func rejectionReason(status: Int) -> String {
        switch status {
        case 413: "body_too_large"
        case 411: "length_required"
        default: "method"
        }
    }

    /// The JSON body (tests and the testing module read it).
    var json: JSONValue? { try? JSONValue.parse(body) }
}
