"""HA-native mode's mobile_app webhook calls, against a recording stand-in for Home Assistant (ha_standin.py: a small
HTTP + websocket server in this process that speaks just enough of HA's APIs and records every webhook post).

Why a stand-in: the Home Assistant on this machine is 2025.4.4, which has none of HA's Live Activity bookkeeping
(the `live_activity_token` / `live_activity_dismissed` webhooks, `supports_live_activities` and
`start_live_activity_token` in the registration's app_data). What lanpushd sends to an HA that claims 2026.7, and
that it sends none of it to one that claims 2025.4.4, is read here from the recorded calls; test_home_assistant.py
shows the same against the real 2025.4.4 from HA's side. The sensor throttle is timed here too: the stand-in
records when each call arrived.

Field names follow HA core's mobile_app (live_activity/webhook.py and its tests; HA's developer docs on Live
Activities): the token webhook's type is `live_activity_token` (its handler is `webhook_update_live_activity_token`)
with `tag`, `push_token`, `expires_at`; the dismissal's is `live_activity_dismissed` with `tag`.
"""
import time

import pytest

from gateway import Gateway
from ha_standin import HAStandIn

INTERVAL = 1.5  # home_assistant.sensor_interval in these tests


def start_gateway(ha, devices=("phone",), interval=INTERVAL):
    extra = f"home_assistant:\n  url: {ha.url}\n  token: stand-in-token\n  sensor_interval: {interval}\n"
    return Gateway(devices=devices, extra=extra).start()


def ha_status(gw, device="phone"):
    status, body = gw.get("/v1/devices")
    assert status == 200, body
    return next(d for d in body["devices"] if d["id"] == device)["home_assistant"]


def wait_ready(gw, device="phone", timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        s = ha_status(gw, device)
        if s.get("channel") == "subscribed" and s.get("sensors") == "registered":
            return s
        time.sleep(0.05)
    raise AssertionError(f"{device} not registered, subscribed and with its sensors: {ha_status(gw, device)}")


def wait_until(predicate, what, timeout=5):
    deadline = time.time() + timeout
    while not (value := predicate()):
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


def registered(client):
    assert client.pump(lambda c: any(f["type"] == "registered" for f in c.frames), timeout=5), client.frames
    return next(f for f in client.frames if f["type"] == "registered")


def app_data_of_updates(ha):
    return [c.data["app_data"] for c in ha.webhooks("update_registration")]


@pytest.fixture
def ha_2026():
    with HAStandIn(version="2026.7.0") as ha:
        yield ha


@pytest.fixture
def ha_2025():
    with HAStandIn(version="2025.4.4") as ha:
        yield ha


def test_an_ha_with_the_live_activity_webhooks_hears_what_the_clients_report(ha_2026):
    ha = ha_2026
    gw = start_gateway(ha)
    try:
        s = wait_ready(gw)
        assert s["live_activities"] is True and s["ha_version"] == "2026.7.0"
        [registration] = [c.data for c in ha.calls if c.type == "registration"]
        # Nothing reported yet: the registration says nothing of Live Activities.
        assert set(registration["app_data"]) == {"push_websocket_channel", "push_url", "push_token"}
        webhook = s["webhook_id"]

        client = gw.client("phone")
        # A LAN client that shows Live Activities and has no relay credentials of its own.
        client.send({"type": "register", "supports_live_activities": True})
        assert registered(client) == {"type": "registered", "supports_live_activities": True}
        app_data = ha.wait_for(lambda: app_data_of_updates(ha), what="update_registration")[-1]
        assert app_data["supports_live_activities"] is True
        assert app_data["push_websocket_channel"] is True and app_data["push_token"] == registration["app_data"]["push_token"]

        expires = time.time() + 3600
        client.send({"type": "live_activity_token", "tag": "washer_cycle", "token": "la-token-1", "expires_at": expires})
        [token] = ha.wait_for(lambda: ha.webhooks("live_activity_token"), what="live_activity_token")
        assert token.webhook_id == webhook
        assert token.data == {"tag": "washer_cycle", "push_token": "la-token-1", "expires_at": expires}
        # Without expires_at (HA requires one): the 12 h HA's iOS app gives its tokens.
        client.send({"type": "live_activity_token", "tag": "dryer", "token": "la-token-2"})
        second = ha.wait_for(lambda: ha.webhooks("live_activity_token")[1:], what="the second token")[0]
        assert second.data["tag"] == "dryer" and abs(second.data["expires_at"] - (time.time() + 12 * 3600)) < 60

        client.send({"type": "push_to_start_token", "token": "pts-1"})
        app_data = ha.wait_for(lambda: [a for a in app_data_of_updates(ha) if "start_live_activity_token" in a],
                               what="the push-to-start token in update_registration")[-1]
        assert app_data["start_live_activity_token"] == "pts-1" and app_data["supports_live_activities"] is True
        # lanpush stores what HA holds once HA's answer is back, not when HA has the request: stopped in between, it
        # sends the update again after the restart (as it should). The restart below is about what was stored.
        wait_until(lambda: ha_status(gw)["registration"] == "registered", "lanpush to take HA's answer to the update")

        status, body = gw.request("POST", "/v1/push", {"targets": ["phone"], "title": "Washer", "message": "Rinsing",
                                                       "data": {"tag": "washer_cycle", "live_update": True}},
                                  headers=gw.admin_headers())
        assert status == 202, body
        assert client.pump(lambda c: "washer_cycle" in c.activities, timeout=5)
        client.send({"type": "dismissed", "tag": "washer_cycle"})
        [dismissed] = ha.wait_for(lambda: ha.webhooks("live_activity_dismissed"), what="live_activity_dismissed")
        assert dismissed.webhook_id == webhook and dismissed.data == {"tag": "washer_cycle"}
        wait_until(lambda: ha_status(gw)["live_activity_calls"] == 3, "lanpush to count HA's answers")
        client.close()

        # What HA holds is stored: a restart sends no update_registration again.
        updates = len(ha.webhooks("update_registration"))
        assert gw.stop() == 0
        gw.start()
        wait_ready(gw)
        time.sleep(0.5)
        assert len(ha.webhooks("update_registration")) == updates
        assert len([c for c in ha.calls if c.type == "registration"]) == 1
    finally:
        gw.stop()


def test_an_older_ha_gets_none_of_the_live_activity_bookkeeping(ha_2025):
    ha = ha_2025
    gw = start_gateway(ha)
    try:
        s = wait_ready(gw)
        assert s["live_activities"] is False
        client = gw.client("phone")
        client.send({"type": "register", "push_token": "phone-token", "push_url": "https://relay.invalid/relay",
                     "supports_live_activities": True})
        assert registered(client)["supports_live_activities"] is True
        client.send({"type": "live_activity_token", "tag": "washer_cycle", "token": "la-token-1"})
        client.send({"type": "push_to_start_token", "token": "pts-1"})
        client.send({"type": "dismissed", "tag": "washer_cycle"})
        client.send({"type": "ping"})
        assert client.pump(lambda c: any(f["type"] == "pong" for f in c.frames), timeout=5)
        # The connect's sensor update shows the frames were handled; then nothing of the bookkeeping came.
        ha.wait_for(lambda: ha.webhooks("update_sensor_states"), what="the sensor update of the connect")
        time.sleep(1)
        assert [c.type for c in ha.webhooks() if c.type not in ("register_sensor", "update_sensor_states")] == []
        [registration] = [c.data for c in ha.calls if c.type == "registration"]
        assert set(registration["app_data"]) == {"push_websocket_channel", "push_url", "push_token"}
        assert ha_status(gw)["live_activity_calls"] == 0
        # lanpush itself keeps what the client said (for the relay path and GET /v1/devices).
        device = next(d for d in gw.get("/v1/devices")[1]["devices"] if d["id"] == "phone")
        assert device["supports_live_activities"] is True and device["push_to_start_token"] is True
        client.close()
    finally:
        gw.stop()


def test_sensors_register_once_then_update_only_what_changed_at_most_once_an_interval(ha_2026):
    ha = ha_2026
    gw = start_gateway(ha)
    try:
        webhook = wait_ready(gw)["webhook_id"]
        sensors = {c.data["unique_id"]: c.data for c in ha.webhooks("register_sensor", webhook)}
        assert set(sensors) == {f"lanpush-phone-{k}" for k in ("connected", "path", "activities", "queued_notifications",
                                                                 "relay_remaining", "relay_resets_at", "last_seen")}
        connected = sensors["lanpush-phone-connected"]
        assert connected["type"] == "binary_sensor" and connected["device_class"] == "connectivity"
        assert connected["state"] is False and sensors["lanpush-phone-path"]["state"] == "none"
        assert sensors["lanpush-phone-last_seen"]["device_class"] == "timestamp"

        # The first change after a quiet spell goes at once, with only what changed.
        client = gw.client("phone")
        first = ha.wait_for(lambda: ha.webhooks("update_sensor_states"), what="the first update")[0]
        by_id = {s["unique_id"]: s for s in first.data}
        assert by_id["lanpush-phone-connected"]["state"] is True
        assert by_id["lanpush-phone-connected"]["attributes"] == {"sessions": 1}
        assert by_id["lanpush-phone-path"]["state"] == "lan" and by_id["lanpush-phone-path"]["icon"] == "mdi:lan"
        assert "lanpush-phone-last_seen" in by_id and "lanpush-phone-activities" not in by_id

        # A flapping session within the interval: one more update, at the interval's end, with the last state.
        client.close()
        gw.wait_disconnected("phone")
        again = gw.client("phone")
        again.close()
        gw.wait_disconnected("phone")
        second = ha.wait_for(lambda: ha.webhooks("update_sensor_states")[1:], timeout=INTERVAL + 3, what="the second update")[0]
        assert second.at - first.at >= INTERVAL - 0.05
        assert {s["unique_id"]: s["state"] for s in second.data}["lanpush-phone-connected"] is False
        time.sleep(INTERVAL + 0.5)
        assert len(ha.webhooks("update_sensor_states")) == 2

        # A notification queued for the gone device changes one sensor only.
        status, _ = gw.request("POST", "/v1/push", {"targets": ["phone"], "title": "Door", "message": "Front door"},
                               headers=gw.admin_headers())
        assert status == 202
        third = ha.wait_for(lambda: ha.webhooks("update_sensor_states")[2:], timeout=INTERVAL + 3, what="the queue update")[0]
        assert [(s["unique_id"], s["state"]) for s in third.data] == [("lanpush-phone-queued_notifications", 1)]
        assert len(ha.webhooks("register_sensor")) == 7
    finally:
        gw.stop()


def test_a_sensor_ha_no_longer_knows_is_registered_again(ha_2026):
    """As after the user deleted an entity in HA: HA answers the update `not_registered`."""
    ha = ha_2026
    gw = start_gateway(ha, interval=0.2)
    try:
        wait_ready(gw)
        ha.forget_sensors()
        client = gw.client("phone")
        ha.wait_for(lambda: len(ha.webhooks("register_sensor")) > 7, timeout=8, what="register_sensor again")
        again = [c.data["unique_id"] for c in ha.webhooks("register_sensor")[7:]]
        assert "lanpush-phone-connected" in again
        assert ha.wait_for(lambda: ha.webhooks("register_sensor")[7:] and
                           next(c for c in ha.webhooks("register_sensor")[7:]
                                if c.data["unique_id"] == "lanpush-phone-connected").data["state"] is True,
                           what="the re-registered sensor with the current state")
        client.close()
    finally:
        gw.stop()


def test_sensors_that_failed_once_are_registered_again_once_an_update_gets_through(ha_2026):
    """A failed `update_sensor_states` (HA answered 500) shows as `sensors: error`; the next update that HA accepts
    (what failed goes again with it) turns the status back to `registered`."""
    ha = ha_2026
    gw = start_gateway(ha, interval=0.2)
    try:
        wait_ready(gw)
        updates0 = len(ha.webhooks("update_sensor_states"))
        with ha.lock:
            ha.failing_updates = 1
        client = gw.client("phone")  # connected: a sensor changes
        ha.wait_for(lambda: len(ha.webhooks("update_sensor_states")) >= updates0 + 2, timeout=5,
                    what="the failed update and the one after it")
        assert ha.failing_updates == 0
        s = wait_until(lambda: (s := ha_status(gw)) and s["sensors"] == "registered" and s, "sensors registered again")
        assert s.get("sensor_error") is None, s
        client.close()
    finally:
        gw.stop()
