import Foundation
import LanpushCore

/// A failure the CLI reports as one line on stderr (`lanpush: <message>`) and a non-zero exit.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var exitCode: Int32 = 1

    init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }

    var description: String { message }
}

/// Unbuffered line output: every line is one `write(2)`, so piped output interleaves correctly with the
/// other stream and reaches a reader at once (Swift's `print` is block-buffered on a pipe).
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        let single = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        FileHandle.standardError.write(Data(("lanpush: " + single + "\n").utf8))
    }
}

/// Text helpers shared by the commands.
enum Format {
    /// `HH:MM:SS` in local time.
    static func clock(_ unix: Double) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "HH:mm:ss"
        return f.string(from: Date(timeIntervalSince1970: unix))
    }

    /// `YYYY-MM-DD HH:MM:SS` in local time.
    static func dateTime(_ unix: Double) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return f.string(from: Date(timeIntervalSince1970: unix))
    }

    /// "3s ago", "5m ago", "2h ago", "4d ago".
    static func ago(_ unix: Double, now: Double = Date().timeIntervalSince1970) -> String {
        let s = max(0, Int(now - unix))
        if s < 60 { return "\(s)s ago" }
        if s < 3600 { return "\(s / 60)m ago" }
        if s < 86400 { return "\(s / 3600)h ago" }
        return "\(s / 86400)d ago"
    }

    /// A JSON value for humans: strings quoted only when they contain spaces or are empty, numbers without
    /// a trailing `.0`, objects and arrays as compact JSON.
    static func value(_ v: JSONValue) -> String {
        switch v {
        case .string(let s):
            return s.isEmpty || s.contains(where: { $0 == " " || $0 == "=" || $0 == "\"" }) ? v.serialized() : s
        default:
            return v.serialized()
        }
    }

    /// `key=value` pairs, keys sorted.
    static func pairs(_ object: [String: JSONValue]) -> String {
        object.keys.sorted().map { "\($0)=\(value(object[$0]!))" }.joined(separator: " ")
    }

    /// Left-aligned columns separated by two spaces.
    static func table(_ header: [String], _ rows: [[String]]) -> [String] {
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func render(_ cells: [String]) -> String {
            var out = ""
            for (i, cell) in cells.enumerated() {
                if i == cells.count - 1 {
                    out += cell
                } else {
                    out += cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) + "  "
                }
            }
            return out
        }
        return [render(header)] + rows.map(render)
    }

    static func int(_ v: JSONValue?) -> String? {
        guard let n = v?.numberValue else { return nil }
        return n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
    }
}
