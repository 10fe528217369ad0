import Crypto

/// A pinned certificate is named by the hex SHA-256 of its DER (PROTOCOL.md, "Pairing": the `fp` of a pairing URL).
public enum CertificatePin {
    public static func fingerprint(der: some Sequence<UInt8>) -> String {
        SHA256.hash(data: Array(der)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// Case and `:` separators (as `openssl x509 -fingerprint` prints them) do not matter.
    public static func matches(der: some Sequence<UInt8>, sha256 expected: String) -> Bool {
        normalized(expected) == fingerprint(der: der)
    }

    static func normalized(_ text: String) -> String {
        text.lowercased().filter { $0 != ":" }
    }

    /// `normalized`, or nil when `text` is not 64 hex digits (no certificate has that fingerprint).
    static func hex(_ text: String) -> String? {
        let hex = normalized(text)
        return hex.count == 64 && hex.allSatisfy(\.isHexDigit) ? hex : nil
    }
}
