import Foundation
import LanpushCore
import Yams

/// Reads `GatewayConfig` from YAML (or JSON) text, naming the offending key on any error.
public enum ConfigLoader {
    public static func load(path: String) throws -> GatewayConfig {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(key: "(file)", message: "cannot read \(path): \(error.localizedDescription)")
        }
        return try parse(text)
    }

    public static func parse(_ text: String) throws -> GatewayConfig {
        let composed: Node?
        do {
            composed = try Yams.compose(yaml: text)
        } catch {
            throw ConfigError(key: "(file)", message: "not valid YAML: \(error)")
        }
        guard let composed else { return GatewayConfig() }
        // Yams 5 traps (a force unwrap in its constructor) on a key that is a list or a mapping, e.g. a stray `{`
        // in `{a: 1, {b: 2}: 3}`: refuse those before anything is constructed. An empty key (`"": 1`, or an anchor
        // with no name after it, `&a :`) is refused here too: no error could name it.
        if let path = firstPath(in: composed, where: hasBadKey) {
            throw ConfigError(key: path.isEmpty ? "(root)" : path, message: "a key must be a name, not empty, a list or a mapping")
        }
        // Yams 5 also traps (an arithmetic overflow) constructing a YAML 1.1 base-60 integer too large for an Int,
        // e.g. `ping_timeout: -111111111111111111:11:10`, anywhere in the file: refused before construction too.
        if let path = firstPath(in: composed, where: isOverflowingNumber) {
            throw ConfigError(
                key: path.isEmpty ? "(root)" : path, message: "a number too large (YAML's base-60 notation, like 1:30:00)")
        }
        let node = composed.any
        guard let root = node as? [String: Any] else {
            throw ConfigError(key: "(root)", message: "must be a mapping of keys to values")
        }
        var reader = Reader(root, path: "")
        var config = GatewayConfig()
        if let listen = try reader.string("listen") {
            (config.listenHost, config.listenPort) = try parseListen(listen, key: "listen")
        }
        config.adminToken = try reader.string("admin_token").flatMap { $0.isEmpty ? nil : $0 }
        config.viewerToken = try reader.string("viewer_token").flatMap { $0.isEmpty ? nil : $0 }
        try checkSecrets(config)
        config.openMetrics = try reader.bool("open_metrics") ?? false
        config.logLevel = try reader.oneOf("log_level", ["trace", "debug", "info", "notice", "warning", "error"]) ?? "info"
        if let devices = try reader.list("devices") {
            var ids = Set<String>()
            var tokens = Set<String>()
            for (i, item) in devices.enumerated() {
                var d = try reader.nested(item, "devices[\(i)]")
                let id = try d.requiredString("id")
                guard id.range(of: #"^[A-Za-z0-9_.-]{1,64}$"#, options: .regularExpression) != nil else {
                    throw ConfigError(key: "devices[\(i)].id", message: "use 1-64 letters, digits, '.', '-' or '_'")
                }
                let token = try d.requiredString("token")
                guard token.count >= 16 else {
                    throw ConfigError(key: "devices[\(i)].token", message: "must be at least 16 characters (`lanpush token` makes one)")
                }
                guard ids.insert(id).inserted else { throw ConfigError(key: "devices[\(i)].id", message: "duplicate device id '\(id)'") }
                guard tokens.insert(token).inserted else { throw ConfigError(key: "devices[\(i)].token", message: "two devices share this token") }
                let name = try d.string("name") ?? id
                let routing = try d.oneOf("notifications", NotificationRouting.allCases.map(\.rawValue))
                    .flatMap(NotificationRouting.init(rawValue:)) ?? .auto
                let fallback = try d.string("fallback").flatMap { $0.isEmpty ? nil : $0 }
                if let fallback, fallback.range(of: #"^notify\.[a-z0-9_]{1,200}$"#, options: .regularExpression) == nil {
                    throw ConfigError(
                        key: "devices[\(i)].fallback", message: "must be a notify action such as notify.mobile_app_pixel")
                }
                try d.finish()
                if [config.adminToken, config.viewerToken].contains(token) {
                    throw ConfigError(key: "devices[\(i)].token", message: "must differ from admin_token and viewer_token")
                }
                config.devices.append(.init(id: id, name: name, token: token, notifications: routing, fallback: fallback))
            }
        }
        if var s = try reader.section("session") {
            config.session.pingInterval = try s.number("ping_interval", min: 1) ?? config.session.pingInterval
            config.session.pingTimeout = try s.number("ping_timeout", min: 1) ?? config.session.pingTimeout
            config.session.ackTimeout = try s.number("ack_timeout", min: 0.1) ?? config.session.ackTimeout
            config.session.window = try s.int("window", min: 1, max: 4096) ?? config.session.window
            config.session.keepaliveMin = try s.number("keepalive_min", min: 1) ?? config.session.keepaliveMin
            config.session.keepaliveMax = try s.number("keepalive_max", min: 1) ?? config.session.keepaliveMax
            guard config.session.keepaliveMin <= config.session.keepaliveMax, config.session.keepaliveMax <= 3600 else {
                throw ConfigError(key: "session.keepalive_max", message: "must be from keepalive_min to 3600 (seconds)")
            }
            try s.finish()
        }
        if var s = try reader.section("limits") {
            config.limits.maxBody = try s.int("max_body", min: 1024, max: 16 << 20) ?? config.limits.maxBody
            config.limits.maxSessions = try s.int("max_sessions", min: 1, max: 1_000_000) ?? config.limits.maxSessions
            config.limits.notificationQueueBytes =
                try s.int("notification_queue_bytes", min: 4096, max: 1 << 30) ?? config.limits.notificationQueueBytes
            config.limits.resumeHistoryBytes =
                try s.int("resume_history_bytes", min: 65536, max: 1 << 30) ?? config.limits.resumeHistoryBytes
            config.limits.authFailures = try s.int("auth_failures", min: 1, max: 1_000_000) ?? config.limits.authFailures
            config.limits.authWindow = try s.number("auth_window", min: 1) ?? config.limits.authWindow
            config.limits.pairingAttempts = try s.int("pairing_attempts", min: 1, max: 1000) ?? config.limits.pairingAttempts
            config.limits.unauthenticatedPerAddress =
                try s.int("unauthenticated_per_address", min: 1, max: 10_000) ?? config.limits.unauthenticatedPerAddress
            if try s.int("pairing_failures", min: 1, max: 1_000_000) != nil {
                config.deprecations.append(
                    "limits.pairing_failures is no longer used: each pairing has its own budget (limits.pairing_attempts)")
            }
            config.limits.headerTimeout = try s.int("header_timeout", min: 1, max: 600) ?? config.limits.headerTimeout
            config.limits.pendingPerAddress = try s.int("pending_per_address", min: 1, max: 1_000_000) ?? config.limits.pendingPerAddress
            config.limits.connectionsPerAddress =
                try s.int("connections_per_address", min: 1, max: 1_000_000) ?? config.limits.connectionsPerAddress
            if try s.int("notification_queue", min: 1, max: 100_000) != nil {
                config.deprecations.append(
                    "limits.notification_queue is no longer used: the queue is bounded in bytes (limits.notification_queue_bytes)")
            }
            try s.finish()
        }
        if var s = try reader.section("relay") {
            if let upstream = try s.string("upstream") {
                guard upstream.hasPrefix("http://") || upstream.hasPrefix("https://") else {
                    throw ConfigError(key: "relay.upstream", message: "must be an http:// or https:// URL")
                }
                config.relay.upstream = upstream
            }
            config.relay.minUpdateInterval = try s.number("min_update_interval", min: 0) ?? config.relay.minUpdateInterval
            config.relay.startsPerHour = try s.int("starts_per_hour", min: 1, max: 10_000) ?? config.relay.startsPerHour
            config.relay.quotaReserve = try s.int("quota_reserve", min: 0, max: 100_000) ?? config.relay.quotaReserve
            config.relay.quota = try s.int("quota", min: 1, max: 10_000_000) ?? config.relay.quota
            config.relay.timeout = try s.number("timeout", min: 0.1) ?? config.relay.timeout
            config.relay.maxHold = try s.number("max_hold", min: 1) ?? config.relay.maxHold
            config.relay.proxyUnknownTokens = try s.bool("proxy_unknown_tokens") ?? false
            config.relay.proxyPerMinute = try s.int("proxy_per_minute", min: 1, max: 100_000) ?? config.relay.proxyPerMinute
            config.relay.allowedPushURLs = try s.strings("allowed_push_urls")
            for (i, url) in config.relay.allowedPushURLs.enumerated() where PushURLPolicy.Origin(url) == nil {
                throw ConfigError(
                    key: "relay.allowed_push_urls[\(i)]", message: "must be an http:// or https:// URL with a host")
            }
            try s.finish()
        }
        if var s = try reader.section("http") {
            config.http.allowedHosts = try s.strings("allowed_hosts").map { $0.lowercased() }
            for (i, host) in config.http.allowedHosts.enumerated()
            where host.isEmpty || host.contains(where: { "/:@ ".contains($0) }) && !host.hasPrefix("[") {
                throw ConfigError(key: "http.allowed_hosts[\(i)]", message: "must be a host name (no scheme, port or path)")
            }
            try s.finish()
        }
        if var s = try reader.section("mdns") {
            config.mdns.enabled = try s.bool("enabled") ?? true
            config.mdns.name = try s.string("name").flatMap { $0.isEmpty ? nil : $0 }
            // Interface names for the HA add-on's own avahi-daemon (allow-interfaces); lanpushd itself
            // publishes through whatever avahi-daemon it reaches, so it only checks the shape.
            if let interfaces = try s.list("interfaces") {
                for (i, v) in interfaces.enumerated() {
                    guard let name = v as? String, name.range(of: #"^[A-Za-z0-9_.:@-]{1,15}$"#, options: .regularExpression) != nil else {
                        throw ConfigError(key: "mdns.interfaces[\(i)]", message: "must be a network interface name such as eth0")
                    }
                }
            }
            try s.finish()
        }
        if var s = try reader.section("tls") {
            config.tls.enabled = try s.bool("enabled") ?? false
            config.tls.cert = try s.string("cert").flatMap { $0.isEmpty ? nil : $0 }
            config.tls.key = try s.string("key").flatMap { $0.isEmpty ? nil : $0 }
            config.tls.plain = try s.bool("plain") ?? true
            if (config.tls.cert == nil) != (config.tls.key == nil) {
                throw ConfigError(key: config.tls.cert == nil ? "tls.cert" : "tls.key", message: "give both tls.cert and tls.key, or neither (a self-signed certificate is made)")
            }
            try s.finish()
        }
        if var s = try reader.section("store") {
            config.store.synchronous = try s.oneOf("synchronous", ["off", "normal", "full"]) ?? "normal"
            config.store.enabled = try s.bool("enabled") ?? true
            config.store.cacheBytes = try s.int("cache_bytes", min: 64 << 10, max: 1 << 30) ?? config.store.cacheBytes
            try s.finish()
        }
        if var s = try reader.section("home_assistant") {
            config.homeAssistant.url = try s.string("url").flatMap { $0.isEmpty ? nil : $0 }
            config.homeAssistant.token = try s.string("token").flatMap { $0.isEmpty ? nil : $0 }
            config.homeAssistant.devices = try s.list("devices").map { list in
                try list.enumerated().compactMap { i, v in
                    guard let id = v as? String else {
                        throw ConfigError(key: "home_assistant.devices[\(i)]", message: "must be a device id string")
                    }
                    // HA-native mode: an exposed device must exist; "" is an empty add-on list entry.
                    if id.isEmpty { return nil }
                    guard config.devices.contains(where: { $0.id == id }) else {
                        throw ConfigError(key: "home_assistant.devices[\(i)]", message: "no device '\(id)' in `devices`")
                    }
                    return id
                }
            }
            // HA-native mode: the on/off toggle (add-on: just this, with the Supervisor's token) and
            // the push_url HA falls back to when the local push channel is down.
            config.homeAssistant.enabled = try s.bool("enabled")
            config.homeAssistant.pushURL = try s.string("push_url").flatMap { $0.isEmpty ? nil : $0 }
            // HA-native mode's sensors: at most one update per device per this many seconds.
            if let interval = try s.number("sensor_interval", min: 0) {
                guard interval <= 3600 else {
                    throw ConfigError(key: "home_assistant.sensor_interval", message: "must be at most 3600 (seconds)")
                }
                config.homeAssistant.sensorInterval = interval
            }
            for (key, value) in [("url", config.homeAssistant.url), ("push_url", config.homeAssistant.pushURL)] {
                if let value, !(value.hasPrefix("http://") || value.hasPrefix("https://")) {
                    throw ConfigError(key: "home_assistant.\(key)", message: "must be an http:// or https:// URL")
                }
            }
            try s.finish()
        }
        try reader.finish()
        return config
    }

    /// Tokens a LAN can guess are no tokens: the admin and viewer tokens are long, and never the same.
    static func checkSecrets(_ config: GatewayConfig) throws {
        for (key, token) in [("admin_token", config.adminToken), ("viewer_token", config.viewerToken)] {
            if let token, token.count < 32 {
                throw ConfigError(key: key, message: "must be at least 32 characters (`lanpush token` makes one), or empty")
            }
        }
        if let viewer = config.viewerToken, viewer == config.adminToken {
            throw ConfigError(key: "viewer_token", message: "must differ from admin_token (the viewer only reads)")
        }
    }

    /// `HOST:PORT`, `:PORT` or `[IPv6]:PORT`.
    public static func parseListen(_ text: String, key: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw ConfigError(key: key, message: "expected HOST:PORT, got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ConfigError(key: key, message: "port must be a number from 0 to 65535, got '\(text)'")
        }
        return (host, port)
    }
}
