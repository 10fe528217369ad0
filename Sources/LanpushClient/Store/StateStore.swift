import Foundation
import LanpushCore

/// Where a device client keeps its resume point and the state it describes, so a restarted client resumes by replay
/// instead of starting from nothing. `save` is awaited before the frames it covers are acknowledged: an acknowledged
/// plain notification is gone from the gateway, so it must already be stored.
public protocol StateStore: Sendable {
    func load(key: String) async throws -> DeviceState?
    func save(key: String, state: DeviceState) async throws
    func clear(key: String) async throws
}

/// Keeps the state for the life of the process (tests, previews, an app that needs no resume across launches).
public actor MemoryStore: StateStore {
    private var states: [String: DeviceState] = [:]
    /// How many times `save` ran: tests check that the state was saved before an ack.
    public private(set) var saves = 0

    public init() {}

    public func load(key: String) -> DeviceState? { states[key] }

    public func save(key: String, state: DeviceState) {
        states[key] = state
        saves += 1
    }

    public func clear(key: String) { states[key] = nil }
}

/// One JSON file per key in a directory (an app group container, so a widget can read what the app keeps). Writes
/// are atomic (a temporary file renamed over the old one), so a crash leaves the previous state, never half of one.
/// A file that cannot be read back counts as nothing stored: the client then gets a snapshot.
public struct FileStore: StateStore {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// The file that holds `key`: the key made safe for a file name.
    public func file(for key: String) -> URL {
        let safe = key.unicodeScalars.map { c -> String in
            CharacterSet.alphanumerics.contains(c) || c == "-" || c == "_" ? String(c) : "_"
        }.joined()
        return directory.appendingPathComponent("lanpush-\(safe.prefix(100)).json")
    }

    public func load(key: String) throws -> DeviceState? {
        guard let data = try? Data(contentsOf: file(for: key)) else { return nil }
        guard let value = try? JSONValue.parse([UInt8](data)) else { return nil }
        return DeviceState(json: value)
    }

    public func save(key: String, state: DeviceState) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(state.json.serializedBytes()).write(to: file(for: key), options: .atomic)
    }

    public func clear(key: String) throws {
        let url = file(for: key)
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }
}
