/// Who a presented token is: the admin, the read-only viewer, or nobody. One check for HTTP bearer tokens and
/// observer sessions alike, in time independent of where a wrong token differs.
struct AccessControl: Sendable {
    enum Grant: Equatable {
        /// Reads and writes.
        case admin
        /// Reads only (GET, /metrics, observer sessions).
        case viewer
    }

    let adminToken: String?
    let viewerToken: String?

    init(config: GatewayConfig) {
        adminToken = config.adminToken
        viewerToken = config.viewerToken
    }

    /// Both comparisons always run, so the answer's timing does not tell which one matched.
    func grant(for token: String) -> Grant? {
        guard !token.isEmpty else { return nil }
        let admin = sameSecret(token, adminToken)
        let viewer = sameSecret(token, viewerToken)
        if admin { return .admin }
        return viewer ? .viewer : nil
    }
}

/// Compares a presented token with a configured one in time independent of where they differ, so response
/// timing on the LAN does not reveal a token's prefix. No configured secret (`nil`) matches nothing.
func sameSecret(_ presented: String, _ secret: String?) -> Bool {
    guard var secret else { return false }
    var presented = presented
    // On the strings' own UTF-8 (no copies into arrays): every authenticated request compares two tokens.
    return presented.withUTF8 { a in
        secret.withUTF8 { b in
            var diff = UInt8(truncatingIfNeeded: a.count ^ b.count)
            for i in 0..<max(a.count, b.count) {
                diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
            }
            return diff == 0 && a.count == b.count
        }
    }
}
