"""The rules of Home Assistant's push relay (github.com/home-assistant/mobile-apps-fcm-push, ``functions/``), restated
in Python for the fake relay: which bodies it refuses, which count against the daily quota, the FCM message it builds
for each body, and how it words FCM's failures. Each rule names the file and function it follows; the JavaScript
semantics the relay leans on (truthiness, ``??``, ``String()``, ``+`` on a string) are spelled out in ``js_*``.

Also here: what the iOS app makes of a Live Activity's ``content-state`` (``home-assistant/iOS``,
``HALiveActivityAttributes.swift``), so a test can say what the phone shows, not only what was sent.
"""
from __future__ import annotations

import json
import math
import time

LIVE_ACTIVITY_LABEL = "iOSLiveActivityV1"
HA_IOS_APP = "io.robbie.HomeAssistant"

# android.js :: createPayload — the data keys copied into the data-only FCM message, each through String().
ANDROID_DATA_KEYS = (
    "icon color notification_icon_color sound tag clickAction bodyLocKey bodyLocArgs titleLocKey titleLocArgs channel "
    "ticker sticky eventTime localOnly notificationPriority defaultSound defaultVibrateTimings defaultLightSettings "
    "vibrateTimings visibility notificationCount lightSettings image timeout importance subject group icon_url ledColor "
    "vibrationPattern persistent chronometer when when_relative alert_once intent_class_name notification_icon "
    "ble_advertise ble_transmit video high_accuracy_update_interval package_name tts_text media_stream command "
    "intent_package_name intent_action intent_extras media_command media_package_name intent_uri intent_type ble_uuid "
    "ble_major ble_minor confirmation app_lock_enabled app_lock_timeout home_bypass_enabled car_ui ble_measured_power "
    "progress progress_max progress_indeterminate live_update critical_text").split()

# android.js :: createPayload (androidMessagesToIgnore) — messages that do not count against the quota.
ANDROID_UNCOUNTED = frozenset(
    "request_location_update clear_notification remove_channel command_dnd command_ringer_mode command_broadcast_intent "
    "command_volume_level command_screen_on command_bluetooth command_high_accuracy_mode command_activity "
    "command_app_lock command_webview command_media command_update_sensors command_ble_transmitter "
    "command_persistent_connection command_stop_tts command_auto_screen_brightness command_screen_brightness_level "
    "command_screen_off_timeout command_flashlight command_wake_word_detection".split())

# live-activity.js :: buildContentState — the content_state override keys it knows (others are dropped).
CONTENT_STATE_KEYS = ("title", "message", "critical_text", "progress", "progress_max", "chronometer", "countdown_end",
                      "icon", "color", "background_color", "text_color", "progress_bar_color",
                      "progress_bar_direction", "url")
# ... and the data keys it copies, with the content-state name each becomes.
CONTENT_STATE_FROM_DATA = (("critical_text", "critical_text"), ("progress", "progress"),
                           ("progress_max", "progress_max"), ("chronometer", "chronometer"),
                           ("notification_icon", "icon"), ("notification_icon_color", "color"),
                           ("background_color", "background_color"), ("text_color", "text_color"),
                           ("progress_bar_color", "progress_bar_color"),
                           ("progress_bar_direction", "progress_bar_direction"), ("url", "url"))

APNS_PAYLOAD_LIMIT = 4096  # Apple, "Sending notification requests to APNs": 4 KB, Live Activities included
FCM_DATA_LIMIT = 4096  # Firebase, "About FCM messages": a data message carries up to 4096 bytes


class RelayCrash(Exception):
    """A body the relay's code throws on (a TypeError in JavaScript): fastify answers a bare 500."""


class FCMError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


# ---- JavaScript semantics ----------------------------------------------------------------------------------------

def js_truthy(v) -> bool:
    """JavaScript truthiness: [] and {} are true, "" / 0 / null / false / absent are not."""
    if v is None or v is False or v == "" or (isinstance(v, (int, float)) and not isinstance(v, bool) and
                                               (v == 0 or (isinstance(v, float) and math.isnan(v)))):
        return False
    return True


def js_string(v) -> str:
    """``String(v)``, as android.js applies it to every data value."""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else repr(v)
    if isinstance(v, list):
        return ",".join("" if x is None else js_string(x) for x in v)
    if isinstance(v, dict):
        return "[object Object]"
    return str(v)


def js_number(v):
    """``Number(v)`` for the values a badge holds (a number or a numeric string)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    try:
        f = float(str(v).strip() or 0)
    except ValueError:
        return math.nan
    return int(f) if f.is_integer() else f


def js_add(now: int, v):
    """``now + v`` in JavaScript: a number adds, anything else concatenates as a string (``"300"`` → ``"…300"``)."""
    if isinstance(v, bool):
        return now + int(v)
    if isinstance(v, (int, float)):
        return now + v
    if v is None:
        return now
    return f"{now}{js_string(v)}"


def _get(obj, key, default=None):
    """``obj.key`` where obj must be an object: reading a property of null/undefined throws."""
    if not isinstance(obj, dict):
        raise RelayCrash(f"Cannot read properties of {'null' if obj is None else 'undefined'} (reading '{key}')")
    return obj.get(key, default)


# ---- handlers.js :: handleRequest --------------------------------------------------------------------------------

def refuse_token(body) -> tuple[int, dict] | None:
    """handlers.js :: handleRequest — the only checks before the payload is built; the relay has no 400 of its own."""
    token = body.get("push_token") if isinstance(body, dict) else None
    if not js_truthy(token):
        return 403, {"errorMessage": "You did not send a token!"}
    if not isinstance(token, str):
        raise RelayCrash("token.indexOf is not a function")
    if ":" not in token:  # "A check for old SNS tokens"
        return 403, {"errorMessage": "That is not a valid FCM token"}
    return None


def build(path: str, body: dict, now: float | None = None) -> tuple[bool, dict]:
    """(counts against the quota, the FCM message without ``token``) for a body on ``path``."""
    now_s = math.floor(time.time() if now is None else now)
    if path == "/api/sendPush/android/v1":
        return android_payload(body)
    return legacy_payload(body, now_s)


def error_answer(error: FCMError, step: str = "sendNotification") -> tuple[int, dict]:
    """handlers.js :: handleError — how an FCM failure is worded (never with rateLimits)."""
    code = error.code.removeprefix("messaging/") if error.code.startswith("messaging/") else None
    text = str(error)
    if code in ("invalid-registration-token", "registration-token-not-registered"):
        return 500, {"errorType": "InvalidToken", "errorCode": code, "errorStep": step, "message": text}
    if code is not None and (code in ("invalid-argument", "payload-too-large") or "message is too big" in text.lower()
                             or "payload too large" in text.lower()):
        return 500, {"errorType": "PayloadTooLarge", "errorCode": code, "errorStep": step, "message": text}
    return 500, {"errorType": "InternalError", "errorStep": step, "message": text}


def crash_answer(error: RelayCrash) -> tuple[int, dict]:
    """fastify's default answer to an exception the relay's handler does not catch."""
    return 500, {"statusCode": 500, "error": "Internal Server Error", "message": str(error)}


# ---- legacy.js :: createPayload (iOS, macOS) ---------------------------------------------------------------------

def legacy_payload(body: dict, now: int) -> tuple[bool, dict]:
    if js_truthy(body.get("live_activity_token")):
        return live_activity_payload(body, now)
    message, data = body.get("message"), body.get("data")
    aps = {"alert": {"body": message}, "sound": "default"}
    payload = {"notification": {"body": message}, "android": {"ttl": 0, "priority": "HIGH"},
               "apns": {"headers": {}, "payload": {"aps": aps}}, "fcm_options": {"analytics_label": "legacyNotification"}}
    if js_truthy(body.get("title")):
        payload["notification"]["title"] = body["title"]
        aps["alert"]["title"] = body["title"]
    if js_truthy(data) and isinstance(data, dict):
        for key in ("android", "apns", "data", "webpush"):  # raw copies replace the whole FCM key
            if js_truthy(data.get(key)):
                payload[key] = data[key]
        if js_truthy(data.get("apns_headers")):
            payload["apns"]["headers"] = data["apns_headers"]
    counted = True
    info = body.get("registration_info")
    _get(info, "webhook_id")  # the relay reads registration_info unguarded: without it, a TypeError
    apns = payload["apns"]
    if js_truthy(info.get("webhook_id")):
        apns.setdefault("payload", {})["webhook_id"] = info["webhook_id"]
    app_id = info.get("app_id")
    if not isinstance(app_id, str):
        raise RelayCrash("Cannot read properties of undefined (reading 'indexOf')")
    if HA_IOS_APP in app_id:
        counted = _ha_app_rules(body, payload, counted)
    return _legacy_post_process(payload, counted)


def _command(payload: dict, data, command: str) -> None:
    """legacy.js :: addCommand — a background push the app handles, with no alert."""
    payload["notification"] = {}
    aps = payload["apns"]["payload"]["aps"] = {"contentAvailable": True}
    payload["apns"]["payload"]["homeassistant"] = {"command": command}
    push = data.get("push") if isinstance(data, dict) else None
    if isinstance(push, dict) and js_truthy(push.get("badge")):
        aps["badge"] = push["badge"]


def _ha_app_rules(body: dict, payload: dict, counted: bool) -> bool:
    """legacy.js :: createPayload, the ``io.robbie.HomeAssistant`` branch: commands by exact message, else an alert."""
    message, data = body.get("message"), body.get("data")
    apns = payload["apns"]
    if message in ("request_location_update", "request_location_updates"):
        _command(payload, data, "request_location_update")
        return False
    if message == "clear_badge":
        payload["notification"] = {}
        apns["payload"]["aps"] = {"badge": 0}
        return False
    if message == "clear_notification":
        _command(payload, data, "clear_notification")
        if isinstance(data, dict) and js_truthy(data.get("tag")):
            apns["payload"]["homeassistant"]["tag"] = data["tag"]
        if js_truthy(apns["headers"].get("apns-collapse-id")):
            apns["payload"]["homeassistant"]["collapseId"] = apns["headers"]["apns-collapse-id"]
        apns["headers"].pop("apns-collapse-id", None)
        return False
    if message in ("update_complications", "update_widgets"):
        _command(payload, data, message)
        return False
    p = apns["payload"]
    needs_category = False
    if js_truthy(data) and isinstance(data, dict):
        if js_truthy(data.get("subtitle")):
            p["aps"]["alert"]["subtitle"] = data["subtitle"]
        if isinstance(data.get("push"), dict):
            p["aps"] = {**p["aps"], **data["push"]}
        if js_truthy(data.get("actions")):
            p["actions"] = data["actions"]
            needs_category = True
        if js_truthy(data.get("sound")):
            p["aps"]["sound"] = data["sound"]
        elif isinstance(data.get("push"), dict) and js_truthy(data["push"].get("sound")):
            p["aps"]["sound"] = data["push"]["sound"]
        if js_truthy(data.get("entity_id")):
            p["entity_id"] = data["entity_id"]
            needs_category = True
        for key in ("level", "volume", "mode"):  # the kiosk values, passed on even when falsy
            if key in data:
                p[key] = data[key]
        if js_truthy(data.get("action_data")):
            p["homeassistant"] = data["action_data"]
            needs_category = True
        if js_truthy(data.get("attachment")):
            p["attachment"] = data["attachment"]
            needs_category = True
        for key, content_type in (("video", "mpeg4"), ("image", "jpeg"), ("audio", "waveformaudio")):
            if js_truthy(data.get(key)):
                attachment = p.setdefault("attachment", {})
                attachment.setdefault("content-type", content_type)
                attachment.setdefault("url", data[key])
                needs_category = True
        for key in ("url", "shortcut", "presentation_options"):
            if js_truthy(data.get(key)):
                p[key] = data[key]
        for key in ("notification_icon", "icon_url", "notification_icon_color", "color"):
            if key in data:
                p[key] = data[key]
        if isinstance(data.get("tag"), str):
            apns["headers"]["apns-collapse-id"] = data["tag"]
        if isinstance(data.get("group"), str):
            p["aps"]["thread-id"] = data["group"]
    aps = p.setdefault("aps", {})
    if needs_category and not js_truthy(aps.get("category")):
        aps["category"] = "DYNAMIC"
    elif js_truthy(aps.get("category")):
        aps["category"] = str(aps["category"]).upper()
    if not js_truthy(aps.get("contentAvailable")):
        aps["mutableContent"] = True
    if message == "delete_alert":
        counted = False
        payload["notification"].pop("body", None)
        for key in ("title", "subtitle", "body"):
            aps.get("alert", {}).pop(key, None)
        aps.pop("sound", None)
    if message == "test_push_source":
        aps["alert"]["title"], aps["alert"]["body"] = message, "apns-fcm"
    return counted


def _legacy_post_process(payload: dict, counted: bool) -> tuple[bool, dict]:
    """legacy.js :: createPayload, last part: sound "none", critical sounds (exempt only with a volume), push type."""
    aps = payload["apns"]["payload"]["aps"]
    sound = aps.get("sound")
    if js_truthy(sound):
        if isinstance(sound, str) and sound.lower() == "none":
            del aps["sound"]
        elif isinstance(sound, dict):
            if js_truthy(sound.get("volume")):
                sound["volume"] = float(sound["volume"])
            if js_truthy(sound.get("critical")):
                sound["critical"] = int(float(sound["critical"]))
            if js_truthy(sound.get("critical")) and isinstance(sound.get("volume"), (int, float)) and sound["volume"] > 0:
                counted = False
    if js_truthy(aps.get("badge")):
        aps["badge"] = js_number(aps["badge"])
    headers = payload["apns"]["headers"]
    headers["apns-push-type"] = "background" if js_truthy(aps.get("contentAvailable")) else "alert"
    return counted, payload


# ---- live-activity.js :: createPayload (top-level live_activity_token) -------------------------------------------

def live_activity_payload(body: dict, now: int) -> tuple[bool, dict]:
    data = body.get("data", {})
    if data is None:
        raise RelayCrash("Cannot read properties of null (reading 'event')")
    event = data.get("event") if data.get("event") is not None else "update"
    aps = {"timestamp": now, "event": event, "content-state": _content_state(body, data, now)}
    if event == "start":
        info = body.get("registration_info")
        aps["attributes-type"] = "HALiveActivityAttributes"
        aps["attributes"] = {"tag": data.get("tag") if data.get("tag") is not None else "",
                             "title": body.get("title") if body.get("title") is not None else "", "started_at": now}
        if isinstance(info, dict) and js_truthy(info.get("webhook_id")):
            aps["attributes"]["webhook_id"] = info["webhook_id"]
    if event == "end":
        aps["dismissal-date"] = data.get("dismissal_date") if data.get("dismissal_date") is not None else now
    if "stale_date" in data:
        aps["stale-date"] = data["stale_date"]
    if "relevance_score" in data:
        aps["relevance-score"] = data["relevance_score"]
    silent_update = event == "update" and data.get("silent") is True
    if js_truthy(data.get("alert")):
        aps["alert"] = data["alert"]
        if js_truthy(data.get("alert_sound")):
            aps["sound"] = data["alert_sound"]
    elif silent_update:
        aps["alert"] = {"title": ""}
    elif event in ("start", "update", "end"):
        message = body.get("message")
        aps["alert"] = {"title": body.get("title") if body.get("title") is not None else "",
                        "body": "" if message == "clear_notification" or message is None else message}
    headers = {"apns-priority": "5" if silent_update else "10"}
    if event == "start" and js_truthy(data.get("tag")):  # only starts collapse, so APNs keeps one of several
        headers["apns-collapse-id"] = data["tag"]
    return True, {"apns": {"liveActivityToken": body["live_activity_token"], "headers": headers,
                           "payload": {"aps": aps}},
                  "fcm_options": {"analytics_label": LIVE_ACTIVITY_LABEL}}


def _content_state(body: dict, data: dict, now: int) -> dict:
    """live-activity.js :: buildContentState — values copied as they are, no coercion."""
    message = body.get("message")
    state = {"message": message if "message" in body and message != "clear_notification" else ""}
    if "title" in body:
        state["title"] = body["title"]
    for key, name in CONTENT_STATE_FROM_DATA:
        if key in data:
            state[name] = data[key]
    if "when" in data:
        state["countdown_end"] = js_add(now, data["when"]) if js_truthy(data.get("when_relative")) else data["when"]
    override = data.get("content_state")
    if js_truthy(override) and isinstance(override, dict):
        for key in CONTENT_STATE_KEYS:
            if key in override:
                state[key] = override[key]
    return state


# ---- android.js :: createPayload ---------------------------------------------------------------------------------

def android_payload(body: dict) -> tuple[bool, dict]:
    payload = {"android": {}, "data": {}, "fcm_options": {"analytics_label": "androidV1Notification"}}
    counted, data, out = True, body.get("data"), payload["data"]
    if js_truthy(data):
        if not isinstance(data, dict):
            data = {}
        if isinstance(data.get("actions"), list):
            for i, action in enumerate(data["actions"], start=1):
                for key, name in (("action", "key"), ("title", "title"), ("uri", "uri"), ("behavior", "behavior"),
                                  ("authenticationRequired", "authenticationRequired")):
                    if js_truthy(_get(action, key)):
                        out[f"action_{i}_{name}"] = action[key]  # raw, not String()
        for key in ("ttl", "priority"):
            if js_truthy(data.get(key)):
                payload["android"][key] = data[key]
        for key in ANDROID_DATA_KEYS:
            if key in data:
                out[key] = js_string(data[key])
    message = body.get("message")
    if js_truthy(message):
        out["message"] = message
        if message in ANDROID_UNCOUNTED:
            counted = False
    if js_truthy(body.get("title")):
        out["title"] = body["title"]
    info = _get(body.get("registration_info"), "webhook_id")
    if js_truthy(info):
        out["webhook_id"] = info
    return counted, payload


# ---- FCM (the part of messaging.send the tests need) -------------------------------------------------------------

def fcm_check(message: dict, unregistered: set) -> None:
    """Raises what ``getMessaging().send()`` raises for a token FCM no longer knows or a message over its limit."""
    if message.get("token") in unregistered:
        raise FCMError("messaging/registration-token-not-registered", "Requested entity was not found.")
    apns_payload = (message.get("apns") or {}).get("payload")
    if apns_payload is not None and len(json.dumps(apns_payload, separators=(",", ":")).encode()) > APNS_PAYLOAD_LIMIT:
        raise FCMError("messaging/invalid-argument", "Message is too big")
    data = message.get("data")
    if isinstance(data, dict) and len(json.dumps(data, separators=(",", ":")).encode()) > FCM_DATA_LIMIT:
        raise FCMError("messaging/invalid-argument", "Message is too big")


# ---- what the iOS app shows (HALiveActivityAttributes.swift :: ContentState.init(from:)) ---------------------------

class NotShown(Exception):
    """ActivityKit could not decode the content state: the whole push is dropped on the phone."""


def ios_content_state(state: dict) -> dict:
    """The state the Lock Screen renders, decoded as the app's ``ContentState.init(from:)`` does: ``message`` required,
    strings must be strings, ``chronometer`` a bool, dates numbers; ``progress``/``progress_max`` quietly nil when not
    numbers, then rounded half away from zero."""
    if not isinstance(state.get("message"), str):
        raise NotShown("message must be a string")
    shown = {"message": state["message"]}
    for key in ("title", "critical_text", "icon", "color", "url", "background_color", "text_color",
                "progress_bar_color", "progress_bar_direction"):
        value = state.get(key)
        if value is None or (key == "title" and value == ""):  # an empty title falls back to the attributes'
            continue
        if not isinstance(value, str):
            raise NotShown(f"{key} must be a string")
        shown[key] = value
    if state.get("chronometer") is not None:
        if not isinstance(state["chronometer"], bool):
            raise NotShown("chronometer must be a bool")
        shown["chronometer"] = state["chronometer"]
    for key in ("countdown_end", "chronometer_start"):
        value = state.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise NotShown(f"{key} must be a number")
            shown[key] = value
    for key in ("progress", "progress_max"):
        value = state.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            shown[key] = int(math.floor(abs(value) + 0.5)) * (1 if value >= 0 else -1)
    if "progress" in shown and shown.get("progress_max", 0) > 0:
        fraction = min(max(shown["progress"] / shown["progress_max"], 0.0), 1.0)
        shown["percent"] = int(math.floor(fraction * 100 + 0.5))
    return shown


# ---- what a phone does with an FCM message, in one line of a table -----------------------------------------------

KIOSK = ("kiosk_show_screensaver kiosk_hide_screensaver kiosk_show_camera kiosk_hide_camera kiosk_set_brightness "
         "kiosk_set_volume kiosk_set_screensaver_mode kiosk_set_screensaver_brightness kiosk_reload kiosk_default").split()
ANDROID_COMMANDS = ANDROID_UNCOUNTED | {"TTS", "command_launch_app", "command_beacon_monitor"}


def phone_view(message: dict) -> tuple:
    """What the companion app makes of ``message`` (the FCM message the relay sent):
    ``("activity", event, title, message)`` for an ActivityKit push the iOS app decodes (``("nothing", why)`` when
    it cannot: the push is dropped); ``("command", name)`` for one it acts on without showing it (iOS:
    ``homeassistant.command``, ``clear_badge``, a kiosk body — home-assistant/iOS ``NotificationsCommandManager``,
    ``KioskPushCommand``; Android: its command messages, home-assistant/android ``MessagingManager``);
    ``("banner", title, body)`` otherwise."""
    apns = message.get("apns") or {}
    if "liveActivityToken" in apns:
        aps = apns["payload"]["aps"]
        try:
            state = ios_content_state(aps.get("content-state") or {})
        except NotShown as why:
            return ("nothing", str(why))
        title = state.get("title") or (aps.get("attributes") or {}).get("title")
        return ("activity", aps.get("event"), title, state["message"])
    if "data" in message and "apns" not in message:  # Android: data-only
        data = message["data"]
        if data.get("message") in ANDROID_COMMANDS or str(data.get("message", "")).startswith("command_"):
            return ("command", data["message"])
        return ("banner", data.get("title"), data.get("message"))
    payload = apns.get("payload") or {}
    aps = payload.get("aps") or {}
    if "homeassistant" in payload and aps.get("contentAvailable"):
        return ("command", payload["homeassistant"].get("command"))
    if aps.get("badge") == 0 and "alert" not in aps:
        return ("command", "clear_badge")
    alert = aps.get("alert") or {}
    if str(alert.get("body", "")).strip().lower() in KIOSK:
        return ("command", str(alert["body"]).strip().lower())
    return ("banner", alert.get("title"), alert.get("body"))
