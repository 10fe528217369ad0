import LanpushOpenSSL

/// A device's secret: 32 random bytes as URL-safe base64, kept only as its SHA-256. A hash is enough for a long
/// random secret (no dictionary to guess from), and looking a client up by the hash of what it presents takes the
/// same time whichever token is tried.
enum DeviceToken {
    static func make() -> String {
        StateDirectory.randomToken()
    }

    /// Lowercase hex SHA-256 of the token's UTF-8.
    static func hash(_ token: String) -> String {
        SHA256Digest.of(utf8: token).lowercaseHex
    }

    /// The shortest token a device may have (the config's rule; generated ones are 43 characters).
    static let minimumLength = 16
}
