"""Real Home Assistant notify payloads, each with where it comes from, and where a phone's push path must take it.

Every row is the notify service data an automation writes (`title`, `message`, `data`); HA's `mobile_app` posts it to
the device's push_url with the device's `push_token` and `registration_info` (HA core, mobile_app/notify.py). Where
it must go follows the README's routing table:

- `lan`: the device's LAN sessions (a frame), nothing to the relay (the device is connected);
- `relay`: the relay only (the companion app carries it out), nothing on the LAN;
- `both`: both;
- `refused`: 422 naming the rule (it needs the relay and the device has no relay credentials).

Devices: `phone` (iOS: LAN client + relay credentials, default routing), `pixel` (Android: LAN client + relay
credentials on the Android relay path), `tablet` (LAN only, no relay credentials).
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
CORE_NOTIFY = "HA core, homeassistant/components/mobile_app/notify.py"


@dataclass
class Case:
    name: str
    source: str
    device: str
    expect: str  # lan | relay | both | refused
    message: str | None = None
    title: str | None = None
    data: dict = field(default_factory=dict)
    # Payloads sent first (same device), e.g. the start an end ends.
    before: list = field(default_factory=list)
    # The LAN frame type that must arrive (for lan/both).
    frame: str = "notification"
    # A predicate on the answer body, the LAN frame and the relay body.
    check: object = None

    def __str__(self):
        return self.name

    @property
    def notify(self):
        body = {"data": self.data}
        if self.message is not None:
            body["message"] = self.message
        if self.title is not None:
            body["title"] = self.title
        return body


def data_as_sent(case, frame, relay):
    """The relay gets `data` exactly as HA sent it (minus lanpush's own options); the LAN frame too."""
    sent = {k: v for k, v in case.data.items() if k != "lanpush"}
    ok = True
    if relay is not None:
        ok = ok and relay["data"] == sent and relay.get("message") == case.message
    if frame is not None and frame["type"] == "notification":
        ok = ok and frame["data"] == sent and frame.get("message") == case.message
    return ok


WASHER_START = {"title": "Washing Machine", "message": "Cycle started", "data": {"tag": "washer_cycle", "live_update": True}}

CASES = [
    # ---- plain notifications: a phone keeps getting them through its companion app (relay) ----
    Case("plain message", BASIC, "phone", "relay", message="Motion detected", check=data_as_sent),
    Case("title and message", BASIC, "phone", "relay", title="Front door", message="Opened", check=data_as_sent),
    Case("iOS subtitle", BASIC, "phone", "relay", title="Alarm", message="Armed", data={"subtitle": "Away mode"},
         check=data_as_sent),
    Case("dotted tag (replacing notifications)", BASIC, "phone", "relay", message="Motion",
         data={"tag": "camera.front_door"}, check=data_as_sent),
    Case("tag with spaces", BASIC, "phone", "relay", message="Motion", data={"tag": "front door motion"},
         check=data_as_sent),
    Case("tag with colons", BASIC, "phone", "relay", message="Zone 1", data={"tag": "alarm:zone:1"}, check=data_as_sent),
    Case("long tag", BASIC, "phone", "relay", message="x", data={"tag": "automation." + "very_long_id_" * 10},
         check=data_as_sent),
    Case("group", BASIC, "phone", "relay", message="Back door", data={"group": "doors"}, check=data_as_sent),
    Case("Android channel", BASIC, "pixel", "relay", message="Motion", data={"channel": "Motion"}, check=data_as_sent),
    Case("Android importance", BASIC, "pixel", "relay", message="Leak", data={"importance": "high"}, check=data_as_sent),
    Case("Android ttl and priority", BASIC, "pixel", "relay", message="Doorbell", data={"ttl": 0, "priority": "high"},
         check=data_as_sent),
    Case("Android color", BASIC, "pixel", "relay", message="ok", data={"color": "#2DF56D"}, check=data_as_sent),
    Case("Android sticky and persistent", BASIC, "pixel", "relay", message="Garage open",
         data={"sticky": "true", "persistent": True, "tag": "persistent"}, check=data_as_sent),
    Case("Android notification icon", BASIC, "pixel", "relay", message="Laundry",
         data={"notification_icon": "mdi:washing-machine"}, check=data_as_sent),
    Case("Android timeout", BASIC, "pixel", "relay", message="Gone soon", data={"timeout": 60}, check=data_as_sent),
    Case("Android car UI", BASIC, "pixel", "relay", message="Charging", data={"car_ui": True}, check=data_as_sent),
    Case("Android visibility", BASIC, "pixel", "relay", message="Private", data={"visibility": "private"},
         check=data_as_sent),
    Case("Android vibration and LED", BASIC, "pixel", "relay", message="Buzz",
         data={"vibrationPattern": "100, 1000, 100", "ledColor": "red"}, check=data_as_sent),
    Case("Android alert_once", BASIC, "pixel", "relay", message="Temp 21", data={"alert_once": True, "tag": "temp"},
         check=data_as_sent),
    Case("Android chronometer notification (not a live update)", BASIC, "pixel", "relay", message="Timer",
         data={"chronometer": True, "when": 1900000000, "tag": "timer"}, check=data_as_sent),
    Case("Android HTML message", BASIC, "pixel", "relay", message="<b>bold</b> <i>text</i>", check=data_as_sent),
    Case("iOS presentation_options", BASIC, "phone", "relay", message="Silent banner",
         data={"presentation_options": ["alert", "badge"]}, check=data_as_sent),
    Case("iOS push badge", BASIC, "phone", "relay", message="3 updates", data={"push": {"badge": 3}},
         check=data_as_sent),
    Case("iOS interruption level", BASIC, "phone", "relay", message="Time sensitive",
         data={"push": {"interruption-level": "time-sensitive"}}, check=data_as_sent),
    Case("iOS critical alert", CRITICAL, "phone", "relay", title="Water leak", message="Kitchen sink",
         data={"push": {"sound": {"name": "default", "critical": 1, "volume": 1.0}}}, check=data_as_sent),
    Case("Android critical (alarm stream)", CRITICAL, "pixel", "relay", message="Smoke!",
         data={"ttl": 0, "priority": "high", "channel": "alarm_stream"}, check=data_as_sent),
    Case("iOS sound file", SOUNDS, "phone", "relay", message="Motion",
         data={"push": {"sound": "US-EN-Alexa-Motion-Detected-Generic.wav"}}, check=data_as_sent),
    Case("image attachment", ATTACHMENTS, "phone", "relay", message="Someone at the door",
         data={"image": "/api/camera_proxy/camera.front_door"}, check=data_as_sent),
    Case("iOS attachment object", ATTACHMENTS, "phone", "relay", message="Snapshot",
         data={"attachment": {"url": "https://example.com/x.jpg", "content-type": "jpeg", "hide-thumbnail": False}},
         check=data_as_sent),
    Case("video attachment", ATTACHMENTS, "phone", "relay", message="Clip", data={"video": "/media/local/clip.mp4"},
         check=data_as_sent),
    Case("actions", ACTIONABLE, "phone", "relay", message="Motion while away",
         data={"actions": [{"action": "ALARM", "title": "Sound Alarm"}, {"action": "IGNORE", "title": "Ignore"}]},
         check=data_as_sent),
    Case("Android URI action", ACTIONABLE, "pixel", "relay", message="Open camera",
         data={"actions": [{"action": "URI", "title": "Open", "uri": "/lovelace/cameras"}]}, check=data_as_sent),
    Case("tap URL", BASIC, "phone", "relay", message="Tap me", data={"url": "/lovelace/0", "clickAction": "/lovelace/0"},
         check=data_as_sent),
    Case("iOS camera stream", DYNAMIC, "phone", "relay", message="Front door", data={"entity_id": "camera.front_door"},
         check=data_as_sent),
    # ---- the same notifications for a LAN-only device go to its LAN sessions ----
    Case("plain message on a LAN-only device", BASIC, "tablet", "lan", message="Dinner is ready", check=data_as_sent),
    Case("dotted tag on a LAN-only device", BASIC, "tablet", "lan", message="Motion", data={"tag": "camera.garden"},
         check=data_as_sent),
    # ---- a message's own routing override ----
    Case("data.lanpush.path both", BASIC, "phone", "both", message="Everywhere",
         data={"tag": "announce", "lanpush": {"path": "both"}}, check=data_as_sent),
    Case("data.lanpush.path lan", BASIC, "phone", "lan", message="Only the wall tablet app",
         data={"lanpush": {"path": "lan"}}, check=data_as_sent),
    # ---- clear_notification: an activity's end on the LAN; a notification's clear follows the notification ----
    Case("clear of a notification's dotted tag", BASIC, "phone", "relay", message="clear_notification",
         data={"tag": "camera.front_door"}, check=data_as_sent),
    Case("clear of a notification on a LAN-only device", BASIC, "tablet", "lan", message="clear_notification",
         data={"tag": "camera.garden"}, frame="clear", check=lambda case, frame, relay: frame["tag"] == "camera.garden"),
    Case("clear_notification ends and dismisses a live activity", LIVE, "phone", "lan", message="clear_notification",
         data={"tag": "washer_cycle"}, before=[WASHER_START], frame="end",
         check=lambda case, frame, relay: frame["phase"] == "dismissed"),
    # ---- companion-app commands: only the companion app can carry them out ----
    Case("request_location_update", COMMANDS, "phone", "relay", message="request_location_update", check=data_as_sent),
    Case("clear_badge", COMMANDS, "phone", "relay", message="clear_badge", check=data_as_sent),
    Case("update_complications", COMMANDS, "phone", "relay", message="update_complications", check=data_as_sent),
    Case("update_widgets", COMMANDS, "phone", "relay", message="update_widgets", check=data_as_sent),
    Case("remove_channel", COMMANDS, "pixel", "relay", message="remove_channel", data={"channel": "Motion"},
         check=data_as_sent),
    Case("TTS", COMMANDS, "pixel", "relay", message="TTS", data={"tts_text": "The washer is done", "media_stream": "alarm_stream"},
         check=data_as_sent),
    Case("command_dnd", COMMANDS, "pixel", "relay", message="command_dnd", title="priority_only", check=data_as_sent),
    Case("command_volume_level", COMMANDS, "pixel", "relay", message="command_volume_level", title="10",
         data={"media_stream": "music_stream"}, check=data_as_sent),
    Case("command_activity", COMMANDS, "pixel", "relay", message="command_activity",
         data={"intent_action": "android.intent.action.VIEW", "intent_uri": "https://example.com"}, check=data_as_sent),
    Case("command_webview", COMMANDS, "pixel", "relay", message="command_webview", data={"command": "/lovelace/0"},
         check=data_as_sent),
    Case("command_screen_on", COMMANDS, "pixel", "relay", message="command_screen_on", check=data_as_sent),
    Case("a command to a device without relay credentials", COMMANDS, "tablet", "refused",
         message="request_location_update"),
    # ---- live updates: the LAN sessions (the device is connected), never the relay ----
    Case("washer start", LIVE, "phone", "lan", **WASHER_START, frame="start",
         check=lambda case, frame, relay: frame["attributes"]["title"] == "Washing Machine"),
    Case("EV charging with critical_text", LIVE, "phone", "lan", title="EV Charging",
         message="Charging · Est. 45 min remaining",
         data={"tag": "ev-charging", "live_update": True, "critical_text": "45%", "progress": 45, "progress_max": 100,
               "notification_icon": "mdi:ev-station", "notification_icon_color": "#4CAF50"}, frame="start",
         check=lambda case, frame, relay: frame["state"]["critical_text"] == "45%" and frame["state"]["progress"] == 45),
    Case("live update with Android-only options", LIVE, "pixel", "lan", title="Washing Machine",
         message="45 minutes remaining",
         data={"tag": "washer_android", "live_update": True, "alert_once": True, "sticky": True, "visibility": "public"},
         frame="start", check=lambda case, frame, relay: frame["state"] == {"message": "45 minutes remaining"}),
    Case("live update without a title", LIVE, "phone", "lan", message="Drying",
         data={"tag": "dryer_notitle", "live_update": True}, frame="start"),
    Case("newer HA: data.event and live_activity_token", CORE_NOTIFY, "phone", "lan", title="Dishwasher",
         message="Pre-wash in progress",
         data={"tag": "dishwasher", "live_update": True, "event": "start", "critical_text": "Pre-wash",
               "progress": 20, "progress_max": 100}, frame="start"),
]
