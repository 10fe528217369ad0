import Foundation

/// One-time pairing codes: an admin asks for one for a device, a client redeems it for the device's token. A code
/// lives 10 minutes and works once. Two spellings of one pairing: `code` (80 bits, for the pairing URL and QR code)
/// and `shortCode` (8 characters, 40 bits, for typing).
///
/// Guessing is bounded twice: per address (`AuthThrottle`), and per pairing — every wrong code tried while a pairing
/// is open counts against it (it could have been a guess at it), and after `attempts` of them it is void. So no
/// pairing can be guessed with more than `attempts` tries however many addresses try, and nobody's wrong codes pause
/// pairing for the household: a new pairing starts with a fresh budget. Loop thread only.
final class Pairings {
    struct Pairing: Equatable {
        let device: String
        let code: String
        let shortCode: String
        let expiresAt: Double
        /// Wrong codes it may still survive.
        var attemptsLeft: Int
    }

    let attempts: Int

    init(attempts: Int = 10) {
        self.attempts = max(1, attempts)
    }

    /// Crockford's base32: no I, L, O, U — nothing to misread when typed from a screen.
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    static let lifetime: Double = 600

    private var byCode: [String: Pairing] = [:]

    /// A new pairing for `device`; an older one for the same device stops working.
    func create(device: String, now: Double) -> Pairing {
        expire(now: now)
        for (code, p) in byCode where p.device == device { byCode.removeValue(forKey: code) }
        let pairing = Pairing(
            device: device, code: Self.random(16), shortCode: Self.random(8), expiresAt: now + Self.lifetime,
            attemptsLeft: attempts)
        byCode[pairing.code] = pairing
        byCode[pairing.shortCode] = pairing
        return pairing
    }

    /// The pairing a code names, used up: the device whose token is to be issued. `nil`: unknown, used or expired —
    /// and then every open pairing has one attempt fewer (returned: the devices whose pairing that made void).
    func redeem(_ code: String, now: Double) -> Result<Pairing, Wrong> {
        expire(now: now)
        guard let pairing = byCode[Self.normalize(code)] else { return .failure(Wrong(voided: spendAttempt())) }
        byCode.removeValue(forKey: pairing.code)
        byCode.removeValue(forKey: pairing.shortCode)
        return .success(pairing)
    }

    struct Wrong: Error, Equatable {
        /// Devices whose open pairing this wrong code used up.
        var voided: [String]
    }

    /// A wrong code was tried: each open pairing loses an attempt, and those with none left are void.
    private func spendAttempt() -> [String] {
        var voided: [String] = []
        for (key, var p) in byCode {
            p.attemptsLeft -= 1
            if p.attemptsLeft <= 0 {
                byCode.removeValue(forKey: key)
                if key == p.code { voided.append(p.device) }
            } else {
                byCode[key] = p
            }
        }
        return voided.sorted()
    }

    /// Open pairings (each counted once).
    var open: [Pairing] { byCode.filter { $0.key == $0.value.code }.map(\.value) }

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
