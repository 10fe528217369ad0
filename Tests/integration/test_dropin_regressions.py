"""Regressions found when lanpush was tried in a phone's push path as a user (and as an attacker) would: each of
these failed on the gateway before the fix."""
import http.client
import json
import socket
import threading
import time

import pytest
import websockets.sync.client as wsclient

from fake_relay import FakeRelay
from gateway import Gateway

REG = {"app_id": "io.robbie.HomeAssistant", "app_version": "2025.1", "os_version": "18.2", "webhook_id": "hook-1"}


def metric(gw, name):
    text = gw.get("/metrics")[1]
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " ") or line.startswith(name + "{"))


def plain(client):
    return [n for n in client.notifications if n["type"] == "notification"]


# ---- 1. plain notifications with ordinary HA tags -------------------------------------------------------------

@pytest.mark.parametrize("tag", ["camera.front_door", "front door", "alarm:zone:1", "x" * 200])
def test_a_plain_notification_with_an_ordinary_ha_tag_is_accepted(gateway, tag):
    gw = gateway()
    c = gw.client("phone")
    status, body = gw.request("POST", "/v1/push", {"targets": ["phone"], "message": "Motion", "data": {"tag": tag}},
                              headers=gw.admin_headers())
    assert status == 202, body
    assert c.pump(lambda c: plain(c))
    assert plain(c)[0]["data"]["tag"] == tag
    c.send({"type": "register", "push_token": "tok", "push_url": "http://127.0.0.1:9/relay"})
    assert gw.relay("tok", message="Motion", data={"tag": tag})[0] in (201, 202)


# ---- 2. an update without stale_date clears the stale state --------------------------------------------------

def test_an_update_of_a_stale_activity_without_a_stale_date_makes_it_active(gateway):
    gw = gateway()
    push = lambda data: gw.request("POST", "/v1/push", {"title": "Oven", "message": "Baking", "data": data},
                                   headers=gw.admin_headers())
    assert push({"tag": "oven", "live_update": True, "stale_date": time.time() + 2})[0] == 202
    time.sleep(3)
    assert gw.get("/v1/activities/oven")[1]["activities"][0]["phase"] == "stale"
    assert push({"tag": "oven", "live_update": True})[0] == 202
    a = gw.get("/v1/activities/oven")[1]["activities"][0]
    assert a["phase"] == "active" and "stale_date" not in a
    assert push({"tag": "oven", "live_update": True, "stale_date": None})[0] == 202
    assert gw.get("/v1/activities/oven")[1]["activities"][0]["phase"] == "active"


# ---- 3. an ended activity can still be dismissed -------------------------------------------------------------

def test_an_ended_activity_can_be_dismissed_and_then_is_gone(gateway):
    gw = gateway()
    c = gw.client("phone")
    assert gw.request("POST", "/v1/push", {"targets": ["phone"], "title": "Dryer", "message": "Drying",
                                           "data": {"tag": "dryer", "live_update": True}}, headers=gw.admin_headers())[0] == 202
    assert gw.request("DELETE", "/v1/activities/dryer?dismissal=default", headers=gw.admin_headers())[0] == 200
    assert c.pump(lambda c: c.activities.get("dryer", {}).get("phase") == "ended")
    status, body = gw.request("DELETE", "/v1/activities/dryer?dismissal=immediate", headers=gw.admin_headers())
    assert status == 200 and body["ended"] == [{"device_id": "phone", "tag": "dryer"}]
    assert c.pump(lambda c: "dryer" not in c.activities)
    assert gw.get("/v1/activities/dryer")[0] == 404
    status, body = gw.request("DELETE", "/v1/activities/dryer?dismissal=immediate", headers=gw.admin_headers())
    assert status == 404 and body["field"] == "tag"


# ---- 4. clear_notification ends, dismisses and clears -----------------------------------------------------------

def test_clear_notification_ends_dismisses_and_clears_the_tag(gateway):
    gw = gateway()
    c = gw.client("tablet")  # LAN only: its plain notifications are on the LAN too
    send = lambda body: gw.request("POST", "/v1/push", {"targets": ["tablet"], **body}, headers=gw.admin_headers())
    assert send({"title": "Washer", "message": "Washing", "data": {"tag": "washer", "live_update": True}})[0] == 202
    assert send({"title": "Washer", "message": "Door unlocked", "data": {"tag": "washer"}})[0] == 202
    assert c.pump(lambda c: "washer" in c.activities and plain(c))
    assert send({"message": "clear_notification", "data": {"tag": "washer"}})[0] == 202
    assert c.pump(lambda c: "washer" not in c.activities and any(n["type"] == "clear" for n in c.notifications))
    end = next(f for f in c.frames if f["type"] == "end")
    assert end["phase"] == "dismissed" and end["dismissal_date"] <= time.time() + 1
    assert gw.get("/v1/activities/washer")[0] == 404


# ---- 5. companion-app commands reach the companion app -------------------------------------------------------

def test_a_companion_command_goes_to_the_relay_not_to_the_lan(gateway):
    with FakeRelay() as relay:
        gw = gateway(extra=f"relay: {{upstream: '{relay.url}', timeout: 2}}\n")
        c = gw.client("phone")
        c.send({"type": "register", "push_token": "tok", "push_url": relay.ios_url, "registration_info": REG})
        assert c.pump(lambda c: any(f["type"] == "registered" for f in c.frames))
        status, _ = gw.relay("tok", message="request_location_update")
        assert status == 202
        got = relay.wait_for(1)[0]
        assert got.body["message"] == "request_location_update" and got.body["push_token"] == "tok"
        c.pump(timeout=0.5)
        assert not c.notifications


# ---- 6 and 7. the notification queue: bounded in bytes, never a disconnect, never silent -----------------------

def test_an_overflow_is_reported_in_band_and_does_not_doom_the_device(gateway):
    # A reader that never acks, with a window of 2: everything past the window waits in the (4 KiB) queue.
    gw = gateway(limits={"notification_queue_bytes": 4096}, session={"ack_timeout": 30, "window": 2})
    slow = gw.client("tablet", auto_ack=False)
    assert slow.pump(lambda c: any(f["type"] == "synced" for f in c.frames))
    for i in range(40):
        assert gw.request("POST", "/v1/push", {"targets": ["tablet"], "message": f"n{i} " + "x" * 300},
                          headers=gw.admin_headers())[0] == 202
    assert slow.pump(lambda c: any(f["type"] == "notifications_dropped" for f in c.frames))
    dropped = next(f for f in slow.frames if f["type"] == "notifications_dropped")
    assert dropped["count"] > 0 and dropped["through"] > 0
    assert slow.close_code is None
    assert metric(gw, "lanpush_notifications_dropped_total") >= dropped["count"]
    assert "notification queue full" in gw.logtext()
    slow.close()
    # The next session of the device gets the next notification, and is never closed for the old overflow.
    fresh = gw.client("tablet")
    assert fresh.pump(lambda c: any(f["type"] == "synced" for f in c.frames))
    assert gw.request("POST", "/v1/push", {"targets": ["tablet"], "message": "after"}, headers=gw.admin_headers())[0] == 202
    assert fresh.pump(lambda c: any(n.get("message") == "after" for n in plain(c)))
    fresh.pump(timeout=0.5)
    assert fresh.close_code is None


def test_a_burst_of_accepted_notifications_all_arrive_at_a_healthy_subscriber(gateway):
    """A healthy subscriber that acks cumulatively (every 16 frames, inside the window) but takes a millisecond per
    notification (a Raspberry Pi drawing it), durable store, a burst from several connections faster than that:
    every 2xx-accepted notification arrives, and the session stays open (a count-bounded queue of 100 closed it)."""
    gw = gateway(store={"enabled": True})
    c = gw.client("tablet", auto_ack=False)
    assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames))
    total, threads = 4000, 8

    def post(k):
        conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=30)
        for i in range(k, total, threads):
            body = json.dumps({"targets": ["tablet"], "message": f"burst {i}"})
            conn.request("POST", "/v1/push", body=body, headers={**gw.admin_headers(), "Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            assert r.status == 202
        conn.close()

    workers = [threading.Thread(target=post, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    got, unacked, last = set(), 0, 0
    deadline = time.time() + 120
    while len(got) < total and time.time() < deadline:
        try:
            f = c.recv_json(timeout=1)
        except TimeoutError:
            continue
        except Exception:  # closed: the regression
            c.close_code = c.ws.protocol.close_code
            break
        c.frames.append(f)
        if f["type"] == "notification":
            time.sleep(0.001)
            got.add(f["message"])
            last, unacked = f["seq"], unacked + 1
            if unacked >= 16:
                c.send({"type": "ack", "seq": last})
                unacked = 0
        elif unacked and f["type"] == "synced":
            pass
        if unacked and len(got) == total:
            c.send({"type": "ack", "seq": last})
    for w in workers:
        w.join()
    assert c.close_code is None and len(got) == total, (c.close_code, len(got))
    assert not any(f["type"] == "notifications_dropped" for f in c.frames)


# ---- 8. numbers from a client never crash the gateway -------------------------------------------------------

@pytest.mark.parametrize("seq", ["1e20", "18446744073709551616", "1e300", "-1", "1.5"])
def test_a_hostile_seq_is_refused_and_every_session_survives(gateway, seq):
    gw = gateway()
    bystander = gw.client("tablet")
    assert bystander.pump(lambda c: any(f["type"] == "synced" for f in c.frames))
    ws = wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream", open_timeout=5)
    assert json.loads(ws.recv(5))["type"] == "auth_required"
    ws.send(json.dumps({"type": "auth", "token": gw.tokens["phone"]}))
    ok = json.loads(ws.recv(5))
    ws.send('{"type":"subscribe","epoch":"%s","seq":%s}' % (ok["epoch"], seq))
    frames = [json.loads(ws.recv(5))]
    ws.send('{"type":"ack","seq":%s}' % seq)
    frames.append(json.loads(ws.recv(5)))
    assert any(f["type"] == "error" and "seq" in f["message"] for f in frames), frames
    ws.close()
    assert gw.proc.poll() is None and gw.get("/healthz")[0] == 200
    bystander.pump(timeout=0.3)
    assert bystander.close_code is None


@pytest.mark.parametrize("value", ["1e300", "-1e300", "inf", "nan", "1e6"])
def test_an_out_of_range_dismissal_interval_is_a_400(gateway, value):
    gw = gateway()
    status, body = gw.request("DELETE", f"/v1/activities?dismissal={value}", headers=gw.admin_headers())
    assert status == 400 and body["field"] == "dismissal"


# ---- 10. a NUL or an empty path segment never reads as "every activity" ----------------------------------------

def test_a_nul_in_the_path_never_ends_every_activity(gateway):
    gw = gateway()
    for tag in ("a", "b"):
        gw.request("POST", "/v1/push", {"targets": ["phone"], "title": tag, "message": "m",
                                        "data": {"tag": tag, "live_update": True}}, headers=gw.admin_headers())
    for method, path in (("DELETE", "/v1/activities/%00?device=phone"), ("GET", "/v1/activities/%00"),
                         ("DELETE", "/v1/activities/?device=phone")):
        status, body = gw.request(method, path, headers=gw.admin_headers())
        assert status == 400 and body["field"] == "path" and body["rule"] == "segment", (method, path, status, body)
    status, body = gw.get("/v1/activities?device=phone")
    assert sorted(a["tag"] for a in body["activities"]) == ["a", "b"]
    assert all(a["phase"] == "active" for a in body["activities"])
    assert gw.get("/preview/")[0] == 200  # a page keeps its trailing slash


# ---- 11. a relay body whose data is not an object -------------------------------------------------------------

def test_a_relay_body_whose_data_is_a_list_is_a_400(gateway):
    gw = gateway()
    status, body = gw.request("POST", "/api/sendPushNotification", {"push_token": "t", "message": "m", "data": [1, 2]})
    assert status == 400 and body["field"] == "data" and body["rule"] == "type"
    # The same list hidden behind a repeated key (the last one used to win, and the body was relayed on as sent).
    raw = b'{"push_token":"t","message":"m","data":[],"data":{}}'
    status, body = gw.request("POST", "/api/sendPushNotification", raw=raw, headers={"Content-Type": "application/json"})
    assert status == 400 and body["field"] == "body" and "repeated key" in body["message"]


# ---- 12. a quiet device's session is not closed for not acking the snapshot ------------------------------------

def test_a_quiet_device_that_acks_only_events_stays_connected(gateway):
    gw = gateway(session={"ack_timeout": 1})
    c = gw.client("phone", auto_ack=False)
    assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames))
    c.pump(timeout=3)
    assert c.close_code is None
    assert gw.get("/v1/devices")[1]["devices"][0]["connected"]


# ---- the client→server frames end to end -----------------------------------------------------------------------

def test_reported_tokens_reach_the_relay_and_a_dismissal_reaches_every_session(gateway):
    with FakeRelay() as relay:
        gw = gateway(extra=f"relay: {{upstream: '{relay.url}', timeout: 2, min_update_interval: 0}}\n")
        a = gw.client("phone")
        b = gw.client("phone")
        a.send({"type": "register", "push_token": "tok", "push_url": relay.ios_url, "registration_info": REG})
        assert a.pump(lambda c: any(f["type"] == "registered" for f in c.frames))
        assert gw.relay("tok", title="Washer", message="Washing", data={"tag": "washer", "live_update": True})[0] == 201
        for c in (a, b):
            assert c.pump(lambda c: "washer" in c.activities)
        a.send({"type": "live_activity_token", "tag": "washer", "token": "la-token-1"})
        a.send({"type": "push_to_start_token", "token": "pts-token-1"})
        # The user swipes it away on one session: every session of the device learns of it.
        b.send({"type": "dismissed", "tag": "washer"})
        for c in (a, b):
            assert c.pump(lambda c: "washer" not in c.activities)
        assert gw.get("/v1/activities/washer")[0] == 404
        devices = {d["id"]: d for d in gw.get("/v1/devices")[1]["devices"]}
        assert devices["phone"]["push_to_start_token"] is True and devices["phone"]["live_activity_tokens"] == 1
        # Gone: the next start goes to the relay with the push-to-start token, an update of a tag with a reported
        # activity token carries that token.
        a.close()
        b.close()
        gw.wait_disconnected()
        a2 = gw.client("phone")
        a2.send({"type": "live_activity_token", "tag": "ev", "token": "la-token-ev"})
        time.sleep(0.2)
        a2.close()
        gw.wait_disconnected()
        assert gw.relay("tok", title="Oven", message="Preheating", data={"tag": "oven", "live_update": True})[0] == 202
        start = relay.wait_for(1, predicate=lambda r: r.body["data"].get("tag") == "oven")[0]
        assert start.body["push_to_start_token"] == "pts-token-1"
        assert gw.relay("tok", title="EV", message="Charging", data={"tag": "ev", "live_update": True})[0] == 202
        ev = relay.wait_for(1, predicate=lambda r: r.body["data"].get("tag") == "ev")[0]
        assert ev.body["live_activity_token"] == "la-token-ev"


def raw_websocket(port):
    """A WebSocket opened by hand on a plain socket: nothing reads it unless the test does, so no pong is ever sent
    (a library client answers pings from its own thread)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /v1/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return s


def send_masked(sock, text):
    payload = text.encode()
    mask = b"\x01\x02\x03\x04"
    header = bytes([0x81, 0x80 | len(payload)]) if len(payload) < 126 else bytes([0x81, 0xFE]) + len(payload).to_bytes(2, "big")
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def test_a_device_that_stops_answering_pings_falls_back_to_the_relay(gateway):
    """Not a client that stops acking: one whose TCP connection stays open while it answers nothing at all."""
    with FakeRelay() as relay:
        gw = gateway(extra=f"relay: {{upstream: '{relay.url}', timeout: 2}}\n",
                     session={"ping_interval": 1, "ping_timeout": 1, "ack_timeout": 60})
        s = raw_websocket(gw.port)
        send_masked(s, json.dumps({"type": "auth", "token": gw.tokens["phone"]}))
        send_masked(s, json.dumps({"type": "register", "push_token": "tok", "push_url": relay.ios_url, "registration_info": REG}))
        send_masked(s, json.dumps({"type": "subscribe"}))
        deadline = time.time() + 5
        while time.time() < deadline and not gw.get("/v1/devices")[1]["devices"][0].get("registration"):
            time.sleep(0.05)
        assert gw.get("/v1/devices")[1]["devices"][0]["connected"]
        # From here on the client is frozen: its socket stays open, nobody reads it, no pong comes back.
        t0 = time.time()
        d = gw.wait_disconnected("phone", timeout=10)
        assert time.time() - t0 < 8 and d["path"] == "relay"
        assert gw.relay("tok", title="Washer", message="Washing", data={"tag": "washer", "live_update": True})[0] == 202
        assert relay.wait_for(1)[0].body["data"]["tag"] == "washer"
        s.close()
