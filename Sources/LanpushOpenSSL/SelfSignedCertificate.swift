import COpenSSL

/// A new P-256 key and an X.509 v3 certificate for it signed with itself (ECDSA with SHA-256), for a TLS server no
/// authority vouches for: a random 20-byte serial, the one common name (a UTF8String) as subject and issuer, and the
/// extensions of a server's leaf — basic constraints (critical, not a CA), key usage digital signature, extended key
/// usage server authentication, and the DNS names as subject alternative names in the order given.
public struct SelfSignedCertificate: Sendable {
    public let certificatePEM: String
    /// PKCS#8 (`BEGIN PRIVATE KEY`), not encrypted: store it readable by its owner only.
    public let privateKeyPEM: String

    /// `notBefore` and `notAfter` in whole seconds since 1970 (UTC), the resolution X.509's times have.
    public init(commonName: String, dnsNames: [String], notBefore: Int64, notAfter: Int64) throws(OpenSSLError) {
        let names = dnsNames.flatMap { $0.utf8CString }  // each NUL-terminated, one after the other
        var made = lanpush_self_signed_t()
        defer { lanpush_self_signed_free(&made) }
        try OpenSSLError.check { reason, size in
            lanpush_self_signed_make(commonName, names, dnsNames.count, notBefore, notAfter, &made, reason, size)
        }
        certificatePEM = String(cString: made.certificate_pem!)
        privateKeyPEM = String(cString: made.key_pem!)
    }
}
