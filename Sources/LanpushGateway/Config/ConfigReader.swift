import Foundation
import Yams

// How the config's YAML is read: the guards against inputs Yams 5 traps on, and `Reader`, which walks one mapping
// and names the offending key of any error.
extension ConfigLoader {
    /// The first place, in document order, where `isBad` holds for a node: its path (`a.b[2]`; "" for the root), or
    /// nil. A mapping is asked before its values, so a bad key is named by the mapping that holds it.
    static func firstPath(in node: Node, path: String = "", where isBad: (Node) -> Bool) -> String? {
        if isBad(node) { return path }
        switch node {
        case .mapping(let mapping):
            for (key, value) in mapping {
                let name = key.scalar?.string ?? ""
                let inner = path.isEmpty ? name : "\(path).\(name)"
                if let found = firstPath(in: value, path: inner, where: isBad) { return found }
            }
        case .sequence(let sequence):
            for (i, item) in sequence.enumerated() {
                if let found = firstPath(in: item, path: "\(path)[\(i)]", where: isBad) { return found }
            }
        default:
            break
        }
        return nil
    }

    /// A mapping with a key that is not a scalar, or is empty.
    static func hasBadKey(_ node: Node) -> Bool {
        guard case .mapping(let mapping) = node else { return false }
        return mapping.contains { key, _ in (key.scalar?.string ?? "").isEmpty }
    }

    /// A scalar that Yams reads as a base-60 integer (YAML 1.1: `1:30` is 90) and that would overflow while Yams
    /// computes it.
    static func isOverflowingNumber(_ node: Node) -> Bool {
        guard case .scalar(let scalar) = node else { return false }
        return Resolver.default.resolveTag(of: node) == .int && sexagesimalOverflows(scalar.string)
    }

    /// Yams's reading of a base-60 integer, step for step (underscores dropped, a sign, a leading `0` meaning octal
    /// instead, each part read in base 10, the base multiplied by 60 after every part), with every step checked.
    static func sexagesimalOverflows(_ text: String) -> Bool {
        var digits = Substring(text.replacingOccurrences(of: "_", with: ""))
        if digits.hasPrefix("-") || digits.hasPrefix("+") { digits = digits.dropFirst() }
        guard digits.contains(":"), !digits.hasPrefix("0") else { return false }
        var base = 1, value = 0
        for part in digits.components(separatedBy: ":").compactMap({ Int($0, radix: 10) }).reversed() {
            let (product, o1) = part.multipliedReportingOverflow(by: base)
            let (sum, o2) = value.addingReportingOverflow(product)
            let (next, o3) = base.multipliedReportingOverflow(by: 60)
            if o1 || o2 || o3 { return true }
            (value, base) = (sum, next)
        }
        return false
    }

    /// Walks one mapping, remembering which keys were read so unknown keys (typos) are reported.
    struct Reader {
        let map: [String: Any]
        let path: String
        var seen = Set<String>()

        init(_ map: [String: Any], path: String) {
            self.map = map
            self.path = path
        }

        func key(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

        mutating func value(_ name: String) -> Any? {
            seen.insert(name)
            guard let v = map[name], !(v is NSNull) else { return nil }
            return v
        }

        mutating func string(_ name: String) throws -> String? {
            guard let v = value(name) else { return nil }
            if let s = v as? String { return s }
            if let i = v as? Int { return String(i) }
            throw ConfigError(key: key(name), message: "must be a string")
        }

        mutating func bool(_ name: String) throws -> Bool? {
            guard let v = value(name) else { return nil }
            guard let b = v as? Bool else { throw ConfigError(key: key(name), message: "must be true or false") }
            return b
        }

        mutating func number(_ name: String, min: Double) throws -> Double? {
            guard let v = value(name) else { return nil }
            let n: Double
            if let i = v as? Int { n = Double(i) } else if let d = v as? Double { n = d } else {
                throw ConfigError(key: key(name), message: "must be a number")
            }
            guard n >= min else { throw ConfigError(key: key(name), message: "must be at least \(min)") }
            return n
        }

        mutating func int(_ name: String, min: Int, max: Int) throws -> Int? {
            guard let v = value(name) else { return nil }
            guard let i = v as? Int, !(v is Bool) else { throw ConfigError(key: key(name), message: "must be an integer") }
            guard (min...max).contains(i) else { throw ConfigError(key: key(name), message: "must be from \(min) to \(max)") }
            return i
        }

        mutating func oneOf(_ name: String, _ allowed: [String]) throws -> String? {
            guard let s = try string(name) else { return nil }
            guard allowed.contains(s.lowercased()) else {
                throw ConfigError(key: key(name), message: "must be one of \(allowed.joined(separator: ", "))")
            }
            return s.lowercased()
        }

        mutating func list(_ name: String) throws -> [Any]? {
            guard let v = value(name) else { return nil }
            guard let l = v as? [Any] else { throw ConfigError(key: key(name), message: "must be a list") }
            return l
        }

        /// A list of strings (missing: empty); an empty entry (an add-on list's blank line) is skipped.
        mutating func strings(_ name: String) throws -> [String] {
            guard let items = try list(name) else { return [] }
            return try items.enumerated().compactMap { i, v in
                guard let s = v as? String else { throw ConfigError(key: "\(key(name))[\(i)]", message: "must be a string") }
                return s.isEmpty ? nil : s
            }
        }

        mutating func section(_ name: String) throws -> Reader? {
            guard let v = value(name) else { return nil }
            guard let m = v as? [String: Any] else { throw ConfigError(key: key(name), message: "must be a mapping") }
            return Reader(m, path: key(name))
        }

        func nested(_ item: Any, _ path: String) throws -> Reader {
            guard let m = item as? [String: Any] else { throw ConfigError(key: path, message: "must be a mapping") }
            return Reader(m, path: path)
        }

        mutating func requiredString(_ name: String) throws -> String {
            guard let s = try string(name), !s.isEmpty else { throw ConfigError(key: key(name), message: "is required") }
            return s
        }

        func finish() throws {
            if let unknown = map.keys.filter({ !seen.contains($0) }).sorted().first {
                throw ConfigError(key: key(unknown), message: "unknown key (check the spelling; Config/lanpush.yaml lists every key)")
            }
        }
    }
}
