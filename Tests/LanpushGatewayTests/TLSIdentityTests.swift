import Foundation
import Testing

@testable import LanpushGateway

/// The certificate made at first start: kept, private key unreadable by others, fingerprint = SHA-256 of the DER as
/// OpenSSL computes it, reused on the next start, and a user's own PEM files taken as given.
@Suite struct TLSIdentityTests {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lanpush-tls-\(UUID().uuidString)").path

    func openssl(_ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test func aSelfSignedCertificateIsMadeOnceAndItsFingerprintIsTheDERsSHA256() throws {
        var tls = GatewayConfig.TLS()
        tls.enabled = true
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try #require(try TLSIdentity.load(tls, stateDirectory: dir, hostName: "gateway", now: now))
        let keyMode = try FileManager.default.attributesOfItem(atPath: first.keyPath)[.posixPermissions] as? Int
        #expect(keyMode == 0o600)
        let again = try #require(try TLSIdentity.load(tls, stateDirectory: dir, hostName: "other", now: now))
        #expect(again == first)
        let fp = try openssl(["x509", "-in", first.certificatePath, "-noout", "-fingerprint", "-sha256"])
        let hex = fp.split(separator: "=").last.map { $0.replacingOccurrences(of: ":", with: "").lowercased() }
        #expect(hex?.trimmingCharacters(in: .whitespacesAndNewlines) == first.fingerprint)
        let text = try openssl(["x509", "-in", first.certificatePath, "-noout", "-text"])
        #expect(text.contains("DNS:gateway, DNS:localhost") && text.contains("TLS Web Server Authentication"))
        #expect(text.contains("ASN1 OID: prime256v1") && text.contains("Signature Algorithm: ecdsa-with-SHA256"))
        let named = try openssl(["x509", "-in", first.certificatePath, "-noout", "-subject", "-issuer", "-startdate", "-enddate"])
        // An hour before 2027-01-15 08:00 UTC, and ten years of 365.25 days after it.
        #expect(named == """
            subject=CN = lanpush on gateway
            issuer=CN = lanpush on gateway
            notBefore=Jan 15 07:00:00 2027 GMT
            notAfter=Jan 14 20:00:00 2037 GMT

            """)
        // The key matches the certificate.
        let certKey = try openssl(["x509", "-in", first.certificatePath, "-noout", "-pubkey"])
        let keyPub = try openssl(["pkey", "-in", first.keyPath, "-pubout"])
        #expect(!certKey.isEmpty && certKey == keyPub)
    }

    @Test func onLocalhostTheCertificateNamesOnlyLocalhost() throws {
        let made = try TLSIdentity.selfSigned(hostName: "localhost", now: Date())
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try made.certificate.write(toFile: dir + "/cert.pem", atomically: true, encoding: .utf8)
        let names = try openssl(["x509", "-in", dir + "/cert.pem", "-noout", "-ext", "subjectAltName"])
        #expect(names.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces) == "DNS:localhost")
    }

    @Test func aGivenCertificateIsUsedAsItIsAndAMissingOneNamesTheKey() throws {
        let made = try TLSIdentity.selfSigned(hostName: "h", now: Date())
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try made.certificate.write(toFile: dir + "/mine.pem", atomically: true, encoding: .utf8)
        try made.key.write(toFile: dir + "/mine.key", atomically: true, encoding: .utf8)
        var tls = GatewayConfig.TLS()
        tls.enabled = true
        tls.cert = dir + "/mine.pem"
        tls.key = dir + "/mine.key"
        let identity = try #require(try TLSIdentity.load(tls, stateDirectory: dir, hostName: "h"))
        #expect(identity.certificatePath == dir + "/mine.pem" && identity.fingerprint.count == 64)
        #expect(!FileManager.default.fileExists(atPath: dir + "/tls"))
        tls.cert = dir + "/absent.pem"
        #expect(throws: ConfigError.self) { try TLSIdentity.load(tls, stateDirectory: dir, hostName: "h") }
        tls.enabled = false
        #expect(try TLSIdentity.load(tls, stateDirectory: dir, hostName: "h") == nil)
    }
}
