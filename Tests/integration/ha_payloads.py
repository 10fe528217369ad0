"""Real Home Assistant notify payloads, each with where it comes from, what lanpush delivers and what the phone shows.

Every row is the notify service data an automation writes (`title`, `message`, `data`); HA's `mobile_app` posts it to
the device's push_url with the device's `push_token` and `registration_info` (HA core, mobile_app/notify.py), or —
for HA 2026's Live Activities — with the `live_activity_token` and `data.event` core adds itself
(`prepare_live_activity_remote_push`). `extra` holds those top-level additions.

`expect` is what lanpush delivered:
- `lan`: the device's LAN sessions (a frame), nothing to the relay (the device is connected);
- `relay`: the relay only (the companion app carries it out), nothing on the LAN;
- `both`: both.

`phone` is what the phone shows: for the relay, what the companion app makes of the FCM message the (fake) relay
built (`relay_rules.phone_view`: a banner, a command it acts on, a Live Activity event the iOS app decodes); for the
LAN, what the LAN client holds (`lan_view` in test_dropin.py).

Devices: `phone` (iOS: LAN client + relay credentials, default routing), `pixel` (Android: LAN client + relay
credentials on the Android relay path), `tablet` (LAN only, no relay credentials), `away` (iOS: relay credentials
and a push-to-start token, no LAN session).
"""
from dataclasses import dataclass, field

BASIC = "HA companion docs, Introduction to Notifications"
ACTIONABLE = "HA companion docs, Actionable Notifications"
CRITICAL = "HA companion docs, Critical Notifications"
ATTACHMENTS = "HA companion docs, Notification Attachments"
COMMANDS = "HA companion docs, Notification Commands"
SOUNDS = "HA companion docs, Notification Sounds"
DYNAMIC = "HA companion docs, Dynamic Content"
LIVE = "HA companion docs, Live Activities and Live Updates"
KIOSK = "home-assistant/iOS, Sources/App/Notifications/KioskPushCommand.swift"
CLEAR = "home-assistant/iOS, NotificationsCommandManager.swift (HandlerClearNotification)"
ANDROID_COMMANDS = "home-assistant/android, MessagingManager.kt (COMMAND_SCREEN_ON, keep_screen_on)"
CORE_LIVE = "HA core 2026.11, mobile_app/live_activity prepare_live_activity_remote_push"
TEMPLATE = "an HA template over an unavailable sensor ({{ states('sensor.washer_progress') }})"
ISSUE_TAGS = "HA's relay and ActivityKit take any tag (mobile-apps-fcm-push functions/live-activity.js)"


@dataclass
class Case:
    name: str
    source: str
    device: str
    expect: str  # lan | relay | both
    phone: tuple  # what the phone shows (see the module's docstring)
    message: str | None = None
    title: str | None = None
    data: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # top-level body keys core adds (live_activity_token)
    # Payloads sent first (same device), e.g. the start an end ends.
    before: list = field(default_factory=list)
    # A warning rule the answer must carry (the lenient reading of something the strict rules refuse).
    warns: str | None = None
    # A predicate on the answer body, the LAN frame and the relay body.
    check: object = None

    def __str__(self):
        return self.name

    @property
    def notify(self):
        body = {"data": self.data, **self.extra}
        if self.message is not None:
            body["message"] = self.message
        if self.title is not None:
            body["title"] = self.title
        return body


def banner(title, message):
    return ("banner", title, message)


def command(name):
    return ("command", name)


def activity(event, title, message):
    return ("activity", event, title, message)


def data_as_sent(case, frame, relay):
    """The relay gets `data` exactly as HA sent it (minus lanpush's own options); the LAN frame too."""
    sent = {k: v for k, v in case.data.items() if k != "lanpush"}
    ok = True
    if relay is not None:
        ok = ok and relay["data"] == sent and relay.get("message") == case.message
    if frame is not None and frame["type"] == "notification":
        ok = ok and frame["data"] == sent and frame.get("message") == case.message
    return ok


def state_lacks(*keys):
    return lambda case, frame, relay: frame is not None and not any(k in frame["state"] for k in keys)


WASHER_START = {"title": "Washing Machine", "message": "Cycle started", "data": {"tag": "washer_cycle", "live_update": True}}
LIVE_DATA = {"live_update": True}

CASES = [
    # ---- plain notifications: a phone keeps getting them through its companion app (relay) ----
    Case("plain message", BASIC, "phone", "relay", banner(None, "Motion detected"), message="Motion detected", check=data_as_sent),
    Case("title and message", BASIC, "phone", "relay", banner("Front door", "Opened"), title="Front door", message="Opened",
         check=data_as_sent),
    Case("iOS subtitle", BASIC, "phone", "relay", banner("Alarm", "Armed"), title="Alarm", message="Armed",
         data={"subtitle": "Away mode"}, check=data_as_sent),
    Case("dotted tag (replacing notifications)", BASIC, "phone", "relay", banner(None, "Motion"), message="Motion",
         data={"tag": "camera.front_door"}, check=data_as_sent),
    Case("tag with spaces", BASIC, "phone", "relay", banner(None, "Motion"), message="Motion",
         data={"tag": "front door motion"}, check=data_as_sent),
    Case("tag with colons", BASIC, "phone", "relay", banner(None, "Zone 1"), message="Zone 1", data={"tag": "alarm:zone:1"},
         check=data_as_sent),
    Case("long tag", BASIC, "phone", "relay", banner(None, "x"), message="x", data={"tag": "automation." + "very_long_id_" * 10},
         check=data_as_sent),
    Case("group", BASIC, "phone", "relay", banner(None, "Back door"), message="Back door", data={"group": "doors"},
         check=data_as_sent),
    Case("Android channel", BASIC, "pixel", "relay", banner(None, "Motion"), message="Motion", data={"channel": "Motion"},
         check=data_as_sent),
    Case("Android importance", BASIC, "pixel", "relay", banner(None, "Leak"), message="Leak", data={"importance": "high"},
         check=data_as_sent),
    Case("Android ttl and priority", BASIC, "pixel", "relay", banner(None, "Doorbell"), message="Doorbell",
         data={"ttl": 0, "priority": "high"}, check=data_as_sent),
    Case("Android color", BASIC, "pixel", "relay", banner(None, "ok"), message="ok", data={"color": "#2DF56D"}, check=data_as_sent),
    Case("Android sticky and persistent", BASIC, "pixel", "relay", banner(None, "Garage open"), message="Garage open",
         data={"sticky": "true", "persistent": True, "tag": "persistent"}, check=data_as_sent),
    Case("Android notification icon", BASIC, "pixel", "relay", banner(None, "Laundry"), message="Laundry",
         data={"notification_icon": "mdi:washing-machine"}, check=data_as_sent),
    Case("Android timeout", BASIC, "pixel", "relay", banner(None, "Gone soon"), message="Gone soon", data={"timeout": 60},
         check=data_as_sent),
    Case("Android car UI", BASIC, "pixel", "relay", banner(None, "Charging"), message="Charging", data={"car_ui": True},
         check=data_as_sent),
    Case("Android visibility", BASIC, "pixel", "relay", banner(None, "Private"), message="Private",
         data={"visibility": "private"}, check=data_as_sent),
    Case("Android vibration and LED", BASIC, "pixel", "relay", banner(None, "Buzz"), message="Buzz",
         data={"vibrationPattern": "100, 1000, 100", "ledColor": "red"}, check=data_as_sent),
    Case("Android alert_once", BASIC, "pixel", "relay", banner(None, "Temp 21"), message="Temp 21",
         data={"alert_once": True, "tag": "temp"}, check=data_as_sent),
    Case("Android chronometer notification (not a live update)", BASIC, "pixel", "relay", banner(None, "Timer"),
         message="Timer", data={"chronometer": True, "when": 1900000000, "tag": "timer"}, check=data_as_sent),
    Case("Android HTML message", BASIC, "pixel", "relay", banner(None, "<b>bold</b> <i>text</i>"),
         message="<b>bold</b> <i>text</i>", check=data_as_sent),
    Case("iOS presentation_options", BASIC, "phone", "relay", banner(None, "Silent banner"), message="Silent banner",
         data={"presentation_options": ["alert", "badge"]}, check=data_as_sent),
    Case("iOS push badge", BASIC, "phone", "relay", banner(None, "3 updates"), message="3 updates",
         data={"push": {"badge": 3}}, check=data_as_sent),
    Case("iOS interruption level", BASIC, "phone", "relay", banner(None, "Time sensitive"), message="Time sensitive",
         data={"push": {"interruption-level": "time-sensitive"}}, check=data_as_sent),
    Case("iOS critical alert", CRITICAL, "phone", "relay", banner("Water leak", "Kitchen sink"), title="Water leak",
         message="Kitchen sink", data={"push": {"sound": {"name": "default", "critical": 1, "volume": 1.0}}},
         check=data_as_sent),
    Case("Android critical (alarm stream)", CRITICAL, "pixel", "relay", banner(None, "Smoke!"), message="Smoke!",
         data={"ttl": 0, "priority": "high", "channel": "alarm_stream"}, check=data_as_sent),
    Case("iOS sound file", SOUNDS, "phone", "relay", banner(None, "Motion"), message="Motion",
         data={"push": {"sound": "US-EN-Alexa-Motion-Detected-Generic.wav"}}, check=data_as_sent),
    Case("image attachment", ATTACHMENTS, "phone", "relay", banner(None, "Someone at the door"), message="Someone at the door",
         data={"image": "/api/camera_proxy/camera.front_door"}, check=data_as_sent),
    Case("iOS attachment object", ATTACHMENTS, "phone", "relay", banner(None, "Snapshot"), message="Snapshot",
         data={"attachment": {"url": "https://example.com/x.jpg", "content-type": "jpeg", "hide-thumbnail": False}},
         check=data_as_sent),
    Case("video attachment", ATTACHMENTS, "phone", "relay", banner(None, "Clip"), message="Clip",
         data={"video": "/media/local/clip.mp4"}, check=data_as_sent),
    Case("actions", ACTIONABLE, "phone", "relay", banner(None, "Motion while away"), message="Motion while away",
         data={"actions": [{"action": "ALARM", "title": "Sound Alarm"}, {"action": "IGNORE", "title": "Ignore"}]},
         check=data_as_sent),
    Case("Android URI action", ACTIONABLE, "pixel", "relay", banner(None, "Open camera"), message="Open camera",
         data={"actions": [{"action": "URI", "title": "Open", "uri": "/lovelace/cameras"}]}, check=data_as_sent),
    Case("tap URL", BASIC, "phone", "relay", banner(None, "Tap me"), message="Tap me",
         data={"url": "/lovelace/0", "clickAction": "/lovelace/0"}, check=data_as_sent),
    Case("iOS camera stream", DYNAMIC, "phone", "relay", banner(None, "Front door"), message="Front door",
         data={"entity_id": "camera.front_door"}, check=data_as_sent),
    # ---- the same notifications for a LAN-only device go to its LAN sessions ----
    Case("plain message on a LAN-only device", BASIC, "tablet", "lan", banner(None, "Dinner is ready"),
         message="Dinner is ready", check=data_as_sent),
    Case("dotted tag on a LAN-only device", BASIC, "tablet", "lan", banner(None, "Motion"), message="Motion",
         data={"tag": "camera.garden"}, check=data_as_sent),
    # ---- a message's own routing override ----
    Case("data.lanpush.path both", BASIC, "phone", "both", banner(None, "Everywhere"), message="Everywhere",
         data={"tag": "announce", "lanpush": {"path": "both"}}, check=data_as_sent),
    Case("data.lanpush.path lan", BASIC, "phone", "lan", banner(None, "Only the wall tablet app"),
         message="Only the wall tablet app", data={"lanpush": {"path": "lan"}}, check=data_as_sent),
    # ---- clear_notification: an activity's end on the LAN; a notification's clear follows the notification ----
    Case("clear of a notification's dotted tag", BASIC, "phone", "relay", command("clear_notification"),
         message="clear_notification", data={"tag": "camera.front_door"}, check=data_as_sent),
    Case("clear of a notification on a LAN-only device", BASIC, "tablet", "lan", ("clear", "camera.garden"),
         message="clear_notification", data={"tag": "camera.garden"}),
    Case("clear_notification ends and dismisses a live activity", LIVE, "phone", "lan", ("dismissed", "washer_cycle"),
         message="clear_notification", data={"tag": "washer_cycle"}, before=[WASHER_START]),
    Case("clear_notification without a tag (an iOS command)", CLEAR, "phone", "relay", command("clear_notification"),
         message="clear_notification"),
    # ---- companion-app commands: only the companion app can carry them out ----
    Case("request_location_update", COMMANDS, "phone", "relay", command("request_location_update"),
         message="request_location_update", check=data_as_sent),
    Case("clear_badge", COMMANDS, "phone", "relay", command("clear_badge"), message="clear_badge", check=data_as_sent),
    Case("update_complications", COMMANDS, "phone", "relay", command("update_complications"),
         message="update_complications", check=data_as_sent),
    Case("update_widgets", COMMANDS, "phone", "relay", command("update_widgets"), message="update_widgets",
         check=data_as_sent),
    Case("kiosk_reload", KIOSK, "phone", "relay", command("kiosk_reload"), message="kiosk_reload", check=data_as_sent),
    Case("kiosk_set_brightness", KIOSK, "phone", "relay", command("kiosk_set_brightness"), message="kiosk_set_brightness",
         data={"level": 50}, check=data_as_sent),
    Case("remove_channel", COMMANDS, "pixel", "relay", command("remove_channel"), message="remove_channel",
         data={"channel": "Motion"}, check=data_as_sent),
    Case("TTS", COMMANDS, "pixel", "relay", command("TTS"), message="TTS",
         data={"tts_text": "The washer is done", "media_stream": "alarm_stream"}, check=data_as_sent),
    Case("command_dnd", COMMANDS, "pixel", "relay", command("command_dnd"), message="command_dnd", title="priority_only",
         check=data_as_sent),
    Case("command_volume_level", COMMANDS, "pixel", "relay", command("command_volume_level"), message="command_volume_level",
         title="10", data={"media_stream": "music_stream"}, check=data_as_sent),
    Case("command_activity", COMMANDS, "pixel", "relay", command("command_activity"), message="command_activity",
         data={"intent_action": "android.intent.action.VIEW", "intent_uri": "https://example.com"}, check=data_as_sent),
    Case("command_webview", COMMANDS, "pixel", "relay", command("command_webview"), message="command_webview",
         data={"command": "/lovelace/0"}, check=data_as_sent),
    Case("command_screen_on keep_screen_on", ANDROID_COMMANDS, "pixel", "relay", command("command_screen_on"),
         message="command_screen_on", data={"command": "keep_screen_on"}, check=data_as_sent),
    # ---- live updates: the LAN sessions (the device is connected), never the relay ----
    Case("washer start", LIVE, "phone", "lan", activity("start", "Washing Machine", "Cycle started"), **WASHER_START,
         check=lambda case, frame, relay: frame["attributes"]["title"] == "Washing Machine"),
    Case("EV charging with critical_text", LIVE, "phone", "lan",
         activity("start", "EV Charging", "Charging · Est. 45 min remaining"), title="EV Charging",
         message="Charging · Est. 45 min remaining",
         data={"tag": "ev-charging", "live_update": True, "critical_text": "45%", "progress": 45, "progress_max": 100,
               "notification_icon": "mdi:ev-station", "notification_icon_color": "#4CAF50"},
         check=lambda case, frame, relay: frame["state"]["critical_text"] == "45%" and frame["state"]["progress"] == 45),
    Case("live update with Android-only options", LIVE, "pixel", "lan",
         activity("start", "Washing Machine", "45 minutes remaining"), title="Washing Machine",
         message="45 minutes remaining",
         data={"tag": "washer_android", "live_update": True, "alert_once": True, "sticky": True, "visibility": "public"},
         check=lambda case, frame, relay: frame["state"] == {"message": "45 minutes remaining", "title": "Washing Machine"}),
    Case("live update without a title", LIVE, "phone", "lan", activity("start", None, "Drying"), message="Drying",
         data={"tag": "dryer_notitle", "live_update": True}, warns="android_title"),
    Case("newer HA: data.event and live_activity_token", CORE_LIVE, "phone", "lan",
         activity("start", "Dishwasher", "Pre-wash in progress"), title="Dishwasher", message="Pre-wash in progress",
         data={"tag": "dishwasher", "live_update": True, "event": "start", "critical_text": "Pre-wash",
               "progress": 20, "progress_max": 100}, extra={"live_activity_token": "pts-from-ha"}),
    # ---- what HA sends and the phone shows, which lanpush's strict /v1/push would refuse: read as the apps read it ----
    Case("a live update without a tag is a plain notification", CORE_LIVE, "phone", "relay", banner("Washer", "Rinsing"),
         title="Washer", message="Rinsing", data={"live_update": True}, warns="required"),
    Case("a dotted tag still names its activity", ISSUE_TAGS, "phone", "lan", activity("start", "Washer", "Rinsing"),
         title="Washer", message="Rinsing", data={"tag": "washer.cycle", "live_update": True}, warns="pattern",
         check=lambda case, frame, relay: frame["tag"] == "washer.cycle"),
    Case("progress 'unavailable' draws no bar", TEMPLATE, "phone", "lan", activity("start", "Washer", "Rinsing"),
         title="Washer", message="Rinsing", data={"tag": "washer_unavail", "live_update": True, "progress": "unavailable",
                                                 "progress_max": 100}, warns="type", check=state_lacks("progress")),
    Case("chronometer without when shows no timer", LIVE, "phone", "lan", activity("start", "Oven", "Preheating"),
         title="Oven", message="Preheating", data={"tag": "oven_chrono", "live_update": True, "chronometer": True},
         warns="requires_when", check=state_lacks("chronometer", "countdown_end")),
    Case("progress_max 0 draws no bar", LIVE, "phone", "lan", activity("start", "Kettle", "Heating"), title="Kettle",
         message="Heating", data={"tag": "kettle_zero", "live_update": True, "progress": 0, "progress_max": 0},
         warns="positive", check=state_lacks("progress_max")),
    Case("an icon slug in another case", "home-assistant/iOS, UIImage+Icons.swift (normalizingIconString)", "phone", "lan",
         activity("start", "Washer", "Rinsing"), title="Washer", message="Rinsing",
         data={"tag": "washer_icon", "live_update": True, "notification_icon": "mdi:Washing_Machine"}, warns="pattern",
         check=lambda case, frame, relay: frame["state"]["icon"] == "mdi:washing-machine"),
    Case("an rgb() colour no app reads", "home-assistant/iOS, UIColor+CSS3+Hex.swift", "phone", "lan",
         activity("start", "Washer", "Rinsing"), title="Washer", message="Rinsing",
         data={"tag": "washer_rgb", "live_update": True, "notification_icon_color": "rgb(33,150,243)"}, warns="color",
         check=state_lacks("color")),
    # ---- a phone away from the LAN: HA's Live Activity bodies reach the companion app as ActivityKit pushes ----
    Case("HA 2026 start with the push-to-start token", CORE_LIVE, "away", "relay",
         activity("start", "Washing Machine", "Cycle started"), title="Washing Machine", message="Cycle started",
         data={"tag": "away_washer", "live_update": True, "progress": 0, "progress_max": 3600, "event": "start"},
         extra={"live_activity_token": "pts-from-ha"},
         check=lambda case, frame, relay: relay["live_activity_token"] == "pts-from-ha"),
    Case("HA 2026 update with the activity's token", CORE_LIVE, "away", "relay", activity("update", "Washing Machine", "Rinsing"),
         title="Washing Machine", message="Rinsing",
         data={"tag": "away_rinse", "live_update": True, "progress": 900, "progress_max": 3600, "event": "update"},
         extra={"live_activity_token": "act-from-ha"}),
    Case("HA 2026 end with the activity's token", CORE_LIVE, "away", "relay", activity("end", None, ""),
         message="clear_notification", data={"tag": "away_end", "event": "end"}, extra={"live_activity_token": "act-end"}),
    Case("a live update from an HA without Live Activity routing starts with the reported push-to-start token", LIVE,
         "away", "relay", activity("start", "Dryer", "Drying"), title="Dryer", message="Drying",
         data={"tag": "away_dryer", "live_update": True},
         check=lambda case, frame, relay: relay["live_activity_token"] == "pts-away" and relay["data"]["event"] == "start"),
    Case("progress 'unavailable' on the relay path is passed on as HA sent it", TEMPLATE, "away", "relay",
         activity("start", "Washer", "Rinsing"), title="Washer", message="Rinsing",
         data={"tag": "away_unavail", "live_update": True, "progress": "unavailable", "progress_max": 100},
         check=lambda case, frame, relay: relay["data"]["progress"] == "unavailable"),
]
