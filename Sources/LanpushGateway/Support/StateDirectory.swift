import Foundation

/// The gateway's state folder: generated secrets and ids that must survive restarts.
public struct StateDirectory: Sendable {
    public let path: String

    public init(path: String) throws {
        self.path = path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ConfigError(key: "state_dir", message: "cannot create \(path): \(error.localizedDescription)")
        }
    }

    /// Reads a small secret/id file, creating it with `make()` (mode 0600) the first time.
    /// Returns the value and whether it was just created.
    public func value(named name: String, make: () -> String) throws -> (String, created: Bool) {
        let file = (path as NSString).appendingPathComponent(name)
        if let existing = try? String(contentsOfFile: file, encoding: .utf8) {
            let trimmed = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { return (trimmed, false) }
        }
        let value = make()
        guard FileManager.default.createFile(atPath: file, contents: Data((value + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigError(key: "state_dir", message: "cannot write \(file)")
        }
        return (value, true)
    }

    /// 32 random bytes as URL-safe base64 (no padding): a bearer token.
    public static func randomToken() -> String {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
