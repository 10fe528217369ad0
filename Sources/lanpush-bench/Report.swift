import Foundation

/// Medians across runs, ratios lanpush/mosquitto, as text and Markdown tables, plus every run as JSON.
struct Report {
    let header: String
    let kinds: [ServerKind]
    private var sections: [(ScenarioID, [Row])] = []
    private var raw: [String: [String: [[String: Double]]]] = [:]

    struct Row {
        var key: String
        var label: String
        var unit: String
        var better: Metric.Better
        var medians: [ServerKind: Double]
        var runs: [ServerKind: Int]
    }

    init(header: String, kinds: [ServerKind]) {
        self.header = header
        self.kinds = kinds
    }

    /// Adds a scenario's runs; returns its text table.
    mutating func add(_ id: ScenarioID, _ results: [ServerKind: [[Metric]]]) -> String {
        var order: [String] = []
        var info: [String: Metric] = [:]
        var values: [String: [ServerKind: [Double]]] = [:]
        for kind in ServerKind.allCases {
            for run in results[kind] ?? [] {
                for m in run {
                    if info[m.key] == nil {
                        order.append(m.key)
                        info[m.key] = m
                    }
                    values[m.key, default: [:]][kind, default: []].append(m.value)
                }
            }
            raw[id.rawValue, default: [:]][kind.rawValue] = (results[kind] ?? []).map { run in
                Dictionary(run.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
            }
        }
        let rows = order.map { key -> Row in
            let m = info[key]!
            return Row(key: key, label: m.label, unit: m.unit, better: m.better,
                       medians: values[key]!.mapValues { median($0) }, runs: values[key]!.mapValues(\.count))
        }
        sections.append((id, rows))
        return text(id, rows)
    }

    private var columns: [ServerKind] { ServerKind.allCases.filter { kinds.contains($0) } }

    private func header(_ k: ServerKind) -> String {
        switch k {
        case .lanpush: return "lanpush (durable)"
        case .lanpushMemory: return "lanpush (in memory)"
        case .mosquitto: return "mosquitto"
        }
    }

    static func format(_ v: Double?, unit: String) -> String {
        guard let v, v.isFinite else { return "—" }
        let a = abs(v)
        let s: String
        if a >= 10_000 { s = formatThousands(Int(v.rounded())) }
        else if a >= 100 { s = String(format: "%.0f", v) }
        else if a >= 10 { s = String(format: "%.1f", v) }
        else if a >= 1 { s = String(format: "%.2f", v) }
        else { s = String(format: "%.3f", v) }
        return unit.isEmpty || unit == "/s" ? s : "\(s) \(unit)"
    }

    static func formatThousands(_ n: Int) -> String {
        let digits = String(abs(n))
        var out = ""
        for (i, c) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + String(out.reversed())
    }

    private func ratio(_ a: Double?, _ b: Double?) -> String {
        guard let a, let b, a.isFinite, b.isFinite, b != 0 else { return "—" }
        return String(format: "%.2f×", a / b)
    }

    private func cells(_ r: Row) -> [String] {
        var c = [r.label + (r.unit == "/s" ? " (/s)" : "")]
        for k in columns { c.append(Self.format(r.medians[k], unit: r.unit == "/s" ? "" : r.unit)) }
        if columns.contains(.mosquitto) {
            for k in columns where k != .mosquitto { c.append(ratio(r.medians[k], r.medians[.mosquitto])) }
        }
        return c
    }

    private func titles() -> [String] {
        var t = ["figure"] + columns.map(header)
        if columns.contains(.mosquitto) {
            for k in columns where k != .mosquitto { t.append(k == .lanpush ? "lanpush/mosq" : "mem/mosq") }
        }
        return t
    }

    private func text(_ id: ScenarioID, _ rows: [Row]) -> String {
        let all = [titles()] + rows.map(cells)
        var widths = [Int](repeating: 0, count: all[0].count)
        for row in all { for (i, c) in row.enumerated() { widths[i] = max(widths[i], c.count) } }
        var out = "== \(id.rawValue): \(id.title)\n"
        for (n, row) in all.enumerated() {
            out += row.enumerated().map { i, c in
                i == 0 ? c.padding(toLength: widths[i], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[i] - c.count) + c
            }.joined(separator: "  ") + "\n"
            if n == 0 { out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n" }
        }
        return out
    }

    func markdown() -> String {
        var out = "```\n\(header)```\n"
        for (id, rows) in sections {
            out += "\n#### `\(id.rawValue)`: \(id.title)\n\n"
            let t = titles()
            out += "| " + t.joined(separator: " | ") + " |\n"
            out += "|" + t.enumerated().map { $0.offset == 0 ? "---" : "--:" }.joined(separator: "|") + "|\n"
            for r in rows { out += "| " + cells(r).joined(separator: " | ") + " |\n" }
        }
        return out
    }

    func json() -> String {
        let data = try? JSONSerialization.data(withJSONObject: ["header": header, "runs": raw], options: [.prettyPrinted, .sortedKeys])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
