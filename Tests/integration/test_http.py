"""What only the real HTTP server decides — a body over the limit, no Content-Length, garbage on the socket — answers
JSON and leaves the daemon working; the metrics text and a bad config stop, from the real process. (The router's
own answers: Tests/LanpushGatewayTests.)"""
import json
import shutil
import socket
import subprocess
import time

import pytest

from gateway import BINARY, Gateway, stop_traced

GOOD = {"push_token": "tok", "message": "hi", "data": {"tag": "t1", "live_update": True}}


def raw_http(port, request: bytes):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    s.close()
    status = int(head.split(b" ")[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(b":") for l in head.split(b"\r\n")[1:])}
    return status, headers, body


@pytest.fixture
def gw(gateway):
    g = gateway()
    c = g.client("phone", register="tok")
    c.pump(lambda c: c.frames)
    return g


def still_works(gw):
    status, body = gw.request("POST", "/api/sendPushNotification", GOOD)
    assert status == 201, body


def test_body_too_large_is_413_json(gw):
    big = json.dumps({"push_token": "tok", "message": "x" * 70_000}).encode()
    status, headers, body = raw_http(gw.port, b"POST /api/sendPushNotification HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: %d\r\n\r\n" % len(big) + big)
    assert status == 413
    assert headers[b"content-type"].startswith(b"application/json")
    assert json.loads(body)["message"]
    still_works(gw)


def test_post_without_content_length_is_411_json(gw):
    status, headers, body = raw_http(gw.port, b"POST /api/sendPushNotification HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                                     b"5\r\nhello\r\n0\r\n\r\n")
    assert status == 411
    assert headers[b"content-type"].startswith(b"application/json")
    assert json.loads(body)["message"]
    still_works(gw)


def test_garbage_never_crashes_the_daemon(gw):
    for junk in [b"\x00\xff\x10garbage\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"POST /v1/push HTTP/1.1\r\nContent-Length: -5\r\n\r\n"]:
        try:
            s = socket.create_connection(("127.0.0.1", gw.port), timeout=2)
            s.sendall(junk)
            s.recv(4096)
            s.close()
        except OSError:
            pass
    assert gw.proc.poll() is None
    still_works(gw)


def test_healthz_and_metrics(gw):
    status, body = gw.request("GET", "/healthz")
    assert status == 200 and body["status"] == "ok"
    assert gw.request("GET", "/metrics")[0] == 401
    status, text = gw.get("/metrics")
    assert status == 200
    for series in ["lanpush_sessions", "lanpush_events_in_total", "lanpush_frames_out_total", "lanpush_bytes_out_total",
                   "lanpush_coalesced_updates_total", "lanpush_rejects_total"]:
        assert series in text, series

    # The loop counts changes and frames in plain integers and hands them to the counters at each turn's end: what
    # a client was sent is in the text read right after.
    series = ["lanpush_events_in_total", "lanpush_frames_out_total", "lanpush_bytes_out_total"]
    before = {name: gw.metric(name) for name in series}
    client = gw.client("tablet")  # the fixture's client holds a session of the phone
    client.pump(until=lambda c: any(f["type"] == "synced" for f in c.frames))
    for i in range(1, 4):
        body = {"message": f"m{i}", "targets": ["tablet"], "data": {"tag": "metered", "live_update": True, "progress": i}}
        assert gw.request("POST", "/v1/push", body, headers=gw.admin_headers())[0] == 202
        assert client.pump(until=lambda c: c.activities.get("metered", {}).get("state", {}).get("progress") == i)
    assert [f["type"] for f in client.frames if f["type"] in ("start", "update")] == ["start", "update", "update"]
    grew = {name: gw.metric(name) - before[name] for name in series}
    assert grew["lanpush_events_in_total"] == 3
    # Every frame after the subscribe came from the session's coalescer (the snapshot and `synced` too).
    assert grew["lanpush_frames_out_total"] == len(client.frames)
    sent = sum(len(json.dumps(f, separators=(",", ":")).encode()) for f in client.frames)
    assert grew["lanpush_bytes_out_total"] >= sent * 0.8
    client.close()


def test_bad_config_stops_the_start_naming_the_key(tmp_path):
    import subprocess
    from gateway import BINARY
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("session:\n  ping_intervl: 5\n")
    r = subprocess.run([str(BINARY), "--config", str(cfg), "--state-dir", str(tmp_path / "s"), "--no-mdns"],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    assert "session.ping_intervl" in r.stderr


def test_a_keep_alive_request_costs_at_most_one_epoll_call():
    """On libev, lws's interest changes for a keep-alive request (POLLIN re-armed, POLLOUT on after the answer and
    off again) cost at most one `epoll_ctl` per request — libev re-adding the watcher lws re-set, which the kernel
    refuses as already registered — where on libuv every change took the socket out of epoll and put it back, 7-8
    calls a request (`strace` counts them here for requests in one segment and with the body sent apart)."""
    if shutil.which("strace") is None:
        pytest.fail("strace is missing: run scripts/setup --test")
    gw = Gateway()
    trace = gw.dir / "epoll.trace"
    gw.proc = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=epoll_ctl", "-o", str(trace), str(BINARY),
                                "--config", str(gw.config), "--state-dir", str(gw.state)],
                               stdout=gw.log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 30
        while True:
            try:
                if gw.get("/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.time() < deadline and gw.proc.poll() is None, gw.logtext()
            time.sleep(0.05)
        s = socket.create_connection(("127.0.0.1", gw.port), timeout=5)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def post(n, apart):
            body = json.dumps({"targets": ["phone"], "message": f"m{n}"}).encode()
            head = (f"POST /v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {gw.admin}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
            if apart:
                s.sendall(head)
                time.sleep(0.002)
                s.sendall(body)
            else:
                s.sendall(head + body)
            data = b""
            while b"\r\n\r\n" not in data:
                data += s.recv(65536)
            head_in, _, rest = data.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head_in.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            while len(rest) < length:
                rest += s.recv(65536)
            assert head_in.startswith(b"HTTP/1.1 202"), head_in

        def calls():
            time.sleep(0.3)  # strace writes each line as it goes; let the last turn end
            return len(trace.read_text().splitlines())

        for n in range(20):
            post(n, apart=False)
        for apart in (False, True):
            before = calls()
            for n in range(200):
                post(n, apart)
            made = calls() - before
            assert made <= 220, f"{made} epoll_ctl calls for 200 keep-alive requests (apart={apart})"
        s.close()
    finally:
        stop_traced(gw.proc)
