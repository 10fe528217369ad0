import ArgumentParser
import Foundation

@main
struct Lanpush: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lanpush",
        abstract: "Drive a lanpush gateway by hand: send updates, watch the stream, list devices, find gateways.",
        discussion: """
            The gateway is http://127.0.0.1:8765 unless --gateway or $LANPUSH_GATEWAY says otherwise; the \
            token (admin for send, admin or viewer for watch/status) comes from $LANPUSH_TOKEN (or --token, which \
            every user of this machine can read in the process list).
            """,
        subcommands: [
            SendCommand.self, WatchCommand.self, StatusCommand.self, DeviceCommand.self, PairCommand.self, DiscoverCommand.self,
            TokenCommand.self,
        ])

    /// Errors are one line on stderr (`lanpush: ...`) and a non-zero exit; `--help` goes to stdout.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as CLIError {
            Output.error(error.message)
            Foundation.exit(error.exitCode)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error)  // --help, --version: printed in full
            }
            var message = Self.message(for: error)
            if message.isEmpty { message = "\(error)" }
            let first = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? message
            Output.error(first + " (see --help)")
            Foundation.exit(code.rawValue)
        }
    }
}

/// Where the gateway is, how its certificate is checked, and the bearer token: shared by every command that talks
/// to a gateway.
struct GatewayOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Gateway base URL (default: $LANPUSH_GATEWAY, else http://127.0.0.1:8765).", valueName: "url"))
    var gateway: String?

    @Option(name: .long, help: ArgumentHelp(
        "Admin or viewer token; prefer $LANPUSH_TOKEN: an argument is visible to every user in the process list.",
        valueName: "token"))
    var token: String?

    @OptionGroup(title: "TLS (https, wss)") var tls: TLSOptions

    func address() throws -> GatewayAddress {
        let env = ProcessInfo.processInfo.environment["LANPUSH_GATEWAY"].flatMap { $0.isEmpty ? nil : $0 }
        var address = try GatewayAddress(gateway ?? env ?? "http://127.0.0.1:8765")
        address.tls = tls.policy
        return address
    }

    /// The token, or a one-line error naming both ways to give it.
    func requireToken(for what: String) throws -> String {
        if let token, !token.isEmpty {
            Output.error("warning: --token is visible to every user of this machine (ps); set LANPUSH_TOKEN instead")
            return token
        }
        if let env = ProcessInfo.processInfo.environment["LANPUSH_TOKEN"], !env.isEmpty { return env }
        throw CLIError("\(what) needs a token: set LANPUSH_TOKEN (or pass --token)")
    }
}
