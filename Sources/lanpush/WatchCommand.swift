import ArgumentParser
import LanpushPlatform
import Foundation
import LanpushCore
import LanpushClient

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow the lanpush stream live: one line per event, then the current state of every activity.",
        discussion: """
            As an observer (the default; --token is the admin or viewer token) it sees every device, or the one \
            given with --device, and never acknowledges anything. With --device-token it connects as that device: \
            it acknowledges every frame, counts as connected, and can resume (--resume EPOCH:SEQ, printed on exit).

            Output, one line per event on stdout:
              HH:MM:SS DEVICE TYPE [TAG] #SEQ details
            then, when activities changed, one line per activity:
              DEVICE/TAG [PHASE] TITLE: MESSAGE | PROGRESS/MAX (PCT%) | key=value...
            Connection notes (connected, synced, closed, resume point) go to stderr. \
            --json prints every frame exactly as received instead (in lanpush.v2 the frames about one \
            activity are arrays: [type, seq, tag, body, extras]).

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

    func validate() throws {
        if deviceToken != nil && device != nil { throw ValidationError("--device is for observers; --device-token already names the device") }
        if resume != nil && deviceToken == nil { throw ValidationError("--resume needs --device-token") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be positive") }
    }

    func run() throws {
        Platform.ignoreSIGPIPE()
        let address = try gateway.address()
        guard let url = URL(string: address.stream) else { throw CLIError("invalid gateway URL '\(address.stream)'") }
        var configuration: LanpushConfiguration
        if let deviceToken {
            guard !deviceToken.isEmpty else { throw CLIError("--device-token is empty") }
            configuration = LanpushConfiguration(url: url, token: deviceToken, role: .device)
            if let resume {
                guard let colon = resume.lastIndex(of: ":"), let seq = UInt64(resume[resume.index(after: colon)...]),
                    colon > resume.startIndex
                else { throw CLIError("--resume: use EPOCH:SEQ (as printed by a previous watch)") }
                configuration.initialState = DeviceState(epoch: String(resume[..<colon]), seq: seq)
            }
        } else {
            let token = try gateway.requireToken(for: "watch (as an observer)")
            configuration = LanpushConfiguration(url: url, token: token, role: .observer(device: device))
        }
        configuration.reconnects = reconnect
        configuration.reportsFrames = true
        configuration.backoff = Backoff(initial: 1, maximum: 30)
        configuration.tls = address.tls

        let client = LanpushClient(configuration)
        let outcome = WatchOutcome()
        let watcher = Watcher(client: client, outcome: outcome, url: address.stream, json: json, count: count)
        let signals = Platform.onTermination { _ in
            Task {
                outcome.finish(0)
                await client.stop()
            }
        }
        let done = DispatchSemaphore(value: 0)
        Task {
            if let timeout {
                Task {
                    try? await Task.sleep(for: .seconds(timeout))
                    outcome.timedOut(after: timeout, count: count)
                    await client.stop()
                }
            }
            await watcher.run()
            done.signal()
        }
        done.wait()
        withExtendedLifetime(signals) {}
        let (code, message) = outcome.result
        if let message { throw CLIError(message, exitCode: code) }
        if code != 0 { throw ExitCode(code) }
    }
}
