import ArgumentParser
import Foundation

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a new random device token (32 bytes, URL-safe base64) and a config snippet.",
        discussion: """
            The first line is the token alone (`lanpush token | head -n1`); then a `devices:` entry for \
            lanpush.yaml. Give it to the LAN client, which authenticates with {"type":"auth","token":...}.
            """)

    @Option(name: .long, help: "Device id for the snippet.")
    var id = "my-device"

    @Option(name: .long, help: "Device name for the snippet (default: the id).")
    var name: String?

    @Flag(name: [.short, .long], help: "Print only the token.")
    var quiet = false

    func validate() throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        guard !id.isEmpty, id.allSatisfy({ allowed.contains($0) }) else {
            throw ValidationError("--id: letters, digits, - and _ only")
        }
    }

    func run() throws {
        let token = Self.newToken()
        Output.line(token)
        if quiet { return }
        let label = (name ?? id).replacingOccurrences(of: "\"", with: "\\\"")
        Output.line("")
        Output.line("# lanpush.yaml: add under `devices:`")
        Output.line("devices:")
        Output.line("  - {id: \(id), name: \"\(label)\", token: \"\(token)\"}")
    }

    /// 32 random bytes (the system CSPRNG) as URL-safe base64 without padding: 43 characters.
    static func newToken() -> String {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
