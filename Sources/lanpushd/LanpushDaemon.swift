import ArgumentParser
import LanpushPlatform
import Foundation
import LanpushCore
import LanpushGateway
import LanpushStore
import Logging
import Metrics
import Prometheus

@main
struct LanpushDaemon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lanpushd",
        abstract: "LAN-first push gateway for Home Assistant Live Activities, Live Updates and notifications.",
        version: LanpushVersion.current)

    @Option(name: .long, help: "Configuration file (YAML, or the HA add-on's options.json).")
    var config: String = "Config/lanpush.yaml"

    @Option(name: .long, help: "Listen address HOST:PORT (overrides `listen`).")
    var listen: String?

    @Option(name: .customLong("state-dir"), help: "State folder (default: $STATE_DIRECTORY, else ./state).")
    var stateDir: String?

    @Flag(name: .customLong("no-mdns"), help: "Do not advertise the gateway with mDNS/DNS-SD.")
    var noMDNS = false

    @Flag(name: .customLong("check-config"), help: "Only parse the configuration: print one line and exit 0, or name the bad key and exit 64.")
    var checkConfig = false

    @Flag(name: .customLong("reset-state"), help: "Move the state database aside (kept as lanpush.sqlite.corrupt-<time>) and start fresh.")
    var resetState = false

    func run() throws {
        Platform.useOneMallocArena()
        Platform.ignoreSIGPIPE()
        var settings: GatewayConfig
        do {
            settings = try ConfigLoader.load(path: config)
            if let listen { (settings.listenHost, settings.listenPort) = try ConfigLoader.parseListen(listen, key: "--listen") }
        } catch let error as ConfigError {
            if checkConfig {
                FileHandle.standardError.write(Data("lanpushd: \(config): \(error)\n".utf8))
                throw ExitCode.validationFailure
            }
            throw ValidationError("\(config): \(error)")
        }
        if noMDNS { settings.mdns.enabled = false }
        if checkConfig {
            let devices = settings.devices.count
            print("lanpushd: \(config): configuration OK (listen \(settings.listenHost):\(settings.listenPort), \(devices) device\(devices == 1 ? "" : "s"), mDNS \(settings.mdns.enabled ? "on" : "off"))")
            return
        }
        let level = Logger.Level(rawValue: settings.logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "lanpushd")
        for deprecation in settings.deprecations { logger.warning("config: \(deprecation)") }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        let environment = ProcessInfo.processInfo.environment
        let statePath = stateDir ?? environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init) ?? "state"
        let state = try StateDirectory(path: statePath)
        if resetState, let moved = try StateStore.moveAside(directory: statePath) {
            print("lanpushd: moved the old state to \(moved)")
        }
        if settings.adminToken == nil {
            let (token, created) = try state.value(named: "admin_token", make: StateDirectory.randomToken)
            settings.adminToken = token
            if created {
                // Printed once, on the start that generated it.
                print("lanpushd: generated admin token (kept in \(statePath)/admin_token): \(token)")
                fflush(nil)
            }
        }

        let gateway: Gateway
        do {
            gateway = try Gateway(
                options: .init(config: settings, stateDirectory: state, fdLimit: Platform.raiseFileLimit()),
                logger: logger, renderMetrics: { registry.emitToString() })
        } catch let error as ConfigError {
            throw ValidationError("\(error)")
        } catch let error as StoreError {
            logger.critical("\(error)")
            throw ExitCode(3)
        }
        let notifier = SystemdNotifier()
        if let notifier {
            gateway.onReady = { _ in notifier.send("READY=1\nSTATUS=serving") }
            if let interval = notifier.watchdogInterval {
                let last = LastPing()
                gateway.onLoopAlive = {
                    // Pinged from the loop itself, so a stuck loop stops the pings and systemd restarts us.
                    if last.due(interval) { notifier.send("WATCHDOG=1") }
                }
            }
        }
        let signals = Platform.onTermination { sig in
            logger.info("signal \(sig): shutting down")
            notifier?.send("STOPPING=1")
            gateway.stop()
        }
        // Freed heap memory back to the OS twice a minute: under session churn glibc keeps it otherwise.
        let freeMemory = Platform.releaseFreeMemory(every: 30)
        // The signal sources must outlive the loop; a release build would otherwise free them early.
        withExtendedLifetime((signals, freeMemory)) { gateway.run() }
    }
}

/// Rate-limits watchdog pings from the loop's 250 ms tick. Touched only on the loop thread.
final class LastPing: @unchecked Sendable {
    private var last = 0.0

    func due(_ interval: Double) -> Bool {
        let now = Date().timeIntervalSince1970
        guard now - last >= interval else { return false }
        last = now
        return true
    }
}
