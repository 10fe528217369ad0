import Crypto
import LanpushOpenSSL
import SwiftASN1
import Testing
import X509

/// A certificate's fingerprint is the SHA-256 of its DER: checked against swift-crypto's hash of swift-certificates'
/// encoding, for a file of one certificate and for a chain (its first, the leaf).
@Suite struct CertificateFingerprintTests {
    func derSHA256(_ pem: String) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(try Certificate(pemEncoded: pem))
        return Array(SHA256.hash(data: serializer.serializedBytes))
    }

    func make() throws -> String {
        try SelfSignedCertificate(commonName: "fingerprint", dnsNames: ["localhost"], notBefore: 0, notAfter: 86_400).certificatePEM
    }

    @Test func itIsTheSHA256OfTheDER() throws {
        let pem = try make()
        #expect(try CertificateFingerprint.sha256(ofPEM: pem) == derSHA256(pem))
    }

    @Test func ofAChainItIsTheFirstCertificates() throws {
        let leaf = try make(), issuer = try make()
        #expect(try CertificateFingerprint.sha256(ofPEM: leaf + issuer) == derSHA256(leaf))
        #expect(try CertificateFingerprint.sha256(ofPEM: "a comment first\n" + leaf) == derSHA256(leaf))
    }

    @Test func textWithoutACertificateThrowsOpenSSLsReason() throws {
        let key = try SelfSignedCertificate(commonName: "k", dnsNames: ["k"], notBefore: 0, notAfter: 1).privateKeyPEM
        for text in ["", "not PEM at all", key] {
            let error = #expect(throws: OpenSSLError.self) { try CertificateFingerprint.sha256(ofPEM: text) }
            #expect(error?.description.hasPrefix("no PEM certificate: ") == true, "\(String(describing: error))")
        }
    }
}
