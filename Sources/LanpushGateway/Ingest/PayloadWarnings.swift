import LanpushCore
import Logging
import Metrics

/// What becomes of the warnings about accepted payloads (`LenientPayload`'s coercions, a title a live update
/// lacks): each is counted per field and rule (`lanpush_payload_warnings_total{field,rule}`), and logged once per
/// device, tag and field — an automation that sends the same unreadable field every minute fills no log. Loop thread
/// only.
final class PayloadWarnings {
    /// (device, tag, field) triples already logged; cleared when it reaches this many.
    static let maxLogged = 4096

    private let logger: Logger
    private var logged: Set<String> = []
    private var counters: [String: Counter] = [:]
    /// Per `field|rule`, how many were counted (the series' values, for tests and the status).
    private(set) var counts: [String: Int] = [:]

    init(logger: Logger) {
        self.logger = logger
    }

    func note(_ warnings: [FieldWarning], device: String, tag: String?) {
        for warning in warnings {
            let key = "\(Self.label(warning.field))|\(warning.rule)"
            counts[key, default: 0] += 1
            counter(key, field: Self.label(warning.field), rule: warning.rule).increment()
            guard logged.insert("\(device)|\(tag ?? "")|\(warning.field)").inserted else { continue }
            if logged.count >= Self.maxLogged { logged = [] }
            logger.notice("accepted with a warning: \(warning.message)", metadata: [
                "device": "\(device)", "field": "\(warning.field)", "rule": "\(warning.rule)", "tag": "\(tag ?? "")",
            ])
        }
    }

    /// The field as a label: its first two levels (`data.template`, not `data.template.progress.segments[2].value`),
    /// so the series stay few whatever a payload holds.
    static func label(_ field: String) -> String {
        field.split(separator: ".").prefix(2).map { $0.prefix { $0 != "[" } }.joined(separator: ".")
    }

    private func counter(_ key: String, field: String, rule: String) -> Counter {
        if let c = counters[key] { return c }
        let c = Counter(label: "lanpush_payload_warnings_total", dimensions: [("field", field), ("rule", rule)])
        counters[key] = c
        return c
    }
}
