import LanpushCore

/// What a native push's routing means for its sender, whichever door it came through (`POST /v1/push`, a
/// publisher's `push` frame): accepted, or refused with the field and rule to name. The HTTP layer turns a refusal
/// into its status; a publisher session into a `rejected` frame.
extension Ingest {
    enum Verdict: Equatable {
        /// Applied for at least one device; `unknownTargets` named no device.
        case accepted(unknownTargets: [String])
        /// Nothing was done: no target exists (`targets`/`exists`), or every one needed relay credentials it lacks
        /// (`relay_credentials`).
        case refused(FieldError)
    }

    static func verdict(_ outcome: [(target: String, routed: Routed?)], command: PushCommand) -> Verdict {
        let unknown = outcome.filter { $0.routed == nil }.map(\.target)
        let known = outcome.count - unknown.count
        if known == 0 {
            return .refused(FieldError(field: "targets", rule: "exists", message: "targets: no such device"))
        }
        let refused = outcome.filter { $0.routed?.refused == true }.map(\.target)
        if refused.count == known {
            return .refused(noRelay(command, device: refused.joined(separator: "', '"), field: "targets"))
        }
        return .accepted(unknownTargets: unknown)
    }

    /// Why a payload that needs the relay was refused for a device without relay credentials.
    static func noRelay(_ command: PushCommand, device: String, field: String) -> FieldError {
        let what: String
        if case .command(let c) = command {
            what = "'\(c.name)' is a companion-app command: only the relay reaches the companion app"
        } else {
            what = "this notification is routed to the relay (the device's `notifications` setting or data.lanpush.path)"
        }
        return FieldError(
            field: field, rule: "relay_credentials",
            message: "\(what), and device '\(device)' has no relay credentials (a registered push_token and push_url, or relay.upstream)")
    }
}
