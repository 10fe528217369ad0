import Crypto
import Foundation
import LanpushClient
import LanpushCore
import NIOSSL
import SwiftASN1
import Testing
import X509

/// Pairing against the real gateway; certificate pinning against the gateway's own `wss://` (its self-signed
/// certificate, the fingerprint from its pairing URL) and through a local TLS proxy with a certificate the test makes.
@Suite(.serialized) struct PairingTests {
    // What a pairing URL or a typed code names is the shared vectors' (ClientVectorTests); here, the two entry points.
    @Test func aPairingURLIsWhatReadReadsAndItsFingerprintItsTLSPolicy() throws {
        let fingerprint = String(repeating: "ab", count: 32)
        let text = "lanpush://192.168.1.5:8765/pair?code=ABCDEFGHJKMNPQRS&fp=\(fingerprint.uppercased())&alt=10.0.0.2:8765"
        let url = try #require(PairingURL(text))
        #expect(url == (try PairingURL.read(text)))
        #expect(url.tls == .pinned(sha256: fingerprint))
        #expect(PairingURL("lanpush://h:1/pair?code=X")?.tls == .system)
        #expect(PairingURL("ABCD-EFGH") == nil, "a short code: PairingURL.read takes it with the gateway's address")
        #expect(PairingURL("lanpush://h:1/pair?code=X&fp=abcd") == nil, "a URL read refuses")
    }

    @Test func aPairedClientGoesLiveWithItsNewToken() async throws {
        let gw = try GatewayProcess()
        try await gw.start()
        let (status, body) = try await gw.request("POST", "/v1/pairings", ["device": "kitchen", "name": "Kitchen iPad"])
        #expect(status == 201)
        let text = try #require(body?["url"]?.stringValue)
        let pairing = try #require(PairingURL(text))
        #expect(pairing.fingerprint == nil, "the gateway serves no TLS here")
        let paired = try await pairing.redeem()
        #expect(paired.deviceId == "kitchen")
        #expect(paired.streamURL.absoluteString.hasPrefix("ws://"))
        let used = await #expect(throws: PairingError.self) { try await pairing.redeem() }
        #expect(used?.status == 403, "a code works once")

        let h = Harness(url: paired.streamURL, token: paired.token)
        await h.start()
        try await h.live()
        try await gw.push("kitchen", Payloads.ev(30))
        try await h.converged(with: gw, device: "kitchen")
        await h.stop()
        await gw.dispose()
    }

    @Test func thePairingURLsFingerprintPinsTheGatewaysOwnCertificate() async throws {
        let gw = try GatewayProcess(extra: ["tls: {enabled: true, plain: false}"])
        try await gw.start()
        let (status, body) = try await gw.request("POST", "/v1/pairings", ["device": "kitchen"])
        #expect(status == 201)
        let text = try #require(body?["url"]?.stringValue)
        let pairing = try #require(PairingURL(text))
        let fingerprint = try #require(pairing.fingerprint)
        // The generated certificate on disk is what the URL names.
        let pem = try String(contentsOf: gw.dir.appendingPathComponent("state/tls/cert.pem"), encoding: .utf8)
        let der = try Certificate(pemEncoded: pem)
        var serializer = DER.Serializer()
        try serializer.serialize(der)
        #expect(CertificatePin.fingerprint(der: serializer.serializedBytes) == fingerprint.lowercased())

        let paired = try await pairing.redeem()  // over https, pinned
        #expect(paired.streamURL.absoluteString == "wss://127.0.0.1:\(gw.port)/v1/stream")
        let h = Harness(url: paired.streamURL, token: paired.token) { $0.tls = paired.tls }
        await h.start()
        try await h.live()
        try await gw.push("kitchen", Payloads.ev(40))
        try await h.converged(with: gw, device: "kitchen")
        await h.stop()
        await gw.dispose()
    }

    @Test func thePinnedCertificateIsRequired() async throws {
        let gw = try GatewayProcess()
        try await gw.start()
        let identity = try TestIdentity()
        let proxy = try await TCPProxy(targetPort: gw.port, tls: identity.context).listen()
        let (_, body) = try await gw.request("POST", "/v1/pairings", ["device": "kitchen"])
        let code = try #require(body?["code"]?.stringValue)

        // A wrong fingerprint: no byte of the code reaches the gateway, so it stays redeemable.
        let wrong = try #require(PairingURL("lanpush://127.0.0.1:\(proxy.port)/pair?code=\(code)&fp=\(String(repeating: "0", count: 64))"))
        await #expect(throws: PairingError.self) { try await wrong.redeem() }

        let right = try #require(PairingURL("lanpush://127.0.0.1:\(proxy.port)/pair?code=\(code)&fp=\(identity.fingerprint.uppercased())"))
        let paired = try await right.redeem()
        #expect(paired.streamURL.absoluteString == "wss://127.0.0.1:\(proxy.port)/v1/stream")
        #expect(paired.tls == .pinned(sha256: identity.fingerprint))

        let h = Harness(url: paired.streamURL, token: paired.token) { $0.tls = paired.tls }
        await h.start()
        try await h.live()
        try await gw.push("kitchen", Payloads.washer[0])
        try await h.converged(with: gw, device: "kitchen")
        await h.stop()

        // The same stream with another pin never authenticates: the handshake fails before any frame.
        let pinnedWrong = Harness(url: paired.streamURL, token: paired.token) {
            $0.tls = .pinned(sha256: String(repeating: "ab", count: 32))
            $0.reconnects = false
        }
        await pinnedWrong.start()
        await pinnedWrong.consumer.value
        let statuses = await pinnedWrong.log.statuses
        #expect(statuses.contains { $0.connectFailed && $0.reason.contains("TLS") }, "\(statuses)")
        #expect(await pinnedWrong.log.events.contains { if case .connected = $0 { true } else { false } } == false)
        proxy.close()
        await gw.dispose()
    }
}

/// A self-signed P-256 certificate for 127.0.0.1, as the gateway makes its own, and its SHA-256 fingerprint.
struct TestIdentity {
    let context: NIOSSLContext
    let fingerprint: String

    init() throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("lanpush test") }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: Date() - 3600, notValidAfter: Date() + 3600, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let der = serializer.serializedBytes
        fingerprint = CertificatePin.fingerprint(der: der)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: der, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)))
        context = try NIOSSLContext(configuration: configuration)
    }
}
