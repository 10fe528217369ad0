"""lanpush as a drop-in for HA's relay: what HA really sends goes where the phone expects (the README's routing
table), witnessed by independent LAN clients (Python websockets) and a local fake of HA's relay."""
import json
import time

import pytest

from fake_relay import FakeRelay
from gateway import Gateway
from ha_payloads import CASES

IOS_INFO = {"app_id": "io.robbie.HomeAssistant", "app_version": "2025.1", "os_version": "18.2", "webhook_id": "hook-phone"}
ANDROID_INFO = {"app_id": "io.homeassistant.companion.android", "app_version": "2025.1", "os_version": "16",
                "webhook_id": "hook-pixel"}
TOKENS = {"phone": "tok-phone", "pixel": "tok-pixel"}


class Setup:
    def __init__(self):
        self.relay = FakeRelay().start()
        relay_cfg = {"upstream": self.relay.url, "min_update_interval": 1, "timeout": 2}
        self.gw = Gateway(devices=("phone", "pixel", "tablet"), extra="relay: " + json.dumps(relay_cfg) + "\n").start()
        self.clients = {
            "phone": self.gw.client("phone", register=None),
            "pixel": self.gw.client("pixel", register=None),
            "tablet": self.gw.client("tablet"),
        }
        for device, info, url in (("phone", IOS_INFO, self.relay.ios_url), ("pixel", ANDROID_INFO, self.relay.android_url)):
            c = self.clients[device]
            c.send({"type": "register", "push_token": TOKENS[device], "push_url": url, "registration_info": info})
            assert c.pump(lambda c: any(f["type"] == "registered" for f in c.frames))
        for c in self.clients.values():
            assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames))

    def send(self, device, notify):
        """As HA does: the relay body to the device's push_url (lanpush), or /v1/push for a LAN-only device."""
        if device in TOKENS:
            body = {"push_token": TOKENS[device], "registration_info": IOS_INFO if device == "phone" else ANDROID_INFO,
                    **notify}
            path = "/api/sendPushNotification" if device == "phone" else "/api/sendPush/android/v1"
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


def test_the_table_holds_forty_real_payloads_with_sources():
    assert len(CASES) >= 40
    assert all(c.source for c in CASES)
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_an_ha_payload_goes_where_the_phone_expects(setup, case):
    client = setup.clients[case.device]
    for earlier in case.before:
        assert setup.send(case.device, earlier)[0] in (201, 202)
        assert client.pump(lambda c: c.activities.get(earlier["data"]["tag"]))
    frames_before, relayed_before = len(client.frames), len(setup.relay.requests)
    status, answer = setup.send(case.device, case.notify)

    if case.expect == "refused":
        assert status == 422, answer
        assert answer["rule"] == "relay_credentials" and "relay" in answer["message"]
    else:
        assert status in (201, 202), answer
    relay_body = frame = None
    if case.expect in ("relay", "both"):
        got = setup.relay.wait_for(relayed_before + 1, timeout=5)
        relay_body = got[relayed_before].body
        # HA's relay body, as HA sent it: the device's push_token and registration, the right relay path.
        assert relay_body["push_token"] == TOKENS[case.device]
        assert got[relayed_before].path == ("/api/sendPush/android/v1" if case.device == "pixel" else "/api/sendPushNotification")
        assert "lanpush" not in relay_body.get("data", {})
    if case.expect in ("lan", "both"):
        assert client.pump(lambda c: any(f["type"] == case.frame for f in c.frames[frames_before:]), timeout=5)
        frame = next(f for f in client.frames[frames_before:] if f["type"] == case.frame)
    # Nothing on the other path (give a wrong delivery time to show up).
    client.pump(timeout=0.3)
    lan_frames = [f for f in client.frames[frames_before:] if f["type"] not in ("device",)]
    if case.expect in ("relay", "refused"):
        assert lan_frames == [], lan_frames
    if case.expect in ("lan", "refused"):
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


def test_a_notification_routed_to_the_relay_of_a_device_without_credentials_is_refused(setup):
    status, answer = setup.send("tablet", {"message": "x", "data": {"lanpush": {"path": "relay"}}})
    assert status == 422 and answer["field"] == "targets" and answer["rule"] == "relay_credentials"
    status, answer = setup.send("tablet", {"message": "x", "data": {"lanpush": {"path": "mqtt"}}})
    assert status == 400 and answer["field"] == "data.lanpush.path" and answer["rule"] == "enum"


def test_devices_report_their_notification_routing(setup):
    status, body = setup.gw.get("/v1/devices")
    assert status == 200
    assert {d["id"]: d["notifications"] for d in body["devices"]} == {"phone": "auto", "pixel": "auto", "tablet": "auto"}
