import COpenSSL

/// The SHA-256 of a certificate's DER: what a client sees of the server in the TLS handshake, and so what it pins.
public enum CertificateFingerprint {
    /// Of the first certificate in PEM text — in a chain file, the leaf, which the server sends first.
    public static func sha256(ofPEM text: String) throws(OpenSSLError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: SHA256Digest.byteCount)
        var text = text
        try OpenSSLError.check { reason, size in
            text.withUTF8 { pem in
                digest.withUnsafeMutableBufferPointer { out in
                    pem.withMemoryRebound(to: CChar.self) { pem in
                        lanpush_pem_certificate_sha256(pem.baseAddress, pem.count, out.baseAddress, reason, size)
                    }
                }
            }
        }
        return digest
    }
}
