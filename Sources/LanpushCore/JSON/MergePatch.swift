/// RFC 7386 JSON Merge Patch: how an update travels to a LAN client.
///
/// `diff(from:to:)` produces the smallest patch that `apply` turns `from` into `to`. Merge patch cannot
/// express a `null` *value* inside an object (null means "remove"), so states never hold nulls: the
/// payload mapping drops them before they get here.
public enum MergePatch {
    /// The patch that turns `from` into `to`. When both are objects the patch is an object holding only
    /// changed keys (recursively); otherwise it is `to` itself (a whole replacement).
    public static func diff(from: JSONValue, to: JSONValue) -> JSONValue {
        guard case .object(let a) = from, case .object(let b) = to else { return to }
        return .object(diff(from: a, to: b))
    }

    public static func diff(from a: [String: JSONValue], to b: [String: JSONValue]) -> [String: JSONValue] {
        var patch = [String: JSONValue]()
        // One lookup per key of `b`; keys of `a` are only searched for removals when some are missing from `b`.
        var kept = 0
        for (key, new) in b {
            guard let old = a[key] else {
                patch[key] = new
                continue
            }
            kept += 1
            if old == new { continue }
            if case .object(let oldObject) = old, case .object(let newObject) = new {
                patch[key] = .object(diff(from: oldObject, to: newObject))
            } else {
                patch[key] = new
            }
        }
        if kept < a.count {
            for key in a.keys where b[key] == nil { patch[key] = .null }
        }
        return patch
    }

    /// Applies `patch` to `target` exactly as RFC 7386 section 2 describes.
    public static func apply(_ patch: JSONValue, to target: JSONValue) -> JSONValue {
        guard case .object(let patchObject) = patch else { return patch }
        var result: [String: JSONValue]
        if case .object(let targetObject) = target {
            result = targetObject
        } else {
            result = [:]
        }
        for (key, value) in patchObject {
            if value.isNull {
                result.removeValue(forKey: key)
            } else {
                result[key] = apply(value, to: result[key] ?? .null)
            }
        }
        return .object(result)
    }

    public static func apply(_ patch: [String: JSONValue], to target: [String: JSONValue]) -> [String: JSONValue] {
        apply(.object(patch), to: .object(target)).objectValue ?? [:]
    }
}
