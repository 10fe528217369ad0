import ArgumentParser
import Foundation
import LanpushCore

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "List devices (sessions, delivery path, last seen) and activities (GET /v1/devices, /v1/activities).")

    @OptionGroup var gateway: GatewayOptions

    @Flag(name: .long, help: "Print {\"devices\":[...],\"activities\":[...]} as the gateway answered them.")
    var json = false

    func run() throws {
        let address = try gateway.address()
        let token = try gateway.requireToken(for: "status")
        let devices = try HTTP.getJSON(address.http("/v1/devices"), token: token, tls: address.tls)["devices"]?.arrayValue ?? []
        let activities = try HTTP.getJSON(address.http("/v1/activities"), token: token, tls: address.tls)["activities"]?.arrayValue ?? []
        if json {
            Output.line(JSONValue.object(["devices": .array(devices), "activities": .array(activities)]).serialized())
            return
        }
        let now = Date().timeIntervalSince1970
        Output.line("Devices (\(devices.count)):")
        if devices.isEmpty {
            Output.line("  (none configured)")
        } else {
            let rows = devices.map { d -> [String] in
                let lastSeen = d["last_seen"]?.numberValue.map { "\(Format.dateTime($0)) (\(Format.ago($0, now: now)))" }
                return [
                    d["id"]?.stringValue ?? "?", d["name"]?.stringValue ?? "", Format.int(d["sessions"]) ?? "0",
                    d["path"]?.stringValue ?? "?", Format.int(d["activities"]) ?? "0", lastSeen ?? "never",
                ]
            }
            for line in Format.table(["ID", "NAME", "SESSIONS", "PATH", "ACTIVITIES", "LAST SEEN"], rows) {
                Output.line("  " + line)
            }
        }
        Output.line("Activities (\(activities.count)):")
        if activities.isEmpty {
            Output.line("  (none)")
        } else {
            let rows = activities.map { a -> [String] in
                let state = a["state"]?.objectValue ?? [:]
                return [
                    a["device_id"]?.stringValue ?? "?", a["tag"]?.stringValue ?? "?", a["phase"]?.stringValue ?? "?",
                    ActivityText.title(state: state, attributes: a["attributes"]?.objectValue ?? [:]), ActivityText.summary(state),
                ]
            }
            for line in Format.table(["DEVICE", "TAG", "PHASE", "TITLE", "MESSAGE / PROGRESS"], rows) {
                Output.line("  " + line)
            }
        }
    }
}

/// How an activity's content state reads on one line.
enum ActivityText {
    /// The title the phone shows: the state's (an update may change it), else the one the activity started with.
    static func title(state: [String: JSONValue], attributes: [String: JSONValue]) -> String {
        if let t = state["title"]?.stringValue, !t.isEmpty { return t }
        return attributes["title"]?.stringValue ?? ""
    }

    /// "Rinsing · 900/3600 (25%)", plus critical text, timer and the remaining keys.
    static func summary(_ state: [String: JSONValue]) -> String {
        var parts: [String] = []
        let message = state["message"]?.stringValue ?? ""
        if state["chronometer"]?.boolValue == true, let end = state["countdown_end"]?.numberValue {
            parts.append("timer to \(Format.clock(end))" + (message.isEmpty ? "" : " (\(message))"))
        } else {
            parts.append(message.isEmpty ? "\"\"" : message)
        }
        if let p = state["progress"]?.numberValue, let m = state["progress_max"]?.numberValue, m > 0 {
            let pct = Int((p / m * 100).rounded())
            parts.append("\(Format.int(.number(p))!)/\(Format.int(.number(m))!) (\(pct)%)")
        } else if let p = state["progress"] {
            parts.append("progress \(Format.value(p))")
        }
        if let c = state["critical_text"]?.stringValue { parts.append("critical: \(c)") }
        if state["chronometer"]?.boolValue != true, let end = state["countdown_end"]?.numberValue {
            parts.append("until \(Format.clock(end))")
        }
        // The title has a column (or a place in the line) of its own.
        let shown: Set<String> = ["message", "title", "progress", "progress_max", "critical_text", "chronometer", "countdown_end"]
        var rest: [String: JSONValue] = [:]
        for (k, v) in state where !shown.contains(k) {
            if k == "template", let type = v["template"]?.stringValue {
                rest[k] = .string(type)
            } else {
                rest[k] = v
            }
        }
        if !rest.isEmpty { parts.append(Format.pairs(rest)) }
        return parts.joined(separator: " | ")
    }
}
