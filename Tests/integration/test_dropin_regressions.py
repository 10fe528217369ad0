"""Regressions found when lanpush was tried in a phone's push path as a user (and as an attacker) would: each of
these failed on the gateway before the fix. Those that need no real process (routing, tags, dismissals, hostile
numbers, the client's frames) are in-process Swift tests now (Tests/LanpushGatewayTests); these need the real
daemon: its log and metrics, a real burst over sockets, lws's path decoding, a socket that stops answering."""
import http.client
import json
import socket
import threading
import time

from fake_relay import FakeRelay

REG = {"app_id": "io.robbie.HomeAssistant", "app_version": "2025.1", "os_version": "18.2", "webhook_id": "hook-1"}


def plain(client):
    return [n for n in client.notifications if n["type"] == "notification"]


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
    assert gw.metric("lanpush_notifications_dropped_total") >= dropped["count"]
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


# ---- a device whose socket stays open but answers nothing ---------------------------------------------------

def raw_websocket(port):
    """A WebSocket opened by hand on a plain socket: nothing reads it unless the test does, so no pong is ever sent
    (a library client answers pings from its own thread)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
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
        send_masked(s, json.dumps({"type": "register", "push_token": "fcm:tok", "push_url": relay.ios_url, "registration_info": REG}))
        send_masked(s, json.dumps({"type": "subscribe"}))
        deadline = time.time() + 5
        while time.time() < deadline and not gw.get("/v1/devices")[1]["devices"][0].get("registration"):
            time.sleep(0.05)
        assert gw.get("/v1/devices")[1]["devices"][0]["connected"]
        # From here on the client is frozen: its socket stays open, nobody reads it, no pong comes back.
        t0 = time.time()
        d = gw.wait_disconnected("phone", timeout=10)
        assert time.time() - t0 < 8 and d["path"] == "relay"
        assert gw.relay("fcm:tok", title="Washer", message="Washing", data={"tag": "washer", "live_update": True})[0] == 202
        assert relay.wait_for(1)[0].body["data"]["tag"] == "washer"
        s.close()
