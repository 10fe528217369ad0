import Foundation
import LanpushCore

/// A pairing (docs/CLIENTS.md, "Pairing URL"): the URL the gateway shows as a QR code,
/// `lanpush://HOST:PORT/pair?code=CODE[&fp=SHA256][&alt=HOST2:PORT2]...`, or a code typed by hand with the gateway's
/// address. With a fingerprint the gateway serves TLS and its certificate is pinned to it.
public struct PairingURL: Sendable, Hashable {
    /// `HOST:PORT` first, then the `alt` addresses, in the order to try them; each once.
    public var addresses: [String]
    public var code: String
    /// The hex SHA-256 of the gateway certificate's DER.
    public var fingerprint: String?

    /// A pairing URL; nil for anything else (a short code, or a URL `read` refuses).
    public init?(_ text: String) {
        guard let url = try? Self.pairingURL(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        self = url
    }

    /// What a pairing names before it is redeemed: a pairing URL, or a code typed by hand (the short code, or the
    /// whole code) at the gateway's `address` (`HOST:PORT` or a URL of the gateway), pinned to `fingerprint` if given.
    /// Throws for input that names no gateway or no code, or a fingerprint no certificate can have.
    public static func read(
        _ input: String, address: String? = nil, fingerprint: String? = nil
    ) throws(PairingError) -> PairingURL {
        let text = input.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.contains("://") { return try pairingURL(text) }
        guard !text.isEmpty else { throw PairingError("no pairing code: scan the pairing URL or type the short code") }
        guard let address else { throw PairingError("a short code needs the gateway's address") }
        let pin = try fingerprint.map(Self.pin)
        // Sent as typed: the gateway reads it case-insensitively, hyphens and spaces ignored, I/L as 1 and O as 0.
        return PairingURL(addresses: [hostPort(address)], code: text, fingerprint: pin)
    }

    init(addresses: [String], code: String, fingerprint: String?) {
        self.addresses = addresses
        self.code = code
        self.fingerprint = fingerprint
    }

    private static func pairingURL(_ text: String) throws(PairingError) -> PairingURL {
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "lanpush",
            components.path == "/pair"
        else { throw PairingError("not a pairing URL (lanpush://HOST:PORT/pair?code=…): \(text)") }
        guard let host = components.host, !host.isEmpty else { throw PairingError("the pairing URL names no address") }
        let items = components.queryItems ?? []
        guard let code = items.first(where: { $0.name == "code" })?.value, !code.isEmpty else {
            throw PairingError("the pairing URL has no code")
        }
        let pin = try items.first(where: { $0.name == "fp" })?.value.flatMap { $0.isEmpty ? nil : $0 }.map(Self.pin)
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let first = components.port.map { "\(hostPart):\($0)" } ?? hostPart
        // An `alt` may hold several addresses, separated by spaces.
        let alternates = items.filter { $0.name == "alt" }.compactMap(\.value).flatMap { $0.split(separator: " ").map(String.init) }
        var addresses: [String] = []
        for address in [first] + alternates where !addresses.contains(address) { addresses.append(address) }
        return PairingURL(addresses: addresses, code: code, fingerprint: pin)
    }

    /// The fingerprint to pin, or why `text` can be no certificate's.
    private static func pin(_ text: String) throws(PairingError) -> String {
        guard let hex = CertificatePin.hex(text) else {
            throw PairingError("not a SHA-256 fingerprint (64 hex digits): \(text)")
        }
        return hex
    }

    /// `192.168.1.5:8765`, `http://192.168.1.5:8765/`, `ws://…/v1/stream` → `192.168.1.5:8765`.
    private static func hostPort(_ address: String) -> String {
        var rest = Substring(address.trimmingCharacters(in: .whitespaces))
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        return String(rest.prefix { $0 != "/" })
    }

    /// How TLS checks this gateway: pinned when the URL carries a fingerprint.
    public var tls: TLSPolicy { fingerprint.map { .pinned(sha256: $0) } ?? .system }

    var secure: Bool { fingerprint != nil }

    func url(_ address: String, path: String, websocket: Bool) -> URL? {
        let scheme = websocket ? (secure ? "wss" : "ws") : (secure ? "https" : "http")
        return URL(string: "\(scheme)://\(address)\(path)")
    }
}

/// A redeemed pairing: the device and its new token, and where its stream is.
public struct PairedGateway: Sendable, Hashable {
    public var deviceId: String
    public var token: String
    /// `ws://` or, with a fingerprint, `wss://HOST:PORT/v1/stream` of the address that answered.
    public var streamURL: URL
    public var fingerprint: String?

    public var tls: TLSPolicy { fingerprint.map { .pinned(sha256: $0) } ?? .system }

    /// A device configuration for this gateway (add a store, a registration…).
    public func configuration(store: (any StateStore)? = nil) -> LanpushConfiguration {
        var c = LanpushConfiguration(url: streamURL, token: token, role: .device, store: store)
        c.tls = tls
        return c
    }
}

public struct PairingError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// The gateway's HTTP status (403: the code is unknown, used or expired; 429: too many failures), when it answered;
    /// nil when none did, or the pairing was refused before anything was sent.
    public let status: Int?
    public var description: String { message }

    init(message: String, status: Int?) {
        self.message = message
        self.status = status
    }

    init(_ message: String) { self.init(message: message, status: nil) }
}

extension PairingURL {
    /// Redeems the code (`POST /v1/pair`), trying each address until one answers. The device's previous token stops
    /// working at once; keep the new one.
    public func redeem(transport: any LanpushTransport = PlatformTransport()) async throws -> PairedGateway {
        var failures: [String] = []
        for address in addresses {
            guard let url = url(address, path: "/v1/pair", websocket: false),
                let stream = self.url(address, path: "/v1/stream", websocket: true)
            else { continue }
            let answer: (status: Int, body: JSONValue?)
            do {
                answer = try await transport.post(to: url, body: ["code": .string(code)], tls: tls)
            } catch {
                failures.append("\(address): \(error)")
                continue
            }
            guard answer.status == 200 else {
                let message = answer.body?["message"]?.stringValue ?? "HTTP \(answer.status)"
                throw PairingError(message: "pairing refused: \(message)", status: answer.status)
            }
            guard let id = answer.body?["device_id"]?.stringValue, let token = answer.body?["token"]?.stringValue else {
                throw PairingError(message: "pairing answer without device_id and token", status: answer.status)
            }
            let served = answer.body?["fingerprint"]?.stringValue.map(CertificatePin.normalized)
            if let fingerprint, let served, served != fingerprint {
                throw PairingError(message: "the gateway's fingerprint differs from the pairing URL's", status: answer.status)
            }
            return PairedGateway(deviceId: id, token: token, streamURL: stream, fingerprint: fingerprint)
        }
        throw PairingError(message: "no gateway address answered: " + failures.joined(separator: "; "), status: nil)
    }
}
