import Foundation

/// HA-native mode's settings, resolved from the `home_assistant` config section, the environment and the port
/// actually bound.
///
/// - Off unless `url` is set or `enabled: true`; `enabled: false` turns it off whatever else is set.
/// - `enabled: true` without a `url` (the add-on's toggle) and `url: http://supervisor/core` use the Supervisor's
///   proxy: REST under `http://supervisor/core/api`, the websocket at `ws://supervisor/core/websocket`, and
///   `$SUPERVISOR_TOKEN` when no token is configured.
/// - Any other URL is HA's own base URL (`http://host:8123`; a trailing `/` or `/api` is dropped).
/// - `push_url` (what HA posts to when the local push channel is down) defaults to lanpush's own
///   relay-compatible ingest on 127.0.0.1 when HA is on the same host (loopback, the Supervisor, the add-on
///   host name `homeassistant`), else on the listen address when that is a specific one; otherwise there is no
///   push_url and HA has the channel only (it then says "Device not connected to local push notifications"
///   while the channel is down) — set `push_url` to an address HA can reach.
struct HomeAssistantSettings: Equatable, Sendable {
    static let supervisorURL = "http://supervisor/core"
    /// `app_id` of every registration: names lanpush (the unique id HA gives the config entry is
    /// `<app_id>-<device_id>`, which is how lanpush finds its own entries).
    static let appId = "io.lanpush.gateway"
    static let ingestPath = "/api/sendPushNotification"

    /// The base URL as configured, normalized (no trailing `/`, no `/api`): shown in status, stored per registration.
    var baseURL: String
    /// Prefix of every REST path (`<restBase>/mobile_app/registrations`).
    var restBase: String
    var websocketURL: String
    /// `nil`: no token anywhere; the link reports it and does not connect.
    var token: String?
    var tokenSource: String
    /// The config file's devices to register and subscribe, in config order (the store's and those added at run
    /// time follow `exposes`).
    var deviceIds: [String]
    var pushURL: String?
    var isSupervisor: Bool
    /// Seconds between two sensor updates of one device (`home_assistant.sensor_interval`).
    var sensorInterval: Double = 5
    /// `home_assistant.devices` as configured: the ids to expose; empty = every device, those added at run time
    /// (the API, pairing) too.
    var listedDevices: [String] = []

    /// Whether HA-native mode makes device `id` a mobile_app device of HA.
    func exposes(_ id: String) -> Bool { listedDevices.isEmpty || listedDevices.contains(id) }

    /// The HA `device_id` of a lanpush device: stable, so HA's config entry unique id is too.
    static func haDeviceId(_ id: String) -> String { "lanpush-\(id)" }

    /// HA's REST API as the config reaches it — whether or not HA-native mode is on (`enabled: false` with a `url`
    /// and `token` still lets a device fall back through HA's notify actions): the API's base and the token, or
    /// `nil` when neither a `url` nor the add-on's Supervisor gives one.
    static func restAccess(_ config: GatewayConfig, environment: [String: String]) -> (restBase: String, token: String)? {
        let ha = config.homeAssistant
        guard ha.url != nil || ha.enabled == true else { return nil }
        let base = normalizedBase(ha.url ?? supervisorURL)
        var token = ha.token
        if token == nil, base.lowercased() == supervisorURL, let t = environment["SUPERVISOR_TOKEN"], !t.isEmpty { token = t }
        return token.map { (base + "/api", $0) }
    }

    /// `http://host:8123` with no trailing `/` and no `/api`.
    static func normalizedBase(_ url: String) -> String {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        if base.hasSuffix("/api") { base.removeLast(4) }
        return base
    }

    static func resolve(_ config: GatewayConfig, port: Int, environment: [String: String]) -> HomeAssistantSettings? {
        let ha = config.homeAssistant
        let enabled = ha.enabled ?? (ha.url != nil)
        guard enabled else { return nil }
        let base = normalizedBase(ha.url ?? supervisorURL)
        let isSupervisor = base.lowercased() == supervisorURL
        let restBase = base + "/api"
        let websocketURL: String
        if isSupervisor {
            websocketURL = "ws://supervisor/core/websocket"
        } else if base.lowercased().hasPrefix("https://") {
            websocketURL = "wss://" + base.dropFirst(8) + "/api/websocket"
        } else {
            websocketURL = "ws://" + base.dropFirst(7) + "/api/websocket"
        }
        var token = ha.token
        var tokenSource = "config"
        if token == nil, isSupervisor, let t = environment["SUPERVISOR_TOKEN"], !t.isEmpty {
            token = t
            tokenSource = "SUPERVISOR_TOKEN"
        }
        if token == nil { tokenSource = "none" }
        let listed = ha.devices ?? []
        let exposed = config.devices.map(\.id).filter { listed.isEmpty || listed.contains($0) }
        let pushURL = ha.pushURL ?? defaultPushURL(haHost: host(of: base), isSupervisor: isSupervisor, listenHost: config.listenHost, port: port)
        return HomeAssistantSettings(
            baseURL: base, restBase: restBase, websocketURL: websocketURL, token: token, tokenSource: tokenSource,
            deviceIds: exposed, pushURL: pushURL, isSupervisor: isSupervisor, sensorInterval: ha.sensorInterval,
            listedDevices: listed)
    }

    static func defaultPushURL(haHost: String, isSupervisor: Bool, listenHost: String, port: Int) -> String? {
        let wildcard = ["0.0.0.0", "::", ""].contains(listenHost)
        let sameHost = isSupervisor || ["127.0.0.1", "localhost", "::1", "homeassistant"].contains(haHost.lowercased())
            || haHost.hasPrefix("127.")
        let host: String
        if sameHost && (wildcard || listenHost.hasPrefix("127.") || listenHost == "::1") {
            host = wildcard ? "127.0.0.1" : listenHost
        } else if !wildcard {
            host = listenHost
        } else {
            return nil
        }
        let h = host.contains(":") ? "[\(host)]" : host
        return "http://\(h):\(port)\(ingestPath)"
    }

    /// Host part of an `http(s)://host[:port]/...` URL (brackets of an IPv6 literal removed).
    static func host(of url: String) -> String {
        guard let range = url.range(of: "://") else { return "" }
        var rest = url[range.upperBound...]
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            return String(rest[rest.index(after: rest.startIndex)..<close])
        }
        if let colon = rest.lastIndex(of: ":") { rest = rest[..<colon] }
        return String(rest)
    }

    /// HA's `slugify` (python-slugify with `_`) closely enough to name the notify service a device gets:
    /// `notify.mobile_app_<slug of device_name>`.
    static func slug(_ name: String) -> String {
        let folded = name.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).lowercased()
        var out = ""
        var pendingSeparator = false
        for scalar in folded.unicodeScalars {
            if scalar.isASCII, CharacterSet.alphanumerics.contains(scalar) {
                if pendingSeparator && !out.isEmpty { out.append("_") }
                pendingSeparator = false
                out.unicodeScalars.append(scalar)
            } else {
                pendingSeparator = true
            }
        }
        return out
    }
}
