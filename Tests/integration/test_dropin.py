"""lanpush as a drop-in for HA's relay: what HA really sends goes where the phone expects (the README's routing
table) and the phone shows what it would have shown — witnessed by independent LAN clients (Python websockets) and a
local fake of HA's relay that builds the FCM message as the relay's own code does (relay_rules)."""
import json

import pytest

import relay_rules
from fake_relay import FakeRelay
from gateway import Gateway
from ha_payloads import CASES

IOS_INFO = {"app_id": "io.robbie.HomeAssistant", "app_version": "2026.8.1", "os_version": "18.6", "webhook_id": "hook-phone"}
AWAY_INFO = {**IOS_INFO, "webhook_id": "hook-away"}
ANDROID_INFO = {"app_id": "io.homeassistant.companion.android", "app_version": "2026.8.4", "os_version": "36",
                "webhook_id": "hook-pixel"}
TOKENS = {"phone": "fcm:tok-phone", "pixel": "fcm:tok-pixel", "away": "fcm:tok-away"}
INFO = {"phone": IOS_INFO, "pixel": ANDROID_INFO, "away": AWAY_INFO}


class Setup:
    def __init__(self):
        self.relay = FakeRelay().start()
        relay_cfg = {"upstream": self.relay.url, "min_update_interval": 1, "timeout": 2}
        self.gw = Gateway(devices=("phone", "pixel", "tablet", "away"), extra="relay: " + json.dumps(relay_cfg) + "\n").start()
        self.clients = {d: self.gw.client(d, register=None) for d in ("phone", "pixel", "tablet", "away")}
        for device in TOKENS:
            c = self.clients[device]
            url = self.relay.android_url if device == "pixel" else self.relay.ios_url
            c.send({"type": "register", "push_token": TOKENS[device], "push_url": url, "registration_info": INFO[device]})
            assert c.pump(lambda c: any(f["type"] == "registered" for f in c.frames))
        self.clients["away"].send({"type": "push_to_start_token", "token": "pts-away"})
        for c in self.clients.values():
            assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames))
        self.clients.pop("away").close()
        self.gw.wait_disconnected("away")

    def send(self, device, notify):
        """As HA does: the relay body to the device's push_url (lanpush), or /v1/push for a LAN-only device."""
        if device in TOKENS:
            body = {"push_token": TOKENS[device], "registration_info": INFO[device], **notify}
            path = "/api/sendPush/android/v1" if device == "pixel" else "/api/sendPushNotification"
            return self.gw.request("POST", path, body)
        return self.gw.request("POST", "/v1/push", {"targets": [device], **notify}, headers=self.gw.admin_headers())

    def close(self):
        for c in self.clients.values():
            c.close()
        self.gw.stop()
        self.relay.stop()


@pytest.fixture(scope="module")
def setup():
    s = Setup()
    yield s
    s.close()


def lan_view(client, frame):
    """What the LAN client shows after `frame`, in `relay_rules.phone_view`'s terms."""
    t = frame["type"]
    if t == "notification":
        return ("banner", frame.get("title"), frame.get("message"))
    if t == "clear":
        return ("clear", frame["tag"])
    if t == "end" and frame.get("phase") == "dismissed":
        return ("dismissed", frame["tag"])
    held = client.activities[frame["tag"]]
    return ("activity", t, held["state"].get("title") or held["title"] or None, held["state"]["message"])


def test_the_table_holds_seventy_real_payloads_with_sources():
    assert len(CASES) >= 70
    assert all(c.source for c in CASES)
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_an_ha_payload_goes_where_the_phone_expects_and_shows_what_the_phone_would(setup, case):
    client = setup.clients.get(case.device)
    relayed = len(setup.relay.requests)
    for earlier in case.before:
        assert setup.send(case.device, earlier)[0] in (201, 202)
        assert client.pump(lambda c: c.activities.get(earlier["data"]["tag"]))
    relayed_before = len(setup.relay.requests)
    assert relayed_before == relayed, "what the LAN showed first never went to the relay"
    frames_before = len(client.frames) if client else 0
    status, answer = setup.send(case.device, case.notify)

    # Never refused: HA only logs a refusal, and the phone would have shown it.
    assert status in (201, 202), answer
    if case.warns:
        assert case.warns in [w["rule"] for w in answer.get("warnings", [])], answer
    relay_body = frame = None
    views = []
    if case.expect in ("relay", "both"):
        got = setup.relay.wait_for(relayed_before + 1, timeout=5, answered=True)[relayed_before]
        relay_body = got.body
        # HA's relay body, as HA sent it: the device's push_token and registration, the right relay path.
        assert relay_body["push_token"] == TOKENS[case.device]
        assert got.path == ("/api/sendPush/android/v1" if case.device == "pixel" else "/api/sendPushNotification")
        assert "lanpush" not in relay_body.get("data", {})
        assert got.sent is not None and got.answer_status == 201, (got.answer_status, got.answer)
        views.append(relay_rules.phone_view(got.sent))
    if case.expect in ("lan", "both"):
        assert client.pump(lambda c: len(c.frames) > frames_before and c.frames[-1]["type"] != "device", timeout=5)
        frame = next(f for f in client.frames[frames_before:] if f["type"] != "device")
        views.append(lan_view(client, frame))
    assert views and all(v == case.phone for v in views), (views, case.phone)
    # Nothing on the other path (give a wrong delivery time to show up).
    if client:
        client.pump(timeout=0.3)
        lan_frames = [f for f in client.frames[frames_before:] if f["type"] != "device"]
        if case.expect == "relay":
            assert lan_frames == [], lan_frames
    if case.expect == "lan":
        assert len(setup.relay.requests) == relayed_before, setup.relay.bodies()[relayed_before:]
    if case.expect == "both":
        assert len(setup.relay.requests) == relayed_before + 1  # once on each path, never twice
    if case.check:
        assert case.check(case, frame, relay_body), (frame, relay_body)


def test_a_live_update_without_title_is_accepted_with_a_warning(setup):
    status, answer = setup.send("phone", {"message": "Rinsing", "data": {"tag": "warn_me", "live_update": True}})
    assert status == 201
    assert answer["warnings"][0]["field"] == "title" and "Android" in answer["warnings"][0]["message"]
    assert "accepted with a warning" in setup.gw.logtext()
    status, answer = setup.send("phone", {"title": "T", "message": "Rinsing", "data": {"tag": "warn_me", "live_update": True}})
    assert status == 201 and "warnings" not in answer


def test_lanpushs_own_api_stays_strict(setup):
    """/v1/push is lanpush's own API: a script's author gets the 4xx HA's doors never give."""
    status, answer = setup.send("tablet", {"message": "request_location_update"})
    assert status == 422 and answer["rule"] == "relay_credentials" and "relay" in answer["message"]
    status, answer = setup.send("tablet", {"message": "x", "data": {"lanpush": {"path": "relay"}}})
    assert status == 422 and answer["field"] == "targets" and answer["rule"] == "relay_credentials"
    status, answer = setup.send("tablet", {"message": "x", "data": {"lanpush": {"path": "mqtt"}}})
    assert status == 400 and answer["field"] == "data.lanpush.path" and answer["rule"] == "enum"
    status, answer = setup.send("tablet", {"message": "Rinsing", "data": {"tag": "washer.cycle", "live_update": True}})
    assert status == 400 and answer["field"] == "data.tag" and answer["rule"] == "pattern"


def test_devices_report_their_notification_routing(setup):
    status, body = setup.gw.get("/v1/devices")
    assert status == 200
    assert {d["id"]: d["notifications"] for d in body["devices"]} == {d: "auto" for d in ("phone", "pixel", "tablet", "away")}
