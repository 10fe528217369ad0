import ArgumentParser
import LanpushPlatform
import Foundation
import LanpushClient
import LanpushCore

struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Post a live update, an end, or a plain notification (POST /v1/push), or stream a file of them.",
        discussion: """
            The body has the shape of Home Assistant's notify data: {"title","message","data":{...}} plus \
            "targets". With --tag the message is a live update (start, or update of that tag) unless --no-live; \
            --end ends the activity with that tag and dismisses it at once, as on the phone (message \
            "clear_notification"; --data dismissal_date=<unix time> keeps it visible until then). Without --tag it is a plain \
            notification. --file gives the whole body as JSON ("-" reads stdin); the other flags are applied \
            on top of it.

            --stream sends a file of bodies, one JSON object per line ("-" reads stdin), through the \
            publisher stream (one WebSocket, pipelined; docs/PROTOCOL.md, "Publisher stream") and returns once \
            the gateway has accepted every line. Rejected lines are named on stderr and make the exit status 1; \
            the others are applied regardless.

            Examples:
              lanpush send --tag washer_cycle --title "Washing Machine" \\
                --message "Cycle started"
              lanpush send --tag washer_cycle --message Rinsing --progress 900 \\
                --progress-max 3600 --target phone
              lanpush send --tag washer_cycle --end
              lanpush send --title Door --message "Front door opened" --data ttl=0
              lanpush send --stream updates.jsonl
            """)

    @OptionGroup var gateway: GatewayOptions

    @Option(name: .long, help: ArgumentHelp("Device id to send to (repeatable; default: every device).", valueName: "id"))
    var target: [String] = []

    @Option(name: .long, help: "The activity's tag (letters, digits, - and _).")
    var tag: String?

    @Option(name: .long, help: "Title (static: set when the activity starts).")
    var title: String?

    @Option(name: .long, help: "Message.")
    var message: String?

    @Option(name: .long, help: "Progress value (integer).")
    var progress: Int?

    @Option(name: .customLong("progress-max"), help: "Progress maximum (integer > 0).")
    var progressMax: Int?

    @Option(name: .customLong("critical-text"), help: "Short text for the compact view.")
    var criticalText: String?

    @Option(name: .long, help: ArgumentHelp("Notification icon (MDI slug).", valueName: "mdi:name"))
    var icon: String?

    @Option(name: .customLong("icon-color"), help: ArgumentHelp("Icon color (notification_icon_color).", valueName: "color"))
    var iconColor: String?

    @Option(name: .long, help: ArgumentHelp("Color (#RRGGBB or a CSS color name).", valueName: "color"))
    var color: String?

    @Option(name: .long, help: ArgumentHelp("Timer target: Unix time, or seconds from now with --relative.", valueName: "time"))
    var when: Double?

    @Flag(name: .long, help: "--when counts seconds from now (when_relative).")
    var relative = false

    @Flag(name: .long, help: "Show a timer (counting to --when) instead of the message.")
    var chronometer = false

    @Flag(name: .long, help: "Silent update: no alert, lower priority.")
    var silent = false

    @Flag(inversion: .prefixedNo, help: "Send as a live update (default when --tag is given and --end is not).")
    var live: Bool?

    @Flag(name: .long, help: "End the activity with --tag (message clear_notification).")
    var end = false

    @Option(name: .long, help: ArgumentHelp(
        "Extra data field, value parsed as JSON when it is valid JSON, else a string; a dotted key nests "
            + "(content_state.progress=5). Repeatable.", valueName: "key=value"))
    var data: [String] = []

    @Option(name: .long, help: ArgumentHelp("Body as a JSON file (\"-\" = stdin).", valueName: "path"))
    var file: String?

    @Option(name: .long, help: ArgumentHelp(
        "Bodies as JSON Lines (\"-\" = stdin), sent through the publisher stream.", valueName: "path"))
    var stream: String?

    @Flag(name: .long, help: "Print the gateway's JSON answer instead of one line per target (--stream: every answer frame).")
    var json = false

    func validate() throws {
        if end && tag == nil { throw ValidationError("--end needs --tag") }
        if end && message != nil { throw ValidationError("--end and --message exclude each other") }
        if end && live == true { throw ValidationError("--end and --live exclude each other") }
        if relative && when == nil { throw ValidationError("--relative needs --when") }
        if stream != nil {
            let flags = [
                target.isEmpty ? nil : "--target", tag.map { _ in "--tag" }, title.map { _ in "--title" },
                message.map { _ in "--message" }, progress.map { _ in "--progress" }, progressMax.map { _ in "--progress-max" },
                criticalText.map { _ in "--critical-text" }, icon.map { _ in "--icon" }, iconColor.map { _ in "--icon-color" },
                color.map { _ in "--color" }, when.map { _ in "--when" }, relative ? "--relative" : nil, chronometer ? "--chronometer" : nil,
                silent ? "--silent" : nil, live.map { _ in "--live" }, end ? "--end" : nil, data.isEmpty ? nil : "--data",
                file.map { _ in "--file" },
            ].compactMap { $0 }
            if let first = flags.first { throw ValidationError("--stream and \(first) exclude each other: each line is a whole body") }
        }
        for item in data where !item.contains("=") || item.hasPrefix("=") {
            throw ValidationError("--data '\(item)': use key=value")
        }
    }

    func run() throws {
        let address = try gateway.address()
        let token = try gateway.requireToken(for: "send")
        if let stream { return try send(stream: stream, address: address, token: token) }
        let body = try buildBody()
        let answer = try HTTP.request("POST", address.http("/v1/push"), token: token, json: body, tls: address.tls)
        if json {
            Output.line(String(decoding: answer.body, as: UTF8.self))
        }
        guard (200..<300).contains(answer.status) else {
            throw CLIError("gateway answered \(answer.status): \(answer.errorMessage)")
        }
        if json { return }
        let results = answer.json?["results"]?.arrayValue ?? []
        if results.isEmpty { Output.line("accepted (\(answer.status))") }
        for r in results {
            let target = r["target"]?.stringValue ?? "?"
            let result = r["result"]?.stringValue ?? r.serialized()
            Output.line("\(target): \(result)")
        }
    }

    private func send(stream path: String, address: GatewayAddress, token: String) throws {
        Platform.ignoreSIGPIPE()
        let bytes: Data
        if path == "-" {
            bytes = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let d = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read \(path)") }
            bytes = d
        }
        let lines = try StreamSender.read(String(decoding: bytes, as: UTF8.self), name: path == "-" ? "stdin" : path)
        guard !lines.isEmpty else { throw CLIError("\(path == "-" ? "stdin" : path): no bodies to send") }
        guard let url = URL(string: address.stream) else { throw CLIError("invalid gateway URL '\(address.stream)'") }
        let sender = StreamSender(url: url, token: token, tls: address.tls, json: json)
        let s: StreamSender.Summary
        switch Blocking.wait({ try await sender.run(lines) }) {
        case .success(let summary): s = summary
        case .failure(let error as CLIError): throw error
        case .failure(let error): throw CLIError("cannot reach the gateway at \(address.stream): \(error)")
        }
        if !json {
            Output.line("\(s.sent - s.rejected) of \(s.sent) accepted\(s.rejected > 0 ? ", \(s.rejected) rejected" : "")"
                + (s.warnings > 0 ? " (\(s.warnings) warnings)" : ""))
        }
        if s.rejected > 0 { throw CLIError("\(s.rejected) of \(s.sent) lines rejected") }
    }

    /// The request body: the file (if any), then the flags on top.
    func buildBody() throws -> JSONValue {
        var body: [String: JSONValue] = [:]
        if let file {
            let bytes: Data
            if file == "-" {
                bytes = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let d = FileManager.default.contents(atPath: file) else {
                    throw CLIError("cannot read \(file)")
                }
                bytes = d
            }
            let parsed: JSONValue
            do {
                parsed = try JSONValue.parse(Array(bytes))
            } catch {
                throw CLIError("\(file): \(error)")
            }
            guard let object = parsed.objectValue else { throw CLIError("\(file): the body must be a JSON object") }
            body = object
        }
        var d: [String: JSONValue] = body["data"]?.objectValue ?? [:]
        if body["data"] != nil && body["data"]?.objectValue == nil { throw CLIError("\(file ?? "body"): data must be an object") }

        if !target.isEmpty { body["targets"] = .array(target.map { .string($0) }) }
        if let title { body["title"] = .string(title) }
        if let message { body["message"] = .string(message) }
        if end { body["message"] = "clear_notification" }
        if let tag { d["tag"] = .string(tag) }
        if let progress { d["progress"] = .number(Double(progress)) }
        if let progressMax { d["progress_max"] = .number(Double(progressMax)) }
        if let criticalText { d["critical_text"] = .string(criticalText) }
        if let icon { d["notification_icon"] = .string(icon) }
        if let iconColor { d["notification_icon_color"] = .string(iconColor) }
        if let color { d["color"] = .string(color) }
        if let when { d["when"] = .number(when) }
        if relative { d["when_relative"] = true }
        if chronometer { d["chronometer"] = true }
        if silent { d["silent"] = true }
        for item in data {
            let eq = item.firstIndex(of: "=")!
            let key = String(item[..<eq])
            let text = String(item[item.index(after: eq)...])
            let value = (try? JSONValue.parse(text)) ?? .string(text)
            try set(&d, path: key.split(separator: ".", omittingEmptySubsequences: false).map(String.init), value, item)
        }
        // Live by default for a tag, unless this ends it or --no-live says otherwise.
        if let live {
            if live { d["live_update"] = true } else { d.removeValue(forKey: "live_update") }
        } else if tag != nil && !end && d["live_update"] == nil {
            d["live_update"] = true
        }
        if !d.isEmpty { body["data"] = .object(d) }
        return .object(body)
    }

    private func set(_ object: inout [String: JSONValue], path: [String], _ value: JSONValue, _ item: String) throws {
        guard let first = path.first, !first.isEmpty else { throw CLIError("--data '\(item)': empty key") }
        if path.count == 1 {
            object[first] = value
            return
        }
        var inner: [String: JSONValue]
        switch object[first] {
        case nil: inner = [:]
        case .object(let o)?: inner = o
        default: throw CLIError("--data '\(item)': '\(first)' is not an object")
        }
        try set(&inner, path: Array(path.dropFirst()), value, item)
        object[first] = .object(inner)
    }
}

