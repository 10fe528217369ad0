import CQRencode

/// A QR code of a text, from libqrencode, drawn for a terminal: two modules per character cell with the half blocks
/// `▀ ▄ █`, light modules as ink (the convention of `qrencode -t UTF8`, made for dark terminals; `inverted` for
/// light ones), with a quiet zone of two modules so phones scan it straight off the screen.
struct QRCode {
    /// Rows of modules, `true` = dark.
    let modules: [[Bool]]

    init?(_ text: String) {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        var rows = [[Bool]]()
        for y in 0..<width {
            rows.append((0..<width).map { x in code.pointee.data[y * width + x] & 1 == 1 })
        }
        modules = rows
    }

    func terminalLines(quietZone: Int = 2, inverted: Bool = false) -> [String] {
        let size = modules.count + 2 * quietZone
        func dark(_ x: Int, _ y: Int) -> Bool {
            let mx = x - quietZone, my = y - quietZone
            guard mx >= 0, my >= 0, mx < modules.count, my < modules.count else { return false }
            return modules[my][mx]
        }
        var lines = [String]()
        for y in stride(from: 0, to: size, by: 2) {
            var line = ""
            for x in 0..<size {
                // Ink where the module is light (or dark, inverted); the bottom row of an odd size is light.
                let top = dark(x, y) == inverted
                let bottom = (y + 1 < size ? dark(x, y + 1) : false) == inverted
                line += top && bottom ? "█" : top ? "▀" : bottom ? "▄" : " "
            }
            lines.append(line)
        }
        return lines
    }
}
