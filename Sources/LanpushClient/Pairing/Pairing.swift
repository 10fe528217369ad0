import Foundation
import LanpushCore

/// A pairing URL (PROTOCOL.md, "Pairing"): `lanpush://HOST:PORT/pair?code=CODE[&fp=SHA256][&alt=HOST2:PORT2 ...]`,
/// shown by the gateway as a QR code. With `fp` the gateway serves TLS and its certificate is pinned to it.
public struct PairingURL: Sendable, Hashable {
    /// `HOST:PORT` first, then the `alt` addresses, in the order to try them.
    public var addresses: [String]
    public var code: String
    /// The hex SHA-256 of the gateway certificate's DER.
    public var fingerprint: String?

    public init?(_ text: String) {
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespacesAndNewlines)),
            components.scheme?.lowercased() == "lanpush", let host = components.host, !host.isEmpty,
            components.path == "/pair" || components.path == "pair"
        else { return nil }
        let items = components.queryItems ?? []
        guard let code = items.first(where: { $0.name == "code" })?.value, !code.isEmpty else { return nil }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let first = components.port.map { "\(hostPart):\($0)" } ?? hostPart
        let alternates = items.filter { $0.name == "alt" }.compactMap(\.value).flatMap { $0.split(separator: " ").map(String.init) }
        self.addresses = [first] + alternates.filter { !$0.isEmpty && $0 != first }
        self.code = code
        let fp = items.first(where: { $0.name == "fp" })?.value
        self.fingerprint = fp.flatMap { $0.isEmpty ? nil : CertificatePin.normalized($0) }
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
    /// The gateway's HTTP status (403: the code is unknown, used or expired; 429: too many failures), when it answered.
    public let status: Int?
    public var description: String { message }
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
