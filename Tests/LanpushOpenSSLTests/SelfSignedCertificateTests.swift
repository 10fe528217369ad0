import Crypto
import Foundation
import LanpushOpenSSL
import SwiftASN1
import Testing
import X509

/// The certificate OpenSSL makes, read back by swift-certificates: the same to-be-signed bytes swift-certificates
/// itself encodes from the same fields, a signature by its own key, and a key file that is that key.
@Suite struct SelfSignedCertificateTests {
    let notBefore: Int64 = 1_799_996_400
    let notAfter: Int64 = 2_115_576_000

    func make(_ names: [String] = ["gate,way", "localhost"]) throws -> SelfSignedCertificate {
        try SelfSignedCertificate(commonName: "lanpush on gate,way – Küche", dnsNames: names, notBefore: notBefore, notAfter: notAfter)
    }

    @Test func itIsTheCertificateSwiftCertificatesEncodesFromTheSameFields() throws {
        let made = try make()
        let certificate = try Certificate(pemEncoded: made.certificatePEM)
        let key = try P256.Signing.PrivateKey(pemRepresentation: made.privateKeyPEM)
        let name = try DistinguishedName { CommonName("lanpush on gate,way – Küche") }
        let expected = try Certificate(
            version: .v3, serialNumber: certificate.serialNumber, publicKey: .init(key.publicKey),
            notValidBefore: Date(timeIntervalSince1970: TimeInterval(notBefore)),
            notValidAfter: Date(timeIntervalSince1970: TimeInterval(notAfter)),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                KeyUsage(digitalSignature: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("gate,way"), .dnsName("localhost")])
            },
            issuerPrivateKey: .init(key))
        #expect(certificate.tbsCertificateBytes == expected.tbsCertificateBytes)
        #expect(certificate.signatureAlgorithm == .ecdsaWithSHA256)
        #expect(certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        #expect(made.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
    }

    @Test func eachHasAKeyAndASerialOfItsOwn() throws {
        let serials = try (0..<8).map { _ in try Certificate(pemEncoded: make().certificatePEM).serialNumber.bytes }
        #expect(Set(serials).count == serials.count)
        for serial in serials {
            // 20 random bytes, leading zeros dropped (the DER INTEGER's form, its sign byte aside, is checked above).
            #expect(serial.count <= 20 && serial.first != 0)
        }
        #expect(try make().privateKeyPEM != make().privateKeyPEM)
    }

    @Test func oneNameIsOneAlternativeName() throws {
        let certificate = try Certificate(pemEncoded: make(["localhost"]).certificatePEM)
        #expect(try certificate.extensions.subjectAlternativeNames == SubjectAlternativeNames([.dnsName("localhost")]))
    }
}
