import ArgumentParser
import Foundation
import LanpushAvahi
import LanpushCore

struct DiscoverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "Find lanpush gateways on the LAN (DNS-SD _lanpush._tcp through avahi-daemon).",
        discussion: """
            One line per gateway: NAME, ADDRESS:PORT (IPv6 in brackets), the stream URL, then the TXT \
            records as key=value (sorted), separated by two spaces. Nothing found: no output, a note on \
            stderr, exit 0. avahi-daemon or D-Bus unreachable: one error line, exit 1.
            """)

    @Option(name: .long, help: ArgumentHelp("Seconds to browse at most.", valueName: "seconds"))
    var timeout: Double = 3

    @Option(name: .long, help: "DNS-SD service type.")
    var type = "_lanpush._tcp"

    @Flag(name: .long, help: "Print a JSON array of {name,host,address,addresses,port,url,txt}.")
    var json = false

    func validate() throws {
        guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout: between 0 and 600 seconds") }
    }

    func run() throws {
        let services: [DiscoveredService]
        switch ServiceBrowser.browseResult(type: type, timeout: timeout) {
        case .success(let found): services = found
        case .failure(let error):
            throw CLIError("cannot browse for \(type): avahi-daemon is not reachable over D-Bus (\(error.message))")
        }
        if json {
            let items: [JSONValue] = services.map { s in
                .object([
                    "name": .string(s.name), "host": .string(s.hostName), "address": .string(s.address),
                    "addresses": .array(s.addresses.map { .string($0) }), "port": .number(Double(s.port)),
                    "url": .string(Self.streamURL(s)), "txt": .object(s.txt.mapValues { .string($0) }),
                ])
            }
            Output.line(JSONValue.array(items).serialized())
            return
        }
        if services.isEmpty {
            Output.note("no lanpush gateway found within \(Format.value(.number(timeout))) s")
            return
        }
        for s in services {
            let txt = s.txt.keys.sorted().map { s.txt[$0]!.isEmpty ? $0 : "\($0)=\(s.txt[$0]!)" }.joined(separator: " ")
            Output.line([s.name, Self.hostPort(s), Self.streamURL(s), txt].filter { !$0.isEmpty }.joined(separator: "  "))
        }
    }

    static func hostPort(_ s: DiscoveredService) -> String {
        let host = s.address.contains(":") ? "[\(s.address)]" : s.address
        return "\(host):\(s.port)"
    }

    /// ws(s)://ADDRESS:PORT/PATH from the TXT records `tls` and `path`.
    static func streamURL(_ s: DiscoveredService) -> String {
        let scheme = s.txt["tls"] == "1" ? "wss" : "ws"
        var path = s.txt["path"] ?? "/v1/stream"
        if !path.hasPrefix("/") { path = "/" + path }
        return "\(scheme)://\(hostPort(s))\(path)"
    }
}
