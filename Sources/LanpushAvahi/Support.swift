import CAvahiClient

/// An error reported by Avahi: its numeric code (`AVAHI_ERR_*`, negative) and `avahi_strerror` text.
public struct AvahiError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    public let message: String

    public init(code: Int32) {
        self.code = code
        self.message = avahiErrorText(code)
    }

    public var description: String { "\(message) (avahi error \(code))" }
}

@inline(__always)
func avahiErrorText(_ code: Int32) -> String {
    guard let text = avahi_strerror(code) else { return "unknown Avahi error" }
    return String(cString: text)
}

/// A plain mutex (pthread, via the shim: ThreadSanitizer reports false races on Synchronization.Mutex, not on this) with an attached condition variable.
final class SyncLock: @unchecked Sendable {
    let raw: UnsafeMutablePointer<lp_sync>

    init() {
        guard let raw = lp_sync_new() else { fatalError("LanpushAvahi: out of memory allocating a lock") }
        self.raw = raw
    }

    deinit { lp_sync_free(raw) }

    @inline(__always) func lock() { lp_sync_lock(raw) }
    @inline(__always) func unlock() { lp_sync_unlock(raw) }

    @inline(__always) func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lp_sync_lock(raw)
        defer { lp_sync_unlock(raw) }
        return try body()
    }

    /// Wakes every waiter. Call with the lock held.
    func broadcast() { lp_sync_broadcast(raw) }

    /// Sets the wait deadline `seconds` from now (monotonic clock).
    func setDeadline(secondsFromNow seconds: Double) { lp_sync_set_deadline(raw, seconds) }

    /// Waits, lock held, until broadcast or the deadline; returns true once the deadline has passed.
    func waitUntilDeadline() -> Bool { lp_sync_wait_deadline(raw) != 0 }
}

/// The longest prefix of `name` that fits in one DNS label (63 bytes) without splitting a character.
func truncatedToDNSLabel(_ name: String) -> String {
    let limit = Int(LP_AVAHI_LABEL_MAX) - 1
    if name.utf8.count <= limit { return name }
    var result = ""
    var used = 0
    for character in name {
        let size = character.utf8.count
        if used + size > limit { break }
        result.append(character)
        used += size
    }
    return result
}

/// Builds an `AvahiStringList` whose TXT record carries `pairs` in their given order on the wire.
/// (The list is kept newest-first: `avahi_string_list_add_pair` prepends and serialisation walks it backwards.)
/// The caller frees it with `avahi_string_list_free`.
func makeStringList(_ pairs: [(String, String)]) -> UnsafeMutablePointer<AvahiStringList>? {
    var list: UnsafeMutablePointer<AvahiStringList>? = nil
    for (key, value) in pairs {
        list = avahi_string_list_add_pair(list, key, value)
    }
    return list
}

/// Reads an `AvahiStringList` of `key=value` TXT strings into a dictionary (a bare `key` maps to "").
/// When a key repeats, its first occurrence on the wire wins (RFC 6763 section 6.4); the list runs backwards
/// (see `makeStringList`), so later nodes overwrite earlier ones.
func readStringList(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [String: String] {
    var result: [String: String] = [:]
    var node = list
    while let current = node {
        let size = Int(avahi_string_list_get_size(current))
        if size > 0, let text = avahi_string_list_get_text(current) {
            let bytes = UnsafeBufferPointer(start: text, count: size)
            let key: String
            let value: String
            if let eq = bytes.firstIndex(of: UInt8(ascii: "=")) {
                key = String(decoding: bytes[..<eq], as: UTF8.self)
                value = String(decoding: bytes[(eq + 1)...], as: UTF8.self)
            } else {
                key = String(decoding: bytes, as: UTF8.self)
                value = ""
            }
            if !key.isEmpty { result[key] = value }
        }
        node = avahi_string_list_get_next(current)
    }
    return result
}

/// Avahi errors that retrying cannot fix (a bad name, type, port or permission): the publisher stops trying.
func avahiErrorIsPermanent(_ error: Int32) -> Bool {
    switch Int(error) {
    case AVAHI_ERR_INVALID_HOST_NAME, AVAHI_ERR_INVALID_DOMAIN_NAME, AVAHI_ERR_INVALID_TTL,
        AVAHI_ERR_INVALID_RECORD, AVAHI_ERR_INVALID_SERVICE_NAME, AVAHI_ERR_INVALID_SERVICE_TYPE,
        AVAHI_ERR_INVALID_PORT, AVAHI_ERR_INVALID_KEY, AVAHI_ERR_INVALID_SERVICE_SUBTYPE,
        AVAHI_ERR_INVALID_ARGUMENT, AVAHI_ERR_INVALID_FLAGS, AVAHI_ERR_NOT_PERMITTED,
        AVAHI_ERR_ACCESS_DENIED:
        return true
    default:
        return false
    }
}

/// "5 s", "0.5 s", "4 min" (whole minutes only; "90 s" stays in seconds).
func formatSeconds(_ seconds: Double) -> String {
    if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
    if seconds == seconds.rounded() { return "\(Int(seconds)) s" }
    return "\(seconds) s"
}
