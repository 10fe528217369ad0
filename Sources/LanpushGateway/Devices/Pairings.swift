import Foundation

/// One-time pairing codes: an admin asks for one for a device, a client redeems it for the device's token. A code
/// lives 10 minutes and works once. Two spellings of one pairing: `code` (80 bits, for the pairing URL and QR code)
/// and `shortCode` (8 characters, 40 bits, for typing; redemption attempts are throttled per address and
/// globally). Loop thread only.
final class Pairings {
    struct Pairing: Equatable {
        let device: String
        let code: String
        let shortCode: String
        let expiresAt: Double
    }

    /// Crockford's base32: no I, L, O, U — nothing to misread when typed from a screen.
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    static let lifetime: Double = 600

    private var byCode: [String: Pairing] = [:]

    /// A new pairing for `device`; an older one for the same device stops working.
    func create(device: String, now: Double) -> Pairing {
        expire(now: now)
        for (code, p) in byCode where p.device == device { byCode.removeValue(forKey: code) }
        let pairing = Pairing(device: device, code: Self.random(16), shortCode: Self.random(8), expiresAt: now + Self.lifetime)
        byCode[pairing.code] = pairing
        byCode[pairing.shortCode] = pairing
        return pairing
    }

    /// The pairing a code names, used up: the device whose token is to be issued. `nil`: unknown, used or expired.
    func redeem(_ code: String, now: Double) -> Pairing? {
        expire(now: now)
        guard let pairing = byCode[Self.normalize(code)] else { return nil }
        byCode.removeValue(forKey: pairing.code)
        byCode.removeValue(forKey: pairing.shortCode)
        return pairing
    }

    /// The device is gone (or its token was replaced another way): its pairing too.
    func cancel(device: String) {
        for (code, p) in byCode where p.device == device { byCode.removeValue(forKey: code) }
    }

    func expire(now: Double) {
        if byCode.values.contains(where: { $0.expiresAt <= now }) { byCode = byCode.filter { $0.value.expiresAt > now } }
    }

    /// Crockford's reading: case-insensitive, hyphens and spaces ignored, I and L read as 1, O as 0.
    static func normalize(_ code: String) -> String {
        String(code.uppercased().compactMap { c -> Character? in
            switch c {
            case "-", " ": return nil
            case "I", "L": return "1"
            case "O": return "0"
            default: return c
            }
        })
    }

    private static func random(_ count: Int) -> String {
        var rng = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet[Int.random(in: 0..<32, using: &rng)] })
    }
}
