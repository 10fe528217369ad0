import ArgumentParser
import Foundation
import LanpushCore

/// `lanpush device add|list|rename|rotate|remove`: devices at run time, through the gateway's API (admin token).
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Add, list, rename, re-token or remove devices at run time (no config edit, no restart).",
        discussion: """
            Devices of the config file are listed too but stay read-only here. A new device's token is printed \
            once: give it to the client, or pair the client instead (`lanpush pair`).
            """,
        subcommands: [Add.self, List.self, Rename.self, Rotate.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a device and print its token (shown once).")
        @OptionGroup var gateway: GatewayOptions
        @Argument(help: "Device id: 1-64 letters, digits, '.', '-', '_'.") var id: String
        @Option(name: .long, help: "Display name (default: the id).") var name: String?
        @Option(name: .long, help: "How its plain notifications travel: auto, lan, relay or both.") var notifications: String?

        func run() throws {
            var body: [String: JSONValue] = ["id": .string(id)]
            if let name { body["name"] = .string(name) }
            if let notifications { body["notifications"] = .string(notifications) }
            let answer = try DeviceCommand.call(gateway, "POST", "/v1/devices", body: .object(body), expect: 201)
            Output.line(answer["token"]?.stringValue ?? "")
            Output.note("device \(id) added; the line above is its token (it is not shown again)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List devices with where they are defined.")
        @OptionGroup var gateway: GatewayOptions

        func run() throws {
            let devices = try DeviceCommand.call(gateway, "GET", "/v1/devices", expect: 200)["devices"]?.arrayValue ?? []
            let rows = devices.map { d in
                [d["id"]?.stringValue ?? "?", d["name"]?.stringValue ?? "", d["source"]?.stringValue ?? "?",
                 d["notifications"]?.stringValue ?? "", d["path"]?.stringValue ?? "", Format.int(d["sessions"]) ?? "0"]
            }
            for line in Format.table(["ID", "NAME", "SOURCE", "NOTIFICATIONS", "PATH", "SESSIONS"], rows) { Output.line(line) }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give a device a new display name.")
        @OptionGroup var gateway: GatewayOptions
        @Argument var id: String
        @Argument var name: String

        func run() throws {
            _ = try DeviceCommand.call(gateway, "PATCH", "/v1/devices/\(id)", body: ["name": .string(name)], expect: 200)
            Output.note("device \(id) is now \"\(name)\"")
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a device a new token; the old one stops working and its sessions are closed.")
        @OptionGroup var gateway: GatewayOptions
        @Argument var id: String

        func run() throws {
            let answer = try DeviceCommand.call(gateway, "POST", "/v1/devices/\(id)/token", expect: 200)
            Output.line(answer["token"]?.stringValue ?? "")
            Output.note("device \(id) has a new token (above); the old one no longer works")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a device: its sessions are closed, its activities and queued notifications dropped.")
        @OptionGroup var gateway: GatewayOptions
        @Argument var id: String

        func run() throws {
            _ = try DeviceCommand.call(gateway, "DELETE", "/v1/devices/\(id)", expect: 200)
            Output.note("device \(id) removed")
        }
    }

    /// One API call with the admin token; a status other than `expect` is a one-line error with the gateway's words.
    static func call(_ gateway: GatewayOptions, _ method: String, _ path: String, body: JSONValue? = nil, expect: Int) throws -> JSONValue {
        let address = try gateway.address()
        let answer = try HTTP.request(method, address.http(path), token: try gateway.requireToken(for: "device"), json: body, tls: address.tls)
        guard answer.status == expect else { throw CLIError("\(method) \(path) answered \(answer.status): \(answer.errorMessage)") }
        return answer.json ?? .null
    }
}
