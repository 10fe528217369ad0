import ArgumentParser
import Foundation
import LanpushClient
import LanpushCore

/// `lanpush pair DEVICE`: a one-time pairing for a device (made if new), shown as a QR code to scan, the pairing URL
/// and a short code to type. A client redeems it within 10 minutes for the device's token. With `--scripting` the QR
/// code is the Scripting app's run URL carrying the pairing: the iPhone's Camera opens it straight into the script.
struct PairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair a client with a device: a QR code (the pairing URL) and a short code, valid 10 minutes, once.",
        discussion: """
            The client scans the QR code (or takes the URL, or the short code typed into it) and redeems it with \
            POST /v1/pair; it then holds the device's token — a previous token of the device stops working. \
            --scripting draws the QR code for an iPhone with the Scripting app: scripting://run/NAME?pair=URL, which \
            the Camera opens into the lanpush script (named NAME in Scripting, --script-name), which pairs.
            """)

    @OptionGroup var gateway: GatewayOptions
    @Argument(help: "Device id (made if it does not exist yet).") var device: String
    @Option(name: .long, help: "Display name for a new device.") var name: String?
    @Flag(name: .long, help: "No QR code: only the URL and the short code.") var noQR = false
    @Flag(name: .long, help: "Dark modules as ink, for a terminal with a light background.") var invert = false
    @Flag(name: .long, help: "The QR code for the iPhone Camera: the Scripting app's run URL with the pairing in it.")
    var scripting = false
    @Option(name: .long, help: "The lanpush script's name in the Scripting app (with --scripting; default: lanpush).")
    var scriptName: String?

    func validate() throws {
        guard let scriptName else { return }
        if !scripting { throw ValidationError("--script-name goes with --scripting") }
        if scriptName.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--script-name must not be empty") }
    }

    func run() throws {
        var body: [String: JSONValue] = ["device": .string(device)]
        if let name { body["name"] = .string(name) }
        let answer = try DeviceCommand.call(gateway, "POST", "/v1/pairings", body: .object(body), expect: 201)
        guard let url = answer["url"]?.stringValue else { throw CLIError("the gateway answered no pairing URL") }
        let shown = scripting ? ScriptingRunURL.make(pairing: url, scriptName: scriptName ?? ScriptingRunURL.defaultScriptName) : url
        if !noQR {
            guard let qr = QRCode(shown) else { throw CLIError("cannot draw a QR code for \(shown)") }
            for line in qr.terminalLines(inverted: invert) { Output.line(line) }
        }
        if scripting { Output.line(shown) }
        Output.line(url)
        Output.line("code: \(answer["short_code"]?.stringValue ?? "?")")
        if let expires = answer["expires_at"]?.numberValue {
            Output.note("valid until \(Format.clock(expires)), once")
        }
    }
}
