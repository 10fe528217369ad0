"""The lanpush.v1 session protocol against the real daemon, witnessed by Python websockets."""
import socket
import threading
import time

import pytest

WASHER = [
    # (title, message, data) — the seed-000 washer cycle, as HA's relay body carries it.
    ("Washing Machine", "Cycle started", {"tag": "washer_cycle", "live_update": True}),
    ("Washing Machine", "Rinsing · 1 of 2", {"tag": "washer_cycle", "live_update": True, "progress": 900,
                                             "progress_max": 3600, "chronometer": True, "when": 2700,
                                             "when_relative": True, "notification_icon": "mdi:washing-machine",
                                             "notification_icon_color": "#2196F3", "color": "#2196F3"}),
    ("Renamed", "Cycle complete", {"tag": "washer_cycle", "live_update": True, "progress": 3600,
                                   "progress_max": 3600, "notification_icon": "mdi:washing-machine",
                                   "notification_icon_color": "#4CAF50", "color": "#4CAF50"}),
]


def test_washer_cycle_arrives_as_start_patches_end_on_every_session(gateway):
    gw = gateway()
    a = gw.client("phone", register="tok-phone")
    b = gw.client("phone")
    for c in (a, b):
        assert c.pump(lambda c: any(f["type"] == "snapshot" for f in c.frames))
    for title, message, data in WASHER:
        status, body = gw.relay("tok-phone", title=title, message=message, data=data)
        assert status == 201, body
        assert body["target"] == "tok-phone" and body["messageId"]
        assert set(body["rateLimits"]) >= {"attempts", "successful", "errors", "total", "maximum", "remaining", "resetsAt"}
        assert body["rateLimits"]["resetsAt"].endswith("Z")
    status, _ = gw.relay("tok-phone", message="clear_notification", data={"tag": "washer_cycle"})
    assert status == 201
    for c in (a, b):
        assert c.pump(lambda c: any(f["type"] == "end" for f in c.frames))
        kinds = [f["type"] for f in c.frames if f["type"] in ("start", "update", "end")]
        assert kinds == ["start", "update", "update", "end"]
        start = next(f for f in c.frames if f["type"] == "start")
        assert start["attributes"]["title"] == "Washing Machine"
        assert start["attributes"]["webhook_id"] == "hook-1"
        rinse = c.frames[[f["type"] for f in c.frames].index("update")]
        assert rinse["patch"]["progress"] == 900 and rinse["patch"]["icon"] == "mdi:washing-machine"
        assert abs(rinse["patch"]["countdown_end"] - (time.time() + 2700)) < 30
        # Applying the patches reproduces the full state of the last update; the title an update changed is the
        # state's (the iOS app shows state.title over the start's, as HA core and its relay send it). The
        # clear_notification ended it and dismissed it at once, as on the phone: the end frame says so.
        end = next(f for f in c.frames if f["type"] == "end")
        assert end["phase"] == "dismissed" and end["dismissal_date"] <= time.time() + 1
        assert "washer_cycle" not in c.activities
        final = c.dismissed["washer_cycle"]
        assert final["title"] == "Washing Machine"
        assert final["state"] == {"message": "Cycle complete", "title": "Renamed", "progress": 3600, "progress_max": 3600,
                                  "icon": "mdi:washing-machine", "color": "#4CAF50"}
        # ...and cleared any notification with that tag.
        assert c.pump(lambda c: any(n["type"] == "clear" and n["tag"] == "washer_cycle" for n in c.notifications))
    status, _ = gw.get("/v1/activities/washer_cycle")
    assert status == 404


def test_auth_is_required_and_a_bad_token_is_closed_4001(gateway):
    gw = gateway()
    import websockets.sync.client as wsclient
    from websockets.exceptions import ConnectionClosed
    ws = wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream")
    assert '"auth_required"' in ws.recv(timeout=5)
    ws.send('{"type":"auth","token":"nope"}')
    assert '"auth_invalid"' in ws.recv(timeout=5)
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=5)
    assert closed.value.rcvd.code == 4001


def test_slow_session_gets_merged_frames_and_others_are_not_delayed(gateway):
    # The slow session's ack timeout is far beyond the run: on a slow machine (a debug build, 2 shared cores) the
    # posts alone can take more than a minute, and a 4002 close would end the test's subject early.
    gw = gateway(session={"ack_timeout": 600, "window": 32})
    fast = gw.client("phone", register="tok-phone")
    slow = gw.client("phone", auto_ack=False)
    fast.pump(lambda c: c.frames)
    slow.pump(lambda c: c.frames)
    total = 5_000
    tags = [f"t{i}" for i in range(20)]
    done = threading.Event()
    posted_at = []
    converged_at = []

    def final(c):
        return all(c.activities.get(t, {}).get("state", {}).get("progress") == total - 20 + i for i, t in enumerate(tags))

    def reader():
        if fast.pump(lambda c: done.is_set() and final(c), timeout=500):
            converged_at.append(time.time())

    t = threading.Thread(target=reader)
    t.start()
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=10)
    for n in range(total):
        status, _ = gw.request("POST", "/api/sendPushNotification", {
            "push_token": "tok-phone", "title": "T", "message": f"m{n}",
            "data": {"tag": tags[n % 20], "live_update": True, "progress": n, "progress_max": total}}, conn=conn)
        assert status == 201
    posted_at.append(time.time())
    done.set()
    t.join(500)
    assert converged_at, "the fast session did not converge"
    # Not delayed: the session that reads has the last update about as soon as it is posted, although the other
    # session has stopped reading and acking (a generous bound; it takes milliseconds).
    assert converged_at[0] - posted_at[0] < 10, converged_at[0] - posted_at[0]
    # The slow session read nothing and acked nothing: the credit window bounds what was sent to it.
    slow_frames = 0
    try:
        while True:
            f = slow.recv_json(timeout=0.5)
            slow.apply(f)
            slow_frames += 1
    except TimeoutError:
        pass
    assert slow_frames <= 32 + 2, slow_frames
    # Reading and acking again converges to the final state with far fewer frames than updates.
    slow.frames.clear()
    slow.auto_ack = True
    slow.send({"type": "ack", "seq": 1 << 40})
    assert slow.pump(final, timeout=20)
    assert len(slow.frames) < total / 10


def test_session_silent_past_ack_timeout_is_closed_4002_and_resumes(gateway):
    gw = gateway(session={"ack_timeout": 1})
    c = gw.client("phone", register="tok", auto_ack=False)
    gw.relay("tok", title="A", message="one", data={"tag": "a", "live_update": True})
    from websockets.exceptions import ConnectionClosed
    code = None
    deadline = time.time() + 6
    try:
        while time.time() < deadline:
            f = c.recv_json(timeout=deadline - time.time())
            c.apply(f)
    except ConnectionClosed as e:
        code = e.rcvd.code
    assert code == 4002
    r = gw.client("phone", resume=(c.epoch, 0))
    assert r.pump(lambda r: "a" in r.activities)


def raw_ws(port):
    """A WebSocket client that completes the handshake and then never reads: it cannot answer pings."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    assert b" 101 " in buf.split(b"\r\n")[0]
    return s


def masked_text(payload: bytes):
    mask = b"\x01\x02\x03\x04"
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def test_client_that_stops_answering_pings_is_detected_within_the_bound(gateway):
    gw = gateway(session={"ping_interval": 1, "ping_timeout": 1})
    s = raw_ws(gw.port)
    s.sendall(masked_text(('{"type":"auth","token":"%s"}' % gw.tokens["phone"]).encode()))
    s.sendall(masked_text(b'{"type":"subscribe"}'))  # a device counts as connected from its subscribe
    deadline = time.time() + 10
    while time.time() < deadline:
        status, devices = gw.get("/v1/devices")
        phone = next(d for d in devices["devices"] if d["id"] == "phone")
        if phone["connected"]:
            break
        time.sleep(0.05)
    assert phone["connected"]
    seen = time.time()
    while time.time() < deadline:
        phone = next(d for d in gw.get("/v1/devices")[1]["devices"] if d["id"] == "phone")
        if not phone["connected"]:
            break
        time.sleep(0.1)
    assert not phone["connected"]
    assert time.time() - seen <= 1 + 1 + 3  # interval + timeout + lws's timer granularity
    s.close()


def test_sigterm_closes_sessions_with_1001_and_exits_zero_quickly(gateway):
    gw = gateway()
    c = gw.client("phone")
    c.pump(lambda c: c.frames)
    from websockets.exceptions import ConnectionClosed
    t0 = time.time()
    import signal
    gw.proc.send_signal(signal.SIGTERM)
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            c.recv_json(timeout=3)
    assert closed.value.rcvd.code == 1001
    assert gw.proc.wait(3) == 0
    assert time.time() - t0 < 2.5
