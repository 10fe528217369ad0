/// Who a native push (`POST /v1/push`, a publisher's `push` frame) is for: `targets` as a device id, a list of them,
/// or `"all"` (also when missing or null).
public enum PushTargets: Sendable, Hashable {
    case all
    case devices([String])

    /// `targets` of a push body (`nil`: absent).
    public static func decode(_ value: JSONValue?) throws(FieldError) -> PushTargets {
        switch value {
        case nil, .null?, .string("all")?:
            return .all
        case .string(let one)?:
            return .devices([one])
        case .array(let list)?:
            var ids: [String] = []
            ids.reserveCapacity(list.count)
            for (i, item) in list.enumerated() {
                guard let id = item.stringValue else {
                    throw FieldError(field: "targets[\(i)]", rule: "type", message: "targets[\(i)]: must be a device id string")
                }
                ids.append(id)
            }
            return .devices(ids)
        default:
            throw FieldError(field: "targets", rule: "type", message: "targets: must be \"all\" or a list of device ids")
        }
    }
}
