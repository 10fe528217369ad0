import ArgumentParser
import Foundation
import LanpushCore

/// `lanpush pair DEVICE`: a one-time pairing for a device (made if new), shown as a QR code to scan, the pairing URL
/// and a short code to type. A client redeems it within 10 minutes for the device's token.
struct PairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair a client with a device: a QR code (the pairing URL) and a short code, valid 10 minutes, once.",
        discussion: """
            The client scans the QR code (or takes the URL, or the short code typed into it) and redeems it with \
            POST /v1/pair; it then holds the device's token — a previous token of the device stops working.
            """)

    @OptionGroup var gateway: GatewayOptions
    @Argument(help: "Device id (made if it does not exist yet).") var device: String
    @Option(name: .long, help: "Display name for a new device.") var name: String?
    @Flag(name: .long, help: "No QR code: only the URL and the short code.") var noQR = false
    @Flag(name: .long, help: "Dark modules as ink, for a terminal with a light background.") var invert = false

    func run() throws {
        var body: [String: JSONValue] = ["device": .string(device)]
        if let name { body["name"] = .string(name) }
        let answer = try DeviceCommand.call(gateway, "POST", "/v1/pairings", body: .object(body), expect: 201)
        guard let url = answer["url"]?.stringValue else { throw CLIError("the gateway answered no pairing URL") }
        if !noQR {
            guard let qr = QRCode(url) else { throw CLIError("cannot draw a QR code for \(url)") }
            for line in qr.terminalLines(inverted: invert) { Output.line(line) }
        }
        Output.line(url)
        Output.line("code: \(answer["short_code"]?.stringValue ?? "?")")
        if let expires = answer["expires_at"]?.numberValue {
            Output.note("valid until \(Format.clock(expires)), once")
        }
    }
}
