import ArgumentParser
import LanpushPlatform
import Foundation
import LanpushCore
import LanpushLWS

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow the lanpush.v1 stream live: one line per event, then the current state of every activity.",
        discussion: """
            As an observer (the default; --token is the admin or viewer token) it sees every device, or the one \
            given with --device, and never acknowledges anything. With --device-token it connects as that device: \
            it acknowledges every frame, counts as connected, and can resume (--resume EPOCH:SEQ, printed on exit).

            Output, one line per event on stdout:
              HH:MM:SS DEVICE TYPE [TAG] #SEQ details
            then, when activities changed, one line per activity:
              DEVICE/TAG [PHASE] TITLE: MESSAGE | PROGRESS/MAX (PCT%) | key=value...
            Connection notes (connected, synced, closed, resume point) go to stderr. \
            --json prints every frame exactly as received instead.

            Ends on Ctrl-C / SIGTERM (exit 0), after --count events (exit 0), at --timeout (exit 0, or 1 if \
            --count was not reached), or when the gateway closes the connection (exit 0 for 1000/1001, 1 for \
            anything else; an authentication failure prints the gateway's message).
            """)

    @OptionGroup var gateway: GatewayOptions

    @Option(name: .long, help: ArgumentHelp("Observe only this device (observer mode).", valueName: "id"))
    var device: String?

    @Option(name: .customLong("device-token"), help: ArgumentHelp("Connect as the device with this token (acks every frame).", valueName: "token"))
    var deviceToken: String?

    @Option(name: .long, help: ArgumentHelp("Device mode: resume from this point instead of a snapshot.", valueName: "epoch:seq"))
    var resume: String?

    @Flag(name: .long, help: "Print raw frames (one JSON text per line) instead of the readable layout.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Exit after this many events (start, update, end, lifecycle, notification, clear).", valueName: "n"))
    var count: Int?

    @Option(name: .long, help: ArgumentHelp("Exit after this many seconds.", valueName: "seconds"))
    var timeout: Double?

    @Flag(name: .long, help: "Reconnect (with backoff, resuming as a device) when the connection drops, instead of exiting.")
    var reconnect = false

    @Flag(name: .customLong("insecure"), help: "wss: do not verify the gateway's certificate.")
    var insecure = false

    func validate() throws {
        if deviceToken != nil && device != nil { throw ValidationError("--device is for observers; --device-token already names the device") }
        if resume != nil && deviceToken == nil { throw ValidationError("--resume needs --device-token") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be positive") }
    }

    func run() throws {
        Platform.ignoreSIGPIPE()
        let address = try gateway.address()
        let role: Watcher.Role
        if let deviceToken {
            guard !deviceToken.isEmpty else { throw CLIError("--device-token is empty") }
            var point: (String, UInt64)?
            if let resume {
                guard let colon = resume.lastIndex(of: ":"), let seq = UInt64(resume[resume.index(after: colon)...]),
                    colon > resume.startIndex
                else { throw CLIError("--resume: use EPOCH:SEQ (as printed by a previous watch)") }
                point = (String(resume[..<colon]), seq)
            }
            role = .device(token: deviceToken, resume: point)
        } else {
            role = .observer(token: try gateway.requireToken(for: "watch (as an observer)"), device: device)
        }
        var options = WSClientOptions()
        options.libraryLogMask = 0  // lws's own log lines would break "one line per event"
        options.pingInterval = 20
        options.pingTimeout = 10
        let loop: WSClientLoop
        do {
            loop = try WSClientLoop(options: options)
        } catch {
            throw CLIError("\(error)")
        }
        let watcher = Watcher(
            loop: loop, url: address.stream, role: role, json: json, count: count, reconnect: reconnect,
            insecure: insecure)
        let signals = Platform.onTermination { _ in loop.requestStop() }
        if let timeout { loop.schedule(after: timeout) { watcher.timedOut(after: timeout) } }
        try watcher.start()
        loop.run()
        withExtendedLifetime(signals) {}
        if let message = watcher.exitMessage { throw CLIError(message, exitCode: watcher.exitCode) }
        if watcher.exitCode != 0 { throw ExitCode(watcher.exitCode) }
    }
}

/// The stream client: authenticates, subscribes, acks (as a device), applies patches, prints. Runs entirely
/// on the loop thread.
final class Watcher: WSClientDelegate {
    enum Role {
        case observer(token: String, device: String?)
        case device(token: String, resume: (epoch: String, seq: UInt64)?)
    }

    struct Key: Hashable, Comparable {
        let device: String
        let tag: String
        static func < (a: Key, b: Key) -> Bool { (a.device, a.tag) < (b.device, b.tag) }
    }

    struct Tracked {
        var title: String
        var state: [String: JSONValue]
        var phase: String
        var dismissalDate: Double?
    }

    let loop: WSClientLoop
    let url: String
    let role: Role
    let json: Bool
    let countLimit: Int?
    let reconnect: Bool
    let insecure: Bool

    private var connection: WSClientConnection?
    private var outbox: [[UInt8]] = []
    private var activities: [Key: Tracked] = [:]
    private var deviceId: String?
    private var epoch: String?
    private var seq: UInt64 = 0
    private var resumePoint: (epoch: String, seq: UInt64)?
    private var events = 0
    private var authMessage: String?
    private var finishing = false
    private var backoff = 1.0
    private var everConnected = false
    private(set) var exitCode: Int32 = 0
    private(set) var exitMessage: String?

    init(loop: WSClientLoop, url: String, role: Role, json: Bool, count: Int?, reconnect: Bool, insecure: Bool) {
        self.loop = loop
        self.url = url
        self.role = role
        self.json = json
        self.countLimit = count
        self.reconnect = reconnect
        self.insecure = insecure
        if case .device(_, let resume) = role { resumePoint = resume }
    }

    func start() throws {
        do {
            connection = try loop.connectWebSocket(
                url: url, subprotocol: "lanpush.v1", allowInsecureTLS: insecure, delegate: self)
        } catch {
            throw CLIError("cannot connect to \(url): \(error)")
        }
    }

    /// Decides how the command ends and stops the loop (which closes the connection with 1001).
    private func finish(_ code: Int32, _ message: String? = nil) {
        guard !finishing else { return }
        finishing = true
        exitCode = code
        exitMessage = message
        if case .device = role, let epoch {
            Output.note("resume point: --resume \(epoch):\(seq)")
        }
        if let connection, connection.isOpen, !outbox.isEmpty {
            // Let the last acks go out first (bounded: the stop follows within half a second anyway).
            stopAfterFlush = true
            loop.schedule(after: 0.5) { [loop] in loop.requestStop() }
        } else {
            loop.requestStop()
        }
    }

    private var stopAfterFlush = false

    func timedOut(after seconds: Double) {
        if let countLimit, events < countLimit {
            finish(1, "timed out after \(Format.value(.number(seconds))) s: saw \(events) of \(countLimit) events")
        } else {
            finish(0)
        }
    }

    // MARK: connection

    func wsClientOpened(_ connection: WSClientConnection) {
        everConnected = true
        backoff = 1
    }

    func wsClientConnectFailed(_ connection: WSClientConnection, error: WSClientError) {
        if loop.isStopping || finishing { return }
        if reconnect {
            scheduleReconnect("cannot connect: \(error)")
        } else {
            finish(1, "cannot connect to \(url): \(error)")
        }
    }

    func wsClientClosed(_ connection: WSClientConnection, code: UInt16?, reason: String) {
        outbox.removeAll()
        if loop.isStopping || finishing { return }
        let what = code.map { "\($0)" + (reason.isEmpty ? "" : " \(reason)") } ?? "no close frame"
        if code == 4001 {
            finish(1, "authentication failed: \(authMessage ?? (reason.isEmpty ? "invalid token" : reason))")
            return
        }
        if reconnect {
            scheduleReconnect("the gateway closed the connection (\(what))")
            return
        }
        if code == 1000 || code == 1001 {
            Output.note("the gateway closed the connection (\(what))")
            finish(0)
        } else {
            finish(1, code == nil ? "connection to \(url) lost" : "the gateway closed the connection (\(what))")
        }
    }

    private func scheduleReconnect(_ why: String) {
        let delay = backoff
        backoff = min(backoff * 2, 30)
        Output.note("\(why); reconnecting in \(Format.value(.number(delay))) s")
        if case .device = role, let epoch { resumePoint = (epoch, seq) }
        loop.schedule(after: delay) { [weak self] in
            guard let self, !self.finishing, !self.loop.isStopping else { return }
            do {
                self.connection = try self.loop.connectWebSocket(
                    url: self.url, subprotocol: "lanpush.v1", allowInsecureTLS: self.insecure, delegate: self)
            } catch {
                self.finish(1, "cannot connect to \(self.url): \(error)")
            }
        }
    }

    private func send(_ value: JSONValue) {
        guard let connection else { return }
        outbox.append(value.serializedBytes())
        connection.requestWritable()
    }

    func wsClientWritable(_ connection: WSClientConnection) {
        while !outbox.isEmpty && !connection.isChoked {
            guard connection.send(outbox.removeFirst()) else { return }
        }
        if !outbox.isEmpty {
            connection.requestWritable()
        } else if stopAfterFlush {
            loop.requestStop()
        }
    }

    // MARK: frames

    func wsClientText(_ connection: WSClientConnection, _ bytes: [UInt8]) {
        guard !finishing else { return }
        guard let frame = try? JSONValue.parse(bytes), let o = frame.objectValue, let type = o["type"]?.stringValue else {
            Output.note("ignoring a frame that is not a JSON object with a type")
            return
        }
        if json { Output.line(String(decoding: bytes, as: UTF8.self)) }
        switch type {
        case "auth_required":
            switch role {
            case .observer(let token, let device):
                var auth: [String: JSONValue] = ["type": "auth", "token": .string(token), "role": "observer"]
                if let device { auth["device"] = .string(device) }
                send(.object(auth))
            case .device(let token, _):
                send(["type": "auth", "token": .string(token)])
            }
        case "auth_ok":
            authenticated(o)
        case "auth_invalid":
            authMessage = o["message"]?.stringValue
        case "error":
            Output.note("gateway: \(o["message"]?.stringValue ?? frame.serialized())")
        case "synced":
            let device = o["device_id"]?.stringValue ?? deviceId ?? "?"
            Output.note("synced \(device) at #\(Format.int(o["seq"]) ?? "?")")
        case "replay":
            if !json { Output.line("\(Format.clock(now)) \(deviceId ?? "?") replay from #\(Format.int(o["from"]) ?? "?")") }
        case "snapshot", "start", "update", "end", "lifecycle", "notification", "clear":
            event(type, o)
        case "notifications_dropped":
            let device = o["device_id"]?.stringValue ?? deviceId ?? "?"
            Output.note("\(device): \(Format.int(o["count"]) ?? "?") notifications up to #\(Format.int(o["through"]) ?? "?") were dropped (queue full)")
        default:
            break  // pong, registered, ... nothing to show
        }
    }

    private var now: Double { Date().timeIntervalSince1970 }

    private func authenticated(_ o: [String: JSONValue]) {
        var subscribe: [String: JSONValue] = ["type": "subscribe"]
        switch role {
        case .observer(_, let device):
            Output.note("connected to \(url) as observer of \(device.map { "device \($0)" } ?? "every device")")
        case .device:
            deviceId = o["device_id"]?.stringValue
            let newEpoch = o["epoch"]?.stringValue
            Output.note("connected to \(url) as device \(deviceId ?? "?") (epoch \(newEpoch ?? "?"), seq \(Format.int(o["seq"]) ?? "?"))")
            if let point = resumePoint {
                subscribe["epoch"] = .string(point.epoch)
                subscribe["seq"] = .number(Double(point.seq))
            }
            if newEpoch != epoch { seq = 0 }
            epoch = newEpoch
        }
        send(.object(subscribe))
    }

    private func event(_ type: String, _ o: [String: JSONValue]) {
        let device = o["device_id"]?.stringValue ?? deviceId ?? "?"
        let tag = o["tag"]?.stringValue
        let frameSeq = o["seq"]?.numberValue.map { UInt64(max(0, $0)) }
        var changed = true
        var details = ""

        switch type {
        case "snapshot":
            if case .device = role, let e = o["epoch"]?.stringValue { epoch = e }
            for key in activities.keys where key.device == device { activities.removeValue(forKey: key) }
            let items = o["activities"]?.arrayValue ?? []
            for a in items {
                guard let t = a["tag"]?.stringValue else { continue }
                activities[Key(device: device, tag: t)] = Tracked(
                    title: a["attributes"]?["title"]?.stringValue ?? "", state: a["state"]?.objectValue ?? [:],
                    phase: a["phase"]?.stringValue ?? "active", dismissalDate: a["dismissal_date"]?.numberValue)
            }
            details = "(\(items.count) \(items.count == 1 ? "activity" : "activities"))"
        case "start":
            guard let tag else { return }
            let title = o["attributes"]?["title"]?.stringValue ?? ""
            let state = o["state"]?.objectValue ?? [:]
            activities[Key(device: device, tag: tag)] = Tracked(
                title: title, state: state, phase: o["phase"]?.stringValue ?? "active",
                dismissalDate: o["dismissal_date"]?.numberValue)
            details = ([title.isEmpty ? nil : "title=\(Format.value(.string(title)))", Format.pairs(state)] as [String?])
                .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        case "update", "end":
            guard let tag else { return }
            let patch = o["patch"]?.objectValue ?? [:]
            let key = Key(device: device, tag: tag)
            var a = activities[key] ?? Tracked(title: "", state: [:], phase: "active", dismissalDate: nil)
            a.state = MergePatch.apply(patch, to: a.state)
            if type == "end" {
                a.phase = "ended"
                a.dismissalDate = o["dismissal_date"]?.numberValue
            } else {
                a.phase = o["phase"]?.stringValue ?? "active"
            }
            activities[key] = a
            var bits = [Format.pairs(patch)]
            if o["silent"]?.boolValue == true { bits.append("(silent)") }
            if let alert = o["alert"] { bits.append("alert=\(alert.serialized())") }
            if type == "end", o["phase"]?.stringValue == "dismissed" {
                bits.append("(dismissed at once)")
            } else if type == "end", let d = a.dismissalDate {
                bits.append("(visible until \(Format.clock(d)))")
            }
            details = bits.filter { !$0.isEmpty }.joined(separator: " ")
        case "lifecycle":
            guard let tag else { return }
            let phase = o["phase"]?.stringValue ?? "?"
            let key = Key(device: device, tag: tag)
            if phase == "dismissed" {
                activities.removeValue(forKey: key)
            } else {
                activities[key]?.phase = phase
            }
            details = "-> \(phase)"
        case "notification":
            changed = false
            var bits: [String] = []
            if let t = o["title"]?.stringValue { bits.append("title=\(Format.value(.string(t)))") }
            if let m = o["message"]?.stringValue { bits.append("message=\(Format.value(.string(m)))") }
            if let d = o["data"]?.objectValue, !d.isEmpty { bits.append("data=\(JSONValue.object(d).serialized())") }
            details = bits.joined(separator: " ")
        case "clear":
            changed = false
        default:
            return
        }

        if let frameSeq, case .device = role { seq = max(seq, frameSeq) }
        if !json {
            var line = "\(Format.clock(now)) \(device) \(type)"
            if let tag { line += " \(tag)" }
            if let frameSeq { line += " #\(frameSeq)" }
            if !details.isEmpty { line += " " + details }
            Output.line(line)
            if changed { printStates() }
        }
        if case .device = role, let frameSeq { send(["type": "ack", "seq": .number(Double(frameSeq))]) }
        if type != "snapshot" {
            events += 1
            if let countLimit, events >= countLimit { finish(0) }
        }
    }

    private func printStates() {
        if activities.isEmpty {
            Output.line("  (no activities)")
            return
        }
        for key in activities.keys.sorted() {
            let a = activities[key]!
            var line = "  \(key.device)/\(key.tag) [\(a.phase)]"
            if !a.title.isEmpty { line += " \(a.title):" }
            line += " " + ActivityText.summary(a.state)
            Output.line(line)
        }
    }
}
