import Foundation
import LanpushCore
import Testing

@testable import LanpushGateway

/// `lanpush.yaml` and the add-on's `options.json` (the same keys): the shipped file is the defaults, every wrong
/// value stops the start with the key that is wrong.
@Suite struct ConfigLoaderTests {
    static let shippedConfig = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Config/lanpush.yaml").path

    static let token = "0123456789abcdef0123"

    /// The key a config text is refused for (nil: accepted).
    static func refusedKey(_ text: String) -> String? {
        do {
            _ = try ConfigLoader.parse(text)
            return nil
        } catch let error as ConfigError {
            return error.key
        } catch {
            return "not a ConfigError: \(error)"
        }
    }

    @Test func theShippedFileIsTheDefaults() throws {
        let parsed = try ConfigLoader.load(path: Self.shippedConfig)
        var expected = GatewayConfig()
        expected.homeAssistant.devices = []  // the file lists none; the code's default is "not given"
        #expect(parsed == expected)
        // Spot checks against the documented defaults, so a changed default shows up here too.
        #expect(parsed.listenHost == "0.0.0.0" && parsed.listenPort == 8765)
        #expect(parsed.adminToken == nil && parsed.viewerToken == nil && !parsed.openMetrics && parsed.logLevel == "info")
        #expect(parsed.session == GatewayConfig.Session(pingInterval: 10, pingTimeout: 10, ackTimeout: 10, window: 32))
        #expect(parsed.limits.maxBody == 65536 && parsed.limits.maxSessions == 10000 && parsed.limits.notificationQueueBytes == 1 << 20)
        #expect(parsed.limits.resumeHistoryBytes == 8 << 20)
        #expect(parsed.relay.upstream == "https://mobile-apps.home-assistant.io" && parsed.relay.minUpdateInterval == 15)
        #expect(parsed.relay.startsPerHour == 10 && parsed.relay.quota == 500 && parsed.relay.quotaReserve == 50 && parsed.relay.timeout == 10)
        #expect(parsed.mdns.enabled && parsed.mdns.name == nil && parsed.store.synchronous == "normal" && parsed.store.enabled)
        #expect(parsed.store.cacheBytes == 262_144)
        #expect(parsed.homeAssistant.url == nil && parsed.homeAssistant.enabled == nil && parsed.deprecations.isEmpty)
    }

    @Test func anEmptyFileIsTheDefaults() throws {
        #expect(try ConfigLoader.parse("") == GatewayConfig())
        #expect(try ConfigLoader.parse("# nothing\n") == GatewayConfig())
    }

    @Test func devicesAndTheirNotificationRouting() throws {
        let c = try ConfigLoader.parse("""
            devices:
              - {id: kitchen-tablet, name: Kitchen tablet, token: "\(Self.token)"}
              - {id: phone.1, token: "\(Self.token)x", notifications: both}
              - {id: P_2, token: "\(Self.token)y", notifications: RELAY}
            """)
        #expect(c.devices.map(\.id) == ["kitchen-tablet", "phone.1", "P_2"])
        #expect(c.devices.map(\.name) == ["Kitchen tablet", "phone.1", "P_2"])
        #expect(c.devices.map(\.notifications) == [.auto, .both, .relay])
    }

    @Test(arguments: [
        ("devices: [{id: a, token: short}]", "devices[0].token"),
        ("devices: [{id: a}]", "devices[0].token"),
        ("devices: [{token: \"\(token)\"}]", "devices[0].id"),
        ("devices: [{id: 'a b', token: \"\(token)\"}]", "devices[0].id"),
        ("devices: [{id: a, token: \"\(token)\"}, {id: a, token: \"\(token)x\"}]", "devices[1].id"),
        ("devices: [{id: a, token: \"\(token)\"}, {id: b, token: \"\(token)\"}]", "devices[1].token"),
        ("devices: [{id: a, token: \"\(token)\", notifications: sometimes}]", "devices[0].notifications"),
        ("devices: [{id: a, token: \"\(token)\", colour: red}]", "devices[0].colour"),
        ("devices: [a]", "devices[0]"),
        ("devices: {a: 1}", "devices"),
        ("listn: ':1'", "listn"),
        ("session: {ping_intervl: 5}", "session.ping_intervl"),
        ("session: {window: 0}", "session.window"),
        ("session: {window: 4097}", "session.window"),
        ("session: {window: true}", "session.window"),
        ("session: {window: 2.5}", "session.window"),
        ("session: {ack_timeout: 0.05}", "session.ack_timeout"),
        ("session: {ping_interval: fast}", "session.ping_interval"),
        ("session: 5", "session"),
        ("limits: {max_body: 100}", "limits.max_body"),
        ("limits: {max_sessions: 0}", "limits.max_sessions"),
        ("limits: {notification_queue_bytes: 4095}", "limits.notification_queue_bytes"),
        ("limits: {notification_queue: 0}", "limits.notification_queue"),
        ("limits: {resume_history_bytes: 65535}", "limits.resume_history_bytes"),
        ("limits: {resume_history_bytes: 1073741825}", "limits.resume_history_bytes"),
        ("limits: {resume_history_bytes: 8MiB}", "limits.resume_history_bytes"),
        ("relay: {upstream: 'ftp://relay'}", "relay.upstream"),
        ("relay: {starts_per_hour: 0}", "relay.starts_per_hour"),
        ("relay: {quota: 0}", "relay.quota"),
        ("relay: {min_update_interval: -1}", "relay.min_update_interval"),
        ("relay: {timeout: 0}", "relay.timeout"),
        ("open_metrics: 3", "open_metrics"),
        ("log_level: verbose", "log_level"),
        ("store: {synchronous: extra}", "store.synchronous"),
        ("store: {cache_bytes: 65535}", "store.cache_bytes"),
        ("store: {cache_bytes: 1073741825}", "store.cache_bytes"),
        ("mdns: {interfaces: ['eth0 wlan0']}", "mdns.interfaces[0]"),
        ("home_assistant: {devices: [ghost]}", "home_assistant.devices[0]"),
        ("home_assistant: {url: 'homeassistant.local:8123'}", "home_assistant.url"),
        ("[1, 2]", "(root)"),
        ("a: [", "(file)"),
    ])
    func aWrongValueNamesItsKey(text: String, key: String) {
        #expect(Self.refusedKey(text) == key)
    }

    @Test(arguments: [
        ("0.0.0.0:8765", "0.0.0.0", 8765), (":9000", "0.0.0.0", 9000), ("[::1]:8765", "::1", 8765),
        ("127.0.0.1:0", "127.0.0.1", 0), ("lanpush.local:65535", "lanpush.local", 65535),
    ])
    func listenForms(text: String, host: String, port: Int) throws {
        let c = try ConfigLoader.parse("listen: '\(text)'")
        #expect(c.listenHost == host && c.listenPort == port)
    }

    @Test(arguments: ["8765", "host:", "host:65536", "host:-1", "host:http", "[::1]"])
    func aListenThatIsNoHostAndPortIsRefused(text: String) {
        #expect(Self.refusedKey("listen: '\(text)'") == "listen")
    }

    @Test func theResumeHistoryBudgetIsReadWithinItsRange() throws {
        #expect(try ConfigLoader.parse("limits: {resume_history_bytes: 65536}").limits.resumeHistoryBytes == 65536)
        #expect(try ConfigLoader.parse("limits: {resume_history_bytes: 1073741824}").limits.resumeHistoryBytes == 1 << 30)
        #expect(try ConfigLoader.parse("limits: {max_body: 65536}").limits.resumeHistoryBytes == 8 << 20)
        do {
            _ = try ConfigLoader.parse("limits: {resume_history_bytes: 1024}")
            Issue.record("a budget below 64 KiB was accepted")
        } catch let error as ConfigError {
            #expect(error.key == "limits.resume_history_bytes" && error.message == "must be from 65536 to 1073741824")
        }
    }

    @Test func theDeprecatedCountBoundIsAcceptedWithADeprecation() throws {
        let c = try ConfigLoader.parse("limits: {notification_queue: 100}")
        #expect(c.limits.notificationQueueBytes == 1 << 20)
        #expect(c.deprecations.count == 1 && c.deprecations.first?.contains("limits.notification_queue_bytes") == true)
    }

    @Test func valuesAreReadAsWrittenAndCaseFolded() throws {
        let c = try ConfigLoader.parse("""
            admin_token: "a-long-admin-token-0123456789abcdef"
            viewer_token: ""
            log_level: WARNING
            session: {ack_timeout: 2.5, window: 4096}
            store: {synchronous: FULL, enabled: false, cache_bytes: 1048576}
            relay: {upstream: "http://relay.lan/", min_update_interval: 0}
            mdns: {enabled: false, name: "", interfaces: [eth0, "end0.10"]}
            home_assistant: {enabled: true, devices: [""]}
            """)
        #expect(c.adminToken == "a-long-admin-token-0123456789abcdef" && c.viewerToken == nil && c.logLevel == "warning")
        #expect(c.session.ackTimeout == 2.5 && c.session.window == 4096)
        #expect(c.store.synchronous == "full" && !c.store.enabled && c.store.cacheBytes == 1 << 20)
        #expect(c.relay.upstream == "http://relay.lan/" && c.relay.minUpdateInterval == 0)
        #expect(!c.mdns.enabled && c.mdns.name == nil)
        // An empty entry is what the add-on's UI leaves in a list: it means nothing.
        #expect(c.homeAssistant.enabled == true && c.homeAssistant.devices == [])
    }

    /// The add-on's Supervisor writes the options as JSON (`/data/options.json`); lanpushd reads it as its config.
    @Test func theAddOnsOptionsJSONParsesLikeTheSameYAML() throws {
        let json = """
            {"listen":"0.0.0.0:8765","admin_token":"","viewer_token":"","open_metrics":false,"log_level":"info",
             "devices":[{"id":"kitchen-tablet","name":"Kitchen tablet","token":"\(Self.token)","notifications":"lan"}],
             "session":{"ping_interval":10,"ping_timeout":10,"ack_timeout":10,"window":32},
             "limits":{"max_body":65536,"max_sessions":10000,"notification_queue_bytes":1048576},
             "relay":{"upstream":"https://mobile-apps.home-assistant.io","min_update_interval":15,"starts_per_hour":10,
                      "quota":500,"quota_reserve":50,"timeout":10},
             "mdns":{"enabled":true,"name":"","interfaces":[]},"store":{"synchronous":"normal"},
             "home_assistant":{"enabled":false,"url":"","token":"","devices":[]}}
            """
        let yaml = """
            listen: "0.0.0.0:8765"
            devices:
              - id: kitchen-tablet
                name: Kitchen tablet
                token: "\(Self.token)"
                notifications: lan
            home_assistant: {enabled: false, devices: []}
            """
        let fromJSON = try ConfigLoader.parse(json)
        #expect(fromJSON == (try ConfigLoader.parse(yaml)))
        #expect(fromJSON.devices.first?.notifications == .lan && fromJSON.homeAssistant.enabled == false)
        #expect(Self.refusedKey(#"{"session":{"window":"32"}}"#) == "session.window")
    }

    /// Found by `scripts/fuzz config`: a list or mapping used as a key (a stray `{` in the file) trapped inside Yams
    /// and took the daemon down at start with a Swift runtime error instead of naming the key.
    @Test func aKeyThatIsAListOrAMappingIsRefusedNotACrash() {
        #expect(Self.refusedKey("{a: 1, {b: 2}: 3}") == "(root)")
        #expect(Self.refusedKey("session: {? [a, b] : 1}") == "session")
        #expect(Self.refusedKey("devices:\n  - {id: x, {token: y}: z}") == "devices[0]")
        #expect(Self.refusedKey("""
            {
              "listen": "\u{E5}\u{CF}:8765",
              "open_metrics": false,{ "log_level": "info",
              "devive": 25,}
            }
            """) == "(root)")
    }

    /// Found by scripts/fuzz config: `&a :` is an anchor on an empty key, and the refusal named the key `''`.
    /// Found by `scripts/fuzz config`: Yams traps (an arithmetic overflow) constructing a YAML 1.1 base-60 integer
    /// too large for an Int, anywhere in the file, so lanpushd died at start instead of naming the key.
    @Test func aBase60NumberTooLargeIsRefusedNotACrash() throws {
        #expect(Self.refusedKey("session:\n  ping_timeout: -111111111111111111:11:10") == "session.ping_timeout")
        #expect(Self.refusedKey("anything: 1:2:3:4:5:6:7:8:9:10:11:12") == "anything")  // 60^11 alone passes Int.max
        #expect(Self.refusedKey("devices:\n  - {id: x, n: [153722867280912931:0]}") == "devices[0].n[0]")
        // Base 60 that fits is read as YAML 1.1 reads it (1:30 is 90), and refused or taken as any number is.
        #expect(try ConfigLoader.parse("session:\n  ping_timeout: 1:30").session.pingTimeout == 90)
        #expect(Self.refusedKey("unknown: 153722867280912930:0") == "unknown")  // fits; an unknown key as always
        #expect(!ConfigLoader.sexagesimalOverflows("153722867280912930:0") && ConfigLoader.sexagesimalOverflows("153722867280912931:0"))
    }

    @Test func anEmptyKeyIsRefusedNamingWhereItIs() {
        #expect(Self.refusedKey("&a :") == "(root)")
        #expect(Self.refusedKey("\"\": 1") == "(root)")
        #expect(Self.refusedKey("session:\n  \"\": 5") == "session")
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: ConfigError.self) { try ConfigLoader.load(path: "/nonexistent/lanpush.yaml") }
        #expect((try? ConfigLoader.load(path: "/nonexistent/lanpush.yaml")) == nil)
    }

    /// Tokens a LAN can guess are refused at start (and by `--check-config`): short ones, and the same secret used
    /// for two roles.
    @Test func guessableAndSharedSecretsAreRefused() {
        let long = String(repeating: "k", count: 32)
        #expect(Self.refusedKey("admin_token: a") == "admin_token")
        #expect(Self.refusedKey("admin_token: \(String(repeating: "a", count: 31))") == "admin_token")
        #expect(Self.refusedKey("admin_token: \(long)\nviewer_token: short") == "viewer_token")
        #expect(Self.refusedKey("admin_token: \(long)\nviewer_token: \(long)") == "viewer_token")
        #expect(Self.refusedKey("admin_token: \(long)\ndevices:\n  - {id: p, token: \(long)}") == "devices[0].token")
        #expect((try? ConfigLoader.parse("admin_token: \(long)\nviewer_token: \(long)v"))?.viewerToken == long + "v")
    }

    @Test func theLANDefencesKeysAreReadAndChecked() throws {
        let c = try ConfigLoader.parse("""
            http: {allowed_hosts: [NAS.lan, "*.home.arpa", ""]}
            relay: {allowed_push_urls: ["http://192.168.1.9:8080/relay"], proxy_unknown_tokens: true, proxy_per_minute: 5, max_hold: 60}
            limits: {pairing_attempts: 3, unauthenticated_per_address: 2, connections_per_address: 16, pairing_failures: 60}
            session: {keepalive_min: 20, keepalive_max: 600}
            devices:
              - {id: pixel, token: "\(Self.token)", fallback: notify.mobile_app_pixel}
            """)
        #expect(c.http.allowedHosts == ["nas.lan", "*.home.arpa"])
        #expect(c.relay.allowedPushURLs == ["http://192.168.1.9:8080/relay"] && c.relay.proxyUnknownTokens)
        #expect(c.relay.proxyPerMinute == 5 && c.relay.maxHold == 60)
        #expect(c.limits.pairingAttempts == 3 && c.limits.unauthenticatedPerAddress == 2 && c.limits.connectionsPerAddress == 16)
        #expect(c.session.keepaliveMin == 20 && c.session.keepaliveMax == 600)
        #expect(c.devices.first?.fallback == "notify.mobile_app_pixel")
        #expect(c.deprecations.contains { $0.contains("limits.pairing_failures") })
        #expect(Self.refusedKey("http: {allowed_hosts: [\"http://nas.lan/\"]}") == "http.allowed_hosts[0]")
        #expect(Self.refusedKey("relay: {allowed_push_urls: [\"nas.lan\"]}") == "relay.allowed_push_urls[0]")
        #expect(Self.refusedKey("session: {keepalive_min: 400}") == "session.keepalive_max")
        #expect(Self.refusedKey("devices:\n  - {id: p, token: \"\(Self.token)\", fallback: mobile_app_pixel}") == "devices[0].fallback")
    }
}
