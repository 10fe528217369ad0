import Foundation
import LanpushOpenSSL

/// The certificate lanpushd serves `wss://` and `https://` with, and its fingerprint — the hex SHA-256 of its DER,
/// which the mDNS TXT record and pairing URLs carry so a client can pin it on first use (a self-signed certificate
/// has no authority to vouch for it).
struct TLSIdentity: Sendable, Equatable {
    let certificatePath: String
    let keyPath: String
    let fingerprint: String

    /// Ten years: a home gateway's certificate should not expire under a client that pinned it.
    static let lifetime: TimeInterval = 10 * 365.25 * 86_400

    /// The configured files, or the self-signed pair in `state/tls/` (made the first time). `nil` when TLS is off.
    static func load(_ tls: GatewayConfig.TLS, stateDirectory: String, hostName: String, now: Date = Date()) throws -> TLSIdentity? {
        guard tls.enabled else { return nil }
        if let cert = tls.cert, let key = tls.key {
            return TLSIdentity(certificatePath: cert, keyPath: key, fingerprint: try fingerprint(ofPEMFile: cert, key: "tls.cert"))
        }
        let dir = (stateDirectory as NSString).appendingPathComponent("tls")
        let certPath = (dir as NSString).appendingPathComponent("cert.pem")
        let keyPath = (dir as NSString).appendingPathComponent("key.pem")
        let fm = FileManager.default
        if !(fm.fileExists(atPath: certPath) && fm.fileExists(atPath: keyPath)) {
            try fm.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let (certPEM, keyPEM) = try selfSigned(hostName: hostName, now: now)
            guard fm.createFile(atPath: keyPath, contents: Data(keyPEM.utf8), attributes: [.posixPermissions: 0o600]),
                fm.createFile(atPath: certPath, contents: Data(certPEM.utf8))  // public: the umask decides
            else {
                throw ConfigError(key: "tls", message: "cannot write the certificate to \(dir)")
            }
        }
        return TLSIdentity(certificatePath: certPath, keyPath: keyPath, fingerprint: try fingerprint(ofPEMFile: certPath, key: "tls"))
    }

    /// A P-256 key and a self-signed certificate for it, named after this host (and `localhost`), valid from an hour
    /// ago (a client whose clock runs a little behind still takes it) for ``lifetime``.
    static func selfSigned(hostName: String, now: Date) throws -> (certificate: String, key: String) {
        var names = ["localhost"]
        if !hostName.isEmpty, hostName != "localhost" { names.insert(hostName, at: 0) }
        let start = Int64(now.timeIntervalSince1970.rounded(.down))
        let made = try SelfSignedCertificate(
            commonName: "lanpush on \(hostName)", dnsNames: names, notBefore: start - 3600, notAfter: start + Int64(lifetime))
        return (made.certificatePEM, made.privateKeyPEM)
    }

    static func fingerprint(ofPEMFile path: String, key: String) throws -> String {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(key: key, message: "cannot read \(path): \(error.localizedDescription)")
        }
        do {
            return try CertificateFingerprint.sha256(ofPEM: text).lowercaseHex
        } catch {
            throw ConfigError(key: key, message: "\(path) is not a PEM certificate: \(error)")
        }
    }
}
