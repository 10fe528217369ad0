import CAvahiClient
import Dispatch
import Foundation
import Testing

@testable import LanpushAvahi

// These tests never send multicast from the test process's own network namespace. The unit tests that start
// a publisher or browser run only where no D-Bus system bus exists, so Avahi cannot be reached (they do not
// change the environment, which would race with other threads). The tests that really publish or browse
// (`integrationPublisher`, `integrationBrowse`) are disabled unless Tests/integration/test_discovery.py enables
// them by environment, running this binary inside a network namespace it created, against its private
// dbus-daemon and avahi-daemon.

private let integrationEnv = "LANPUSH_AVAHI_TEST_SERVICE_NAME"
private let isIntegrationRun = ProcessInfo.processInfo.environment[integrationEnv] != nil

/// No system bus reachable: DBUS_SYSTEM_BUS_ADDRESS unset and no socket at the default address.
private let noSystemBus: Bool =
    ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] == nil
    && !FileManager.default.fileExists(atPath: "/var/run/dbus/system_bus_socket")
    && !FileManager.default.fileExists(atPath: "/run/dbus/system_bus_socket")
private let needsNoBus = "a D-Bus system bus is reachable here: this test would talk to a real avahi-daemon"

/// Collects log lines from the publisher (called on the Avahi thread).
private final class LogSink: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [(ServicePublisher.LogLevel, String)] = []

    func append(_ level: ServicePublisher.LogLevel, _ message: String) {
        lock.withLock { lines.append((level, message)) }
    }

    var all: [(ServicePublisher.LogLevel, String)] { lock.withLock { lines } }
}

@Suite(.serialized)
struct ServicePublisherTests {
    @Test func namesAreTruncatedToOneDNSLabel() {
        #expect(truncatedToDNSLabel("gateway") == "gateway")
        let long = String(repeating: "a", count: 70)
        #expect(truncatedToDNSLabel(long).utf8.count == 63)
        // Never splits a multi-byte character.
        let accented = String(repeating: "é", count: 40)  // 80 bytes
        let cut = truncatedToDNSLabel(accented)
        #expect(cut.utf8.count == 62)
        #expect(cut == String(repeating: "é", count: 31))
    }

    @Test func txtRecordsKeepTheirOrderOnTheWireAndRoundTrip() {
        let pairs = [("txtvers", "1"), ("id", "abc"), ("proto", "lanpush.v1"), ("empty", "")]
        let list = makeStringList(pairs)
        defer { avahi_string_list_free(list) }
        // The TXT rdata as avahi-daemon sends it: length-prefixed strings.
        var wire = [UInt8](repeating: 0, count: 256)
        let size = avahi_string_list_serialize(list, &wire, wire.count)
        var texts: [String] = []
        var index = 0
        while index < size {
            let length = Int(wire[index])
            texts.append(String(decoding: wire[(index + 1)..<(index + 1 + length)], as: UTF8.self))
            index += 1 + length
        }
        #expect(texts == ["txtvers=1", "id=abc", "proto=lanpush.v1", "empty="])
        #expect(readStringList(list) == ["txtvers": "1", "id": "abc", "proto": "lanpush.v1", "empty": ""])

        let repeated = makeStringList([("k", "first"), ("k", "second")])
        defer { avahi_string_list_free(repeated) }
        #expect(readStringList(repeated) == ["k": "first"])  // RFC 6763 section 6.4
    }

    @Test(.enabled(if: noSystemBus, Comment(rawValue: needsNoBus)))
    func withoutDBusThePublisherRetriesAndSaysSoOnce() async throws {
        let sink = LogSink()
        let publisher = ServicePublisher(
            name: "unit test", port: 1234, txt: [("txtvers", "1")], retryInterval: 0.1, maxRetryInterval: 0.2,
            log: { level, message in sink.append(level, message) })
        #expect(publisher.state == .stopped)
        publisher.start()
        #expect(publisher.state == .waitingForBus)
        try await Task.sleep(for: .milliseconds(650))  // retries at 0.1, 0.3, 0.5 s
        #expect(publisher.state == .waitingForBus)
        #expect(publisher.currentName == "unit test")
        // One line for the whole outage, at any level: a line per retry is what fills a log on a machine without
        // avahi.
        let lines = sink.all
        #expect(lines.count == 1, "one line per outage, not one per retry: \(lines)")
        #expect(lines.first?.0 == .warning)
        #expect(lines.first?.1.contains("cannot reach the D-Bus system bus") == true)
        #expect(lines.first?.1.contains("retrying in 0.1 s, then less often, up to every 0.2 s") == true)
        publisher.stop()
        #expect(publisher.state == .stopped)
        publisher.stop()  // idempotent
        publisher.start()  // restartable
        #expect(publisher.state == .waitingForBus)
        publisher.stop()
    }

    @Test(.enabled(if: noSystemBus, Comment(rawValue: needsNoBus)))
    func browsingWithoutDBusReportsAnError() {
        let result = ServiceBrowser.browseResult(timeout: 2)
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code < 0)
        #expect(ServiceBrowser.browse(timeout: 1).isEmpty)
    }

    /// The process under test for Tests/integration/test_discovery.py until lanpushd exists: publishes one
    /// service until SIGTERM (then withdraws it) or LANPUSH_AVAHI_TEST_SECONDS. Output on stderr, one line each:
    /// `lanpush-mdns: LEVEL: message` for every log line, `lanpush-mdns-state: STATE | NAME` on every change.
    @Test(.enabled(if: isIntegrationRun, "set \(integrationEnv) (Tests/integration/test_discovery.py does)"))
    func integrationPublisher() async throws {
        let env = ProcessInfo.processInfo.environment
        let name = env[integrationEnv] ?? "lanpush"
        let port = UInt16(env["LANPUSH_AVAHI_TEST_PORT"] ?? "") ?? 8765
        let seconds = Double(env["LANPUSH_AVAHI_TEST_SECONDS"] ?? "") ?? 120
        let retry = Double(env["LANPUSH_AVAHI_TEST_RETRY"] ?? "") ?? 5
        let type = env["LANPUSH_AVAHI_TEST_TYPE"] ?? "_lanpush._tcp"
        // TXT: newline-separated key=value lines, published in order.
        let txt: [(String, String)] = (env["LANPUSH_AVAHI_TEST_TXT"] ?? "").split(separator: "\n").map { line in
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }

        let publisher = ServicePublisher(
            name: name, type: type, port: port, txt: txt, retryInterval: retry,
            log: { level, message in emit("lanpush-mdns: \(level.rawValue.uppercased()): \(message)") })

        let terminated = TerminationFlag()
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let queue = DispatchQueue(label: "lanpush-mdns-signals")
        let sources = [SIGTERM, SIGINT].map { sig in
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { terminated.set() }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }

        publisher.start()
        emit("lanpush-mdns: started")
        var last: ServicePublisher.Status?
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !terminated.isSet && ContinuousClock.now < deadline {
            let status = publisher.status
            if status != last {
                emit("lanpush-mdns-state: \(status.state) | \(status.name)")
                last = status
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        publisher.stop()
        emit("lanpush-mdns-state: \(publisher.state) | \(publisher.currentName)")
        emit("lanpush-mdns: exiting")
    }
}

/// The browsing side for Tests/integration/test_discovery.py: runs `ServiceBrowser.browseResult` once (type from
/// LANPUSH_AVAHI_TEST_TYPE, timeout from LANPUSH_AVAHI_TEST_BROWSE_TIMEOUT) and prints one line on stderr:
/// `lanpush-browse: {"elapsed": s, "services": [...]}` or `lanpush-browse: {"error": "..."}`.
@Test(.enabled(if: ProcessInfo.processInfo.environment["LANPUSH_AVAHI_TEST_BROWSE"] != nil,
               "set LANPUSH_AVAHI_TEST_BROWSE (Tests/integration/test_discovery.py does)"))
func integrationBrowse() throws {
    let env = ProcessInfo.processInfo.environment
    let type = env["LANPUSH_AVAHI_TEST_TYPE"] ?? "_lanpush._tcp"
    let timeout = Double(env["LANPUSH_AVAHI_TEST_BROWSE_TIMEOUT"] ?? "") ?? 5
    let started = ContinuousClock.now
    let result = ServiceBrowser.browseResult(type: type, timeout: timeout)
    let elapsed = ContinuousClock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    var object: [String: Any] = ["elapsed": seconds]
    switch result {
    case .success(let services):
        object["services"] = services.map { service -> [String: Any] in
            [
                "name": service.name, "type": service.type, "domain": service.domain, "host_name": service.hostName,
                "address": service.address, "addresses": service.addresses, "port": Int(service.port),
                "txt": service.txt,
            ]
        }
    case .failure(let error):
        object["error"] = error.description
    }
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    emit("lanpush-browse: " + String(decoding: data, as: UTF8.self))
}

private final class TerminationFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

private func emit(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
