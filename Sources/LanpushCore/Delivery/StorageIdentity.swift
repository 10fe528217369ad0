/// A dictionary's storage as one word, for the loop's memos (``PatchMemo``, ``FrameEncoder``): the states one request
/// gives many devices share their storage, so the same storage — held alive by the memo, so never freed and reused —
/// means the same contents, and a lookup hashes two words, never the contents.
enum StorageIdentity {
    /// The storage's address; `nil` where a dictionary is not one reference (then the memos only miss).
    @inline(__always)
    static func word(_ dictionary: [String: JSONValue]) -> UInt? {
        guard MemoryLayout<[String: JSONValue]>.size == MemoryLayout<UInt>.size else { return nil }
        return withUnsafeBytes(of: dictionary) { $0.load(as: UInt.self) }
    }
}

/// Two storages' addresses: what the memos key their entries by.
struct StoragePair: Hashable {
    let first: UInt
    let second: UInt
}
