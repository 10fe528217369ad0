import LanpushCore

/// Row <-> domain conversions. JSON columns hold `JSONValue` text.
enum StoreCodec {
    static func json(_ text: String?) -> JSONValue? {
        guard let text else { return nil }
        return try? JSONValue.parse(text)
    }

    static func object(_ text: String?) -> [String: JSONValue] {
        json(text)?.objectValue ?? [:]
    }

    static func attributes(_ value: JSONValue?, tag: String) -> ActivityAttributes {
        ActivityAttributes(
            tag: tag, title: value?["title"]?.stringValue ?? "", startedAt: value?["started_at"]?.numberValue ?? 0,
            webhookId: value?["webhook_id"]?.stringValue)
    }

    static func notificationBody(_ body: QueuedNotification.Body) -> JSONValue {
        switch body {
        case .notification(let n):
            var o: [String: JSONValue] = ["kind": "notification", "data": .object(n.data)]
            if let title = n.title { o["title"] = .string(title) }
            if let message = n.message { o["message"] = .string(message) }
            return .object(o)
        case .clear(let tag):
            return ["kind": "clear", "tag": .string(tag)]
        }
    }

    static func notificationBody(_ value: JSONValue?) -> QueuedNotification.Body? {
        guard let value else { return nil }
        if value["kind"]?.stringValue == "clear" {
            return value["tag"]?.stringValue.map { .clear(tag: $0) }
        }
        return .notification(NotifyMessage(
            title: value["title"]?.stringValue, message: value["message"]?.stringValue,
            data: value["data"]?.objectValue ?? [:]))
    }
}
