@testable import LanpushCore

/// A lanpush.v1/v2 client reduced to its state, written from docs/PROTOCOL.md and docs/CLIENTS.md only (it uses
/// nothing of the core but `JSONValue`), so the vectors check the core against the documents, not against
/// itself. The state it spells out is the one every client must hold after each frame.
struct VectorClient {
    var epoch: String?
    var seq: Double = 0
    var activities: [String: [String: JSONValue]] = [:]
    var notifications: [JSONValue] = []
    var violations: [String] = []
    static let notificationLimit = 100

    var json: JSONValue {
        [
            "epoch": epoch.map(JSONValue.string) ?? .null, "seq": .number(seq),
            "activities": .object(activities.mapValues(JSONValue.object)), "notifications": .array(notifications),
        ]
    }

    /// Applies one frame of either version; returns the seq to acknowledge, or nil when the frame asks for none.
    mutating func apply(_ frame: JSONValue, now: Double) -> Double? {
        if let object = frame.objectValue { return apply(object, now: now) }
        guard let object = Self.objectForm(frame) else {
            violations.append("unreadable frame \(frame)")
            return nil
        }
        return apply(object, now: now)
    }

    /// A lanpush.v2 array frame (`[type, seq, tag, body, extras?]`) as the v1 object it stands for.
    static func objectForm(_ frame: JSONValue) -> [String: JSONValue]? {
        let bodies = ["start": "state", "update": "patch", "end": "patch", "lifecycle": "phase"]
        guard let items = frame.arrayValue, items.count == 4 || items.count == 5,
            let type = items[0].stringValue, let body = bodies[type], items[1].numberValue != nil,
            items[2].stringValue != nil
        else { return nil }
        var object = items.count == 5 ? (items[4].objectValue ?? [:]) : [:]
        object["type"] = items[0]
        object["seq"] = items[1]
        object["tag"] = items[2]
        object[body] = items[3]
        if type == "update", object["phase"] == nil { object["phase"] = "active" }
        return object
    }

    /// Applies one frame; returns the seq to acknowledge, or nil when the frame asks for none.
    mutating func apply(_ frame: [String: JSONValue], now: Double) -> Double? {
        let type = frame["type"]?.stringValue ?? ""
        let frameSeq = frame["seq"]?.numberValue
        let tag = frame["tag"]?.stringValue ?? ""
        switch type {
        case "snapshot":
            epoch = frame["epoch"]?.stringValue
            seq = frameSeq ?? 0
            activities = [:]
            for item in frame["activities"]?.arrayValue ?? [] {
                guard let a = item.objectValue, let t = a["tag"]?.stringValue else { continue }
                if !Self.gone(a["phase"]?.stringValue, a["dismissal_date"]?.numberValue, now: now) {
                    activities[t] = Self.view(a, phase: a["phase"]?.stringValue ?? "active")
                }
            }
            return frameSeq
        case "replay":
            epoch = frame["epoch"]?.stringValue
            return nil
        case "synced", "notifications_dropped":
            return nil
        case "start":
            let phase = frame["phase"]?.stringValue ?? "active"
            if Self.gone(phase, frame["dismissal_date"]?.numberValue, now: now) {
                activities[tag] = nil
            } else {
                activities[tag] = Self.view(frame, phase: phase)
            }
        case "update":
            guard var a = activities[tag], a["phase"] != "ended" else {
                violations.append("update of \(tag) not held live")
                break
            }
            a["state"] = Self.merge(a["state"] ?? [:], frame["patch"] ?? [:])
            a["phase"] = frame["phase"] ?? "active"
            Self.take(["stale_date", "relevance_score"], from: frame, into: &a)
            activities[tag] = a
        case "end":
            guard var a = activities[tag] else {
                violations.append("end of \(tag) not held")
                break
            }
            a["state"] = Self.merge(a["state"] ?? [:], frame["patch"] ?? [:])
            a["phase"] = "ended"
            Self.take(["dismissal_date", "stale_date", "relevance_score"], from: frame, into: &a)
            let phase = frame["phase"]?.stringValue == "dismissed" ? "dismissed" : "ended"
            activities[tag] = Self.gone(phase, a["dismissal_date"]?.numberValue, now: now) ? nil : a
        case "lifecycle":
            let phase = frame["phase"]?.stringValue ?? ""
            if phase == "dismissed" {
                activities[tag] = nil
            } else if var a = activities[tag], a["phase"] != "ended" {
                a["phase"] = .string(phase)
                activities[tag] = a
            }
        case "notification":
            var n: [String: JSONValue] = ["seq": frame["seq"] ?? 0, "data": frame["data"] ?? [:]]
            if let title = frame["title"] { n["title"] = title }
            if let message = frame["message"] { n["message"] = message }
            if !notifications.contains(.object(n)) {
                notifications.append(.object(n))
                if notifications.count > Self.notificationLimit { notifications.removeFirst() }
            }
        case "clear":
            notifications.removeAll { $0["data"]?["tag"]?.stringValue == tag }
        default:
            violations.append("unknown frame type \(type)")
            return nil
        }
        if let frameSeq { seq = max(seq, frameSeq) }
        return frameSeq
    }

    /// A key the frame carries replaces the held one; `null` removes it (absent: unchanged).
    static func take(_ keys: [String], from frame: [String: JSONValue], into a: inout [String: JSONValue]) {
        for key in keys {
            guard let value = frame[key] else { continue }
            if value.isNull { a.removeValue(forKey: key) } else { a[key] = value }
        }
    }

    /// Gone for good: dismissed, or ended with its dismissal date reached.
    static func gone(_ phase: String?, _ dismissalDate: Double?, now: Double) -> Bool {
        phase == "dismissed" || (phase == "ended" && (dismissalDate.map { $0 <= now } ?? false))
    }

    static func view(_ frame: [String: JSONValue], phase: String) -> [String: JSONValue] {
        var a: [String: JSONValue] = [
            "tag": frame["tag"] ?? "", "attributes": frame["attributes"] ?? [:], "state": frame["state"] ?? [:],
            "phase": .string(phase),
        ]
        for key in ["stale_date", "relevance_score", "dismissal_date"] where frame[key] != nil { a[key] = frame[key] }
        return a
    }

    /// RFC 7386, independently of `MergePatch`.
    static func merge(_ target: JSONValue, _ patch: JSONValue) -> JSONValue {
        guard case .object(let p) = patch else { return patch }
        var result = target.objectValue ?? [:]
        for (key, value) in p {
            if value == .null {
                result[key] = nil
            } else {
                result[key] = merge(result[key] ?? .null, value)
            }
        }
        return .object(result)
    }
}

/// Readable, stable vector files: sorted keys, short objects on one line.
enum VectorJSON {
    static func pretty(_ value: JSONValue, indent: String = "") -> String {
        let compact = value.serialized()
        let inner = indent + "  "
        switch value {
        case .array(let items) where compact.count > 100:
            return "[\n" + items.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let object) where compact.count > 100:
            let members = object.sorted { $0.key < $1.key }.map { key, member in
                inner + JSONValue.string(key).serialized() + ": " + pretty(member, indent: inner)
            }
            return "{\n" + members.joined(separator: ",\n") + "\n" + indent + "}"
        default:
            return compact
        }
    }

    /// The path of the first place where `a` and `b` differ, or nil when they are equal.
    static func firstDifference(_ a: JSONValue, _ b: JSONValue, path: String = "$") -> String? {
        switch (a, b) {
        case (.object(let x), .object(let y)):
            for key in Set(x.keys).union(y.keys).sorted() {
                guard let l = x[key], let r = y[key] else { return "\(path).\(key) (present on one side only)" }
                if let d = firstDifference(l, r, path: "\(path).\(key)") { return d }
            }
            return nil
        case (.array(let x), .array(let y)):
            for (i, (l, r)) in zip(x, y).enumerated() {
                if let d = firstDifference(l, r, path: "\(path)[\(i)]") { return d }
            }
            return x.count == y.count ? nil : "\(path) (\(x.count) vs \(y.count) items)"
        default:
            return a == b ? nil : "\(path): \(a.serialized()) vs \(b.serialized())"
        }
    }
}
