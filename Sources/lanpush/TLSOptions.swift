import ArgumentParser
import LanpushClient

/// How the CLI checks an `https://` gateway's certificate, for its requests and its WebSocket alike. A gateway's own
/// certificate is self-signed, so no CA vouches for it: `--fingerprint` pins it (the `fp` of its pairing URL or of its
/// mDNS TXT record, which `lanpush discover` prints); `--insecure` skips the check, for a quick look only.
struct TLSOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "https/wss: accept only the certificate with this SHA-256 (hex, colons allowed; the fp of a pairing URL or of the "
            + "gateway's mDNS record).", valueName: "sha256"))
    var fingerprint: String?

    @Flag(name: .long, help: "https/wss: do not verify the gateway's certificate.")
    var insecure = false

    func validate() throws {
        if fingerprint != nil && insecure { throw ValidationError("--fingerprint and --insecure exclude each other") }
        if let fingerprint, Self.hex(fingerprint) == nil {
            throw ValidationError("--fingerprint '\(fingerprint)': not a SHA-256 (64 hex digits)")
        }
    }

    var policy: TLSPolicy {
        if let pin = fingerprint.flatMap(Self.hex) { return .pinned(sha256: pin) }
        return insecure ? .insecure : .system
    }

    private static func hex(_ text: String) -> String? {
        let digits = text.lowercased().filter { $0 != ":" && !$0.isWhitespace }
        return digits.count == 64 && digits.allSatisfy(\.isHexDigit) ? digits : nil
    }
}
