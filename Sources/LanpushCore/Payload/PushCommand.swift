/// What a LAN client renders: the ContentState keys of docs/PROTOCOL.md in snake_case (`message`, `critical_text`,
/// `progress`, `progress_max`, `chronometer`, `countdown_end`, `icon`, `color`, `background_color`,
/// `text_color`, `progress_bar_color`, `progress_bar_direction`, `url`, and `template` for Aivi templates).
/// Absent keys are absent (never `null`), so merge patches between states are exact.
public typealias ContentState = [String: JSONValue]

/// `alert` of an update (the Scripting app's LiveActivity API): shown on the watch / as a banner with that one update.
public struct ActivityAlert: Sendable, Hashable {
    public var title: String
    public var body: String
    public var sound: String?

    public init(title: String, body: String, sound: String? = nil) {
        self.title = title
        self.body = body
        self.sound = sound
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = ["title": .string(title), "body": .string(body)]
        if let sound { o["sound"] = .string(sound) }
        return .object(o)
    }
}

/// `data.event` that newer HA (2026.7+) adds on live updates for Apple devices; passed through.
public enum LiveEvent: String, Sendable, Hashable {
    case start, update, end
}

/// A `live_update: true` payload: the activity's complete new state.
public struct LiveUpdate: Sendable, Hashable {
    public var tag: String
    /// Only used when this update starts an activity: the title is static.
    public var title: String?
    public var state: ContentState {
        didSet {
            stateBytes = JSONWriter.count(.object(state))
            stateID = 0
        }
    }
    /// The state's size as JSON, counted once here: the update goes to every device it targets, and each device's
    /// resume history weighs the state it replaces by it.
    public private(set) var stateBytes: Int
    /// Names this state for the loop's `PatchMemo`: stamped once per accepted request (`PushCommand.stamp`), from a
    /// counter that never repeats while the process runs, so one id is one state's contents; 0 until stamped, and
    /// again once the state is changed.
    public fileprivate(set) var stateID: UInt64 = 0
    public var silent: Bool
    public var alert: ActivityAlert?
    /// Unix seconds. Every update carries its own (as ActivityKit's `ActivityContent` does): none means none.
    public var staleDate: Double?
    /// Any finite number, higher = more relevant (ActivityKit takes any Double and orders by it).
    public var relevanceScore: Double?
    public var event: LiveEvent?

    public init(
        tag: String, title: String? = nil, state: ContentState, silent: Bool = false, alert: ActivityAlert? = nil,
        staleDate: Double? = nil, relevanceScore: Double? = nil, event: LiveEvent? = nil
    ) {
        self.tag = tag
        self.title = title
        self.state = state
        self.stateBytes = JSONWriter.count(.object(state))
        self.silent = silent
        self.alert = alert
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.event = event
    }
}

/// How long an ended activity stays visible (the Scripting app's `dismissTimeInterval`).
public enum DismissalPolicy: Sendable, Hashable {
    /// System default: visible for up to 4 hours.
    case `default`
    /// `<= 0`: removed at once.
    case immediate
    /// `> 0`: removed after that many seconds.
    case after(Double)
    /// An absolute Unix time (`data.dismissal_date`).
    case at(Double)

    /// Interprets a seed-004 style interval: not provided → default, `<= 0` → immediate, `> 0` → after.
    public init(interval: Double?) {
        guard let interval else {
            self = .default
            return
        }
        self = interval <= 0 ? .immediate : .after(interval)
    }

    public static let defaultRetention: Double = 4 * 3600

    /// When an activity that ended at `endedAt` goes, the policy being applied at `now` (later than the end when
    /// an ended activity is dismissed again): the system's retention counts from the end, the others from now.
    public func dismissalDate(endedAt: Double, now: Double? = nil) -> Double {
        let from = now ?? endedAt
        switch self {
        case .default: return endedAt + Self.defaultRetention
        case .immediate: return from
        case .after(let seconds): return from + seconds
        case .at(let date): return date
        }
    }
}

/// `message: clear_notification` with a tag: ends the activity and clears the notifications of that tag, as both
/// companion apps do ("Dismiss – identical on both platforms"). The tag may be any string: when it cannot name an
/// activity (a plain notification's tag is opaque), only the clear remains.
public struct EndRequest: Sendable, Hashable {
    public var tag: String
    /// `.immediate` unless the payload names a `dismissal_date`: the phone removes the card at once.
    public var dismissal: DismissalPolicy
    public var staleDate: Double?
    public var relevanceScore: Double?

    public init(tag: String, dismissal: DismissalPolicy = .immediate, staleDate: Double? = nil, relevanceScore: Double? = nil) {
        self.tag = tag
        self.dismissal = dismissal
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }
}

/// A message the companion app executes instead of showing (`request_location_update`, Android's
/// `command_dnd`, …; the Home Assistant companion docs, "Notification Commands"). Only the companion app can carry
/// it out, so it always travels through the relay, exactly as sent; LAN sessions never get it.
public struct CompanionCommand: Sendable, Hashable {
    public var message: NotifyMessage

    public init(message: NotifyMessage) {
        self.message = message
    }

    public var name: String { message.message ?? "" }

    /// iOS and Android commands by name, from the apps' own lists: the iOS app's command handlers and its kiosk
    /// commands, matched on the body trimmed and in lower case (home-assistant/iOS `NotificationsCommandManager.swift`,
    /// `KioskPushCommand.swift`), HA's relay's (mobile-apps-fcm-push `functions/legacy.js`, `delete_alert`), and
    /// Android's (home-assistant/android `MessagingManager.kt`; its device commands all start with `command_`, and
    /// `keep_screen_on` is the value of `command_screen_on`). A `clear_notification` without a tag is one too.
    public static let names: Set<String> = [
        "request_location_update", "request_location_updates", "clear_badge", "update_complications", "update_widgets",
        "reload_widgets", "delete_alert", "remove_channel", "TTS",
    ]

    /// The iOS app's kiosk commands (`KioskPushCommand`): acted on while the app is in front, never shown.
    public static let kioskNames: Set<String> = [
        "kiosk_show_screensaver", "kiosk_hide_screensaver", "kiosk_show_camera", "kiosk_hide_camera", "kiosk_set_brightness",
        "kiosk_set_volume", "kiosk_set_screensaver_mode", "kiosk_set_screensaver_brightness", "kiosk_reload", "kiosk_default",
    ]

    public static func isCommand(_ message: String?) -> Bool {
        guard let message else { return false }
        if names.contains(message) || (message.hasPrefix("command_") && message.count > "command_".count) { return true }
        // The only lookup that lowers the message: only a message that starts like a kiosk command pays for it.
        guard message.utf8.count < 48, message.utf8.contains(UInt8(ascii: "_")) else { return false }
        let folded = String(message.lowercased().drop { $0 == " " || $0 == "\t" || $0 == "\n" }.reversed()
            .drop { $0 == " " || $0 == "\t" || $0 == "\n" }.reversed())
        return folded.hasPrefix("kiosk_") && kioskNames.contains(folded)
    }
}

/// One accepted notify payload, interpreted.
public enum PushCommand: Sendable, Hashable {
    case liveUpdate(LiveUpdate)
    case end(EndRequest)
    /// Anything that is neither a live update, an end, nor a command: delivered in order, never coalesced, `data`
    /// as sent (unknown keys included).
    case notification(NotifyMessage)
    case command(CompanionCommand)

    public var tag: String? {
        switch self {
        case .liveUpdate(let u): return u.tag
        case .end(let e): return e.tag
        case .notification(let n): return n.tag
        case .command: return nil
        }
    }

    /// Stamps a live update's state as the accepted request's (`LiveUpdate.stateID`; `id` > 0, never used before);
    /// the other commands carry no state.
    public mutating func stamp(stateID id: UInt64) {
        guard case .liveUpdate(var update) = self else { return }
        update.stateID = id
        self = .liveUpdate(update)
    }
}
