"""The relay path against the real daemon: a local fake of HA's relay stands in for the cloud (loopback only)."""
import json
import time

import pytest

from fake_relay import FakeRelay
from gateway import Gateway

HA_BODY_KEYS = {"push_token", "registration_info", "message", "data"}


@pytest.fixture
def relay():
    with FakeRelay() as r:
        yield r


def make(gateway, relay, **relay_cfg):
    cfg = {"upstream": relay.url, "min_update_interval": 1, "timeout": 2}
    cfg.update(relay_cfg)
    return gateway(extra="relay: " + json.dumps(cfg) + "\n", session={"ping_interval": 1, "ping_timeout": 1, "ack_timeout": 2})


def gone_device(gw, relay, push_url=True):
    """Registers phone (its push_url = the fake relay) and disconnects it: the device is gone."""
    c = gw.client("phone")
    c.send({"type": "register", "push_token": "fcm:tok-phone", "push_url": relay.ios_url if push_url else None,
            "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "2024.1", "os_version": "17.2",
                                  "webhook_id": "hook-1"}} if push_url else
           {"type": "register", "push_token": "fcm:tok-phone", "registration_info": {"app_id": "io.robbie.HomeAssistant"}})
    assert c.pump(lambda c: any(f["type"] == "registered" for f in c.frames))
    return c


WASHER_START = dict(title="Washing Machine", message="Cycle started", data={"tag": "washer_cycle", "live_update": True})


def test_closed_device_goes_to_the_relay_in_ha_body_shape(gateway, relay):
    gw = make(gateway, relay)
    c = gone_device(gw, relay)
    c.close()
    gw.wait_disconnected()
    t0 = time.time()
    status, body = gw.relay("fcm:tok-phone", **WASHER_START)
    assert status == 202 and time.time() - t0 < 1
    assert set(body["rateLimits"]) == {"attempts", "successful", "errors", "total", "maximum", "remaining", "resetsAt"}
    got = relay.wait_for(1)[0]
    assert got.path == "/api/sendPushNotification"
    assert got.header("User-Agent").startswith("lanpush/")
    assert HA_BODY_KEYS <= set(got.body)
    assert got.body["push_token"] == "fcm:tok-phone" and got.body["registration_info"]["webhook_id"] == "hook-1"
    assert got.body["data"]["tag"] == "washer_cycle" and got.body["title"] == "Washing Machine"
    # clear_notification goes at once as an end, even within the update interval.
    gw.relay("fcm:tok-phone", message="clear_notification", data={"tag": "washer_cycle"})
    end = relay.wait_for(2)[1]
    assert end.body["message"] == "clear_notification" and end.at - got.at < 1.0


def test_a_burst_is_paced_and_the_last_request_carries_the_final_state(gateway, relay):
    gw = make(gateway, relay)
    gone_device(gw, relay).close()
    gw.wait_disconnected()
    gw.relay("fcm:tok-phone", **WASHER_START)
    relay.wait_for(1)
    relay.reset()
    t0 = time.time()
    for i in range(100):
        gw.relay("fcm:tok-phone", title="Washing Machine", message=f"step {i}",
                 data={"tag": "washer_cycle", "live_update": True, "progress": i, "progress_max": 100, "silent": True})
        time.sleep(max(0, t0 + (i + 1) * 0.03 - time.time()))
    time.sleep(2.5)
    got = relay.requests
    assert 1 <= len(got) <= 4, [r.body["message"] for r in got]
    assert got[-1].body["message"] == "step 99" and got[-1].body["data"]["progress"] == 99
    assert all(r.body["data"].get("silent") is True for r in got)  # the relay sends them at priority 5
    gaps = [b.at - a.at for a, b in zip(got, got[1:])]
    assert all(g >= 0.9 for g in gaps), gaps


def test_429_holds_until_resets_at_and_500_retries_with_backoff(gateway, relay):
    gw = make(gateway, relay)
    gone_device(gw, relay).close()
    gw.wait_disconnected()
    relay.script(FakeRelay.rate_limited(resets_in=2.0))
    gw.relay("fcm:tok-phone", **WASHER_START)
    first = relay.wait_for(1)[0]
    second = relay.wait_for(2, timeout=8)[1]
    assert second.at - first.at >= 1.8, "sent again before resetsAt"
    relay.reset()
    relay.script(FakeRelay.error(500), FakeRelay.error(500))
    gw.relay("fcm:tok-phone", message="clear_notification", data={"tag": "washer_cycle"})
    tries = relay.wait_for(3, timeout=15, predicate=lambda r: r.answer_status is not None)
    assert [r.answer_status for r in tries[:3]] == [500, 500, 201]
    assert all(r.body["message"] == "clear_notification" for r in tries)


def test_relay_down_for_a_while_then_delivered_and_lan_unaffected(gateway, relay):
    gw = make(gateway, relay)
    gone_device(gw, relay).close()
    gw.wait_disconnected()
    relay.go_down()
    gw.relay("fcm:tok-phone", **WASHER_START)
    # Meanwhile the LAN path works for another device, and ingest answers at once.
    lan = gw.client("tablet")
    lan.pump(lambda c: c.frames)
    t0 = time.time()
    assert gw.request("POST", "/v1/push", {"targets": ["tablet"], "message": "x", "data": {"tag": "t", "live_update": True}},
                      headers=gw.admin_headers())[0] == 202
    assert time.time() - t0 < 1
    assert lan.pump(lambda c: "t" in c.activities)
    time.sleep(1.5)
    relay.come_up()
    got = relay.wait_for(1, timeout=20, predicate=lambda r: r.answer_status == 201)
    assert got[0].body["data"]["tag"] == "washer_cycle"


def test_403_marks_the_token_invalid(gateway, relay):
    gw = make(gateway, relay)
    gone_device(gw, relay).close()
    gw.wait_disconnected()
    relay.set_default(FakeRelay.forbidden())
    gw.relay("fcm:tok-phone", **WASHER_START)
    relay.wait_for(1)
    deadline = time.time() + 5
    while time.time() < deadline:
        phone = next(d for d in gw.get("/v1/devices")[1]["devices"] if d["id"] == "phone")
        if phone.get("relay", {}).get("token_invalid"):
            break
        time.sleep(0.05)
    assert phone["relay"]["token_invalid"] is True and phone["path"] == "none"
    assert "lanpush_relay_invalid_tokens 1" in gw.get("/metrics")[1]
    gw.relay("fcm:tok-phone", message="more", data={"tag": "washer_cycle", "live_update": True})
    time.sleep(1)
    assert len(relay.requests) == 1


def relay_status(gw, device="phone"):
    return next(d for d in gw.get("/v1/devices")[1]["devices"] if d["id"] == device).get("relay", {})


def test_a_dead_token_is_reported_and_never_retried(gateway, relay):
    """FCM's "not registered" comes back from HA's relay as 500 InvalidToken (functions/handlers.js, handleError):
    the token is dead, not the relay down. One request, then nothing more until a client registers again."""
    gw = make(gateway, relay)
    gone_device(gw, relay).close()
    gw.wait_disconnected()
    relay.unregister("fcm:tok-phone")
    gw.relay("fcm:tok-phone", **WASHER_START)
    got = relay.wait_for(1, answered=True)[0]
    assert got.answer_status == 500 and got.answer["errorType"] == "InvalidToken"
    deadline = time.time() + 5
    while not relay_status(gw).get("token_invalid") and time.time() < deadline:
        time.sleep(0.05)
    status = relay_status(gw)
    assert status["token_invalid"] is True and "InvalidToken" in status["token_invalid_reason"]
    gw.relay("fcm:tok-phone", message="Door", data={"tag": "door"})
    gw.relay("fcm:tok-phone", title="Washing Machine", message="Rinsing", data={"tag": "washer_cycle", "live_update": True})
    time.sleep(3)
    assert len(relay.requests) == 1, [r.body for r in relay.requests]
    assert gw.metric("lanpush_relay_dropped_total") >= 1  # what was queued for it; later changes wait for the LAN
    assert "relay refused the device's push token" in gw.logtext()
    # The app registered again (a new FCM token): the path works again.
    c = gw.client("phone")
    c.send({"type": "register", "push_token": "fcm:tok-phone-2", "push_url": relay.ios_url,
            "registration_info": {"app_id": "io.robbie.HomeAssistant", "webhook_id": "hook-1"}})
    assert c.pump(lambda c: any(f["type"] == "registered" for f in c.frames))
    c.close()
    gw.wait_disconnected()
    gw.relay("fcm:tok-phone-2", message="Back", data={"tag": "back"})
    assert relay.wait_for(2, answered=True)[1].answer_status == 201
    assert not relay_status(gw).get("token_invalid")


def test_a_payload_too_large_drops_that_item_and_the_next_goes_at_once(gateway, relay):
    gw = make(gateway, relay)
    gone_device(gw, relay).close()
    gw.wait_disconnected()
    huge = "x" * 5000  # past APNs' 4 KB: FCM refuses it, the relay answers 500 PayloadTooLarge
    assert gw.relay("fcm:tok-phone", message=huge)[0] == 202
    first = relay.wait_for(1, answered=True)[0]
    assert first.answer["errorType"] == "PayloadTooLarge"
    assert gw.relay("fcm:tok-phone", message="small")[0] == 202
    second = relay.wait_for(2, answered=True)[1]
    assert second.answer_status == 201 and second.body["message"] == "small" and second.at - first.at < 2
    time.sleep(1.5)
    assert len(relay.requests) == 2, "the refused item is never sent again"
    assert not relay_status(gw).get("token_invalid")


def test_the_hand_back_ends_what_the_relay_started_on_the_phone(gateway, relay):
    """While the phone was away the relay started its activity; once a LAN session has stayed relay.hand_back_after,
    the relay path ends it there — not left frozen on the Lock Screen until iOS drops it."""
    gw = make(gateway, relay, hand_back_after=1)
    c = gone_device(gw, relay)
    c.send({"type": "push_to_start_token", "token": "pts-phone"})
    c.close()
    gw.wait_disconnected()
    gw.relay("fcm:tok-phone", **WASHER_START)
    start = relay.wait_for(1, answered=True)[0]
    assert start.sent["apns"]["payload"]["aps"]["event"] == "start" and start.body["live_activity_token"] == "pts-phone"
    back = gw.client("phone")
    assert back.pump(lambda c: "washer_cycle" in c.activities)
    end = relay.wait_for(2, timeout=6, answered=True)[1]
    assert end.at - start.at >= 1.0
    # No activity token was reported for it: the companion app's clear_notification command, which ends the
    # activity with that tag (home-assistant/iOS HandlerClearNotification).
    assert end.body["message"] == "clear_notification" and end.body["data"] == {"tag": "washer_cycle"}
    assert end.sent["apns"]["payload"]["homeassistant"] == {"command": "clear_notification", "tag": "washer_cycle"}
    assert "shown" not in relay_status(gw)
    back.pump(timeout=0.5)
    assert back.activities["washer_cycle"]["phase"] == "active", "the LAN client keeps showing it"
    back.close()


def test_unknown_push_token_is_proxied_to_the_upstream_paced(gateway, relay):
    gw = make(gateway, relay, proxy_unknown_tokens=True)
    status, body = gw.request("POST", "/api/sendPush/android/v1", {
        "push_token": "fcm:stranger", "message": "Cycle started", "title": "Washer",
        "registration_info": {"app_id": "io.homeassistant.companion.android", "app_version": "2026.1", "webhook_id": "hook-s"},
        "data": {"tag": "w", "live_update": True, "when": 60, "when_relative": True, "template": {"template": "generic", "progress": 0.5}}})
    assert status == 202 and body["target"] == "fcm:stranger"
    got = relay.wait_for(1)[0]
    assert got.path == "/api/sendPush/android/v1" and got.body["push_token"] == "fcm:stranger"
    assert "template" not in got.body["data"], "templates are LAN-only"
    assert "when_relative" not in got.body["data"] and abs(got.body["data"]["when"] - (time.time() + 60)) < 5


def test_outbox_survives_kill_9(gateway, relay):
    gw = make(gateway, relay)
    gone_device(gw, relay).close()
    gw.wait_disconnected()
    relay.go_down()
    gw.relay("fcm:tok-phone", **WASHER_START)
    time.sleep(0.5)
    import signal
    gw.stop(signal.SIGKILL)
    relay.come_up()
    gw.start()
    got = relay.wait_for(1, timeout=15, predicate=lambda r: r.answer_status == 201)
    assert got[0].body["data"]["tag"] == "washer_cycle"
