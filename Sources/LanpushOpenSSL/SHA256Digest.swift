import COpenSSL

/// SHA-256, from the libcrypto that libwebsockets links: the daemon carries one TLS library.
public enum SHA256Digest {
    public static var byteCount: Int { Int(LANPUSH_SHA256_LENGTH) }

    public static func of(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { digest, count in
            lanpush_sha256(bytes.baseAddress, bytes.count, digest.baseAddress)
            count = byteCount
        }
    }

    public static func of(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { of($0) }
    }

    /// Of the text's UTF-8, read in place (a native string is stored as UTF-8).
    public static func of(utf8 text: String) -> [UInt8] {
        var text = text
        return text.withUTF8 { of(UnsafeRawBufferPointer($0)) }
    }
}
