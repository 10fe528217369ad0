import Foundation
import LanpushCore

/// The live preview's files, compiled into the binary so lanpushd serves them with no files next to it.
///
/// - `/`, `/preview`: the page (HTML with its CSS and JS inline: one request, nothing from the internet).
/// - `/preview/mdi.json`, `/preview/mdi-font`: the Material Design Icons font of the machine, when Debian's
///   `fonts-materialdesignicons-webfont` is installed (name → code point map, and the font itself). Without
///   it both are 404 and the page draws a fallback glyph for every `mdi:` icon.
///
/// Everything is built once, on first use, and kept: the router may ask for a path twice per request.
enum PreviewAssets {
    /// Content type and bytes for a GET path, or nil when the path is not a preview asset.
    static func page(for path: String) -> (contentType: String, body: [UInt8])? {
        switch path {
        case "/", "/preview", "/preview/index.html":
            return ("text/html; charset=utf-8", document)
        case "/preview/mdi.json":
            return MDIFont.installed.map { ("application/json", $0.map) }
        case "/preview/mdi-font":
            return MDIFont.installed.map { ($0.fontType, $0.font) }
        default:
            return nil
        }
    }

    static let document: [UInt8] = Array(PreviewDocument.html.utf8)
}

/// Debian's Material Design Icons web font (package `fonts-materialdesignicons-webfont`, MDI 1.6.50 on
/// bookworm): the font file and the slug → code point map read from the package's SCSS/CSS.
struct MDIFont: Sendable {
    let font: [UInt8]
    let fontType: String
    /// `{"version": "1.6.50", "icons": {"ev-station": "F5F1", ...}}`
    let map: [UInt8]
    let count: Int

    static let installed: MDIFont? = load()

    static let fontCandidates: [(path: String, type: String)] = [
        ("/usr/share/fonts/woff/materialdesignicons-webfont/materialdesignicons-webfont.woff2", "font/woff2"),
        ("/usr/share/fonts-materialdesignicons-webfont/fonts/materialdesignicons-webfont.woff2", "font/woff2"),
        ("/usr/share/fonts/woff/materialdesignicons-webfont/materialdesignicons-webfont.woff", "font/woff"),
        ("/usr/share/fonts/truetype/materialdesignicons-webfont/materialdesignicons-webfont.ttf", "font/ttf"),
    ]
    static let scssMap = "/usr/share/fonts-materialdesignicons-webfont/scss/_variables.scss"
    static let cssMap = "/usr/share/fonts-materialdesignicons-webfont/css/materialdesignicons.css"

    static func load() -> MDIFont? {
        guard let (bytes, type) = fontCandidates.lazy.compactMap({ c -> ([UInt8], String)? in
            FileManager.default.contents(atPath: c.path).map { (Array($0), c.type) }
        }).first, !bytes.isEmpty else { return nil }
        var icons: [String: String] = [:]
        var version = ""
        if let text = FileManager.default.contents(atPath: scssMap).flatMap({ String(data: $0, encoding: .utf8) }) {
            (icons, version) = parseSCSS(text)
        }
        if icons.isEmpty, let text = FileManager.default.contents(atPath: cssMap).flatMap({ String(data: $0, encoding: .utf8) }) {
            icons = parseCSS(text)
        }
        guard !icons.isEmpty else { return nil }
        let json = JSONValue.object([
            "version": .string(version), "count": .number(Double(icons.count)),
            "icons": .object(icons.mapValues { .string($0) }),
        ])
        return MDIFont(font: bytes, fontType: type, map: json.serializedBytes(), count: icons.count)
    }

    static func isSlug(_ s: Substring) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
    }

    static func isHex(_ s: Substring) -> Bool {
        (2...6).contains(s.count) && s.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }
    }

    /// Lines like `    "ev-station": F5F1,` inside `$mdi-icons: (...)`, and `$mdi-version: "1.6.50"`.
    static func parseSCSS(_ text: String) -> (icons: [String: String], version: String) {
        var icons: [String: String] = [:]
        var version = ""
        for raw in text.split(separator: "\n") {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("$mdi-version:") {
                let parts = line.split(separator: "\"")
                if parts.count >= 2 { version = String(parts[1]) }
                continue
            }
            guard line.first == "\"" else { continue }
            let parts = line.dropFirst().split(separator: "\"", maxSplits: 1)
            guard parts.count == 2, isSlug(parts[0]) else { continue }
            var value = parts[1].drop { $0 == ":" || $0 == " " }
            while let last = value.last, last == "," || last == " " || last == "\r" { value = value.dropLast() }
            if isHex(value) { icons[String(parts[0])] = value.uppercased() }
        }
        return (icons, version)
    }

    /// `.mdi-ev-station:before {\n  content: "\F5F1";\n}`
    static func parseCSS(_ text: String) -> [String: String] {
        var icons: [String: String] = [:]
        for chunk in text.components(separatedBy: ".mdi-").dropFirst() {
            guard let colon = chunk.range(of: ":before") else { continue }
            let name = chunk[..<colon.lowerBound]
            guard isSlug(name), let open = chunk.range(of: "content: \"\\") ?? chunk.range(of: "content:\"\\") else { continue }
            let rest = chunk[open.upperBound...]
            let hex = rest.prefix { $0 != "\"" }
            if isHex(hex) { icons[String(name)] = hex.uppercased() }
        }
        return icons
    }
}
