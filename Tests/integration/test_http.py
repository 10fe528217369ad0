"""Every limit and bad input of the HTTP API answers JSON naming the field and rule; good input still works."""
import http.client
import json
import socket

import pytest

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
    g.lan = c
    return g


def assert_json_error(status, body, want_status, field=None, rule=None):
    assert status == want_status, body
    assert isinstance(body, dict) and body.get("message"), body
    if field is not None:
        assert body["field"] == field, body
    if rule is not None:
        assert body["rule"] == rule, body


def still_works(gw):
    status, body = gw.request("POST", "/api/sendPushNotification", GOOD)
    assert status == 201, body


CASES = [
    # (method, path, body or raw bytes, headers, status, field, rule)
    ("POST", "/api/sendPushNotification", {"message": "x", "data": {}}, None, 403, "push_token", "required"),
    ("POST", "/api/sendPushNotification", {"push_token": "tok", "data": {"tag": "bad tag!", "live_update": True}}, None, 400, "data.tag", "pattern"),
    ("POST", "/api/sendPushNotification", {"push_token": "tok", "data": {"live_update": True}}, None, 400, "data.tag", "required"),
    ("POST", "/api/sendPushNotification", {"push_token": "tok", "data": {"tag": "a", "live_update": True, "progress": -1}}, None, 400, "data.progress", "non_negative"),
    ("POST", "/api/sendPushNotification", {"push_token": "tok", "data": {"tag": "a", "live_update": True, "progress_max": 0}}, None, 400, "data.progress_max", "positive"),
    ("POST", "/api/sendPushNotification", {"push_token": "tok", "data": {"tag": "a", "live_update": True, "notification_icon_color": "#12"}}, None, 400, "data.notification_icon_color", "color"),
    ("POST", "/api/sendPushNotification", {"push_token": "tok", "data": {"tag": "a", "live_update": True, "template": {"template": "progress", "progress": {"style": "segmented", "value": 0.5, "segments": [{"value": 0.5, "fill_color": "green"}, {"value": 0.2, "fill_color": "red"}, {"value": 1.5, "fill_color": "red"}]}}}}, None, 400, "data.template.progress.segments[2].value", None),
    ("POST", "/api/sendPushNotification", {"push_token": "tok", "data": []}, None, 400, "data", "type"),
    ("POST", "/api/sendPushNotification", b"{not json", {"Content-Type": "application/json"}, 400, "body", "json"),
    ("POST", "/api/sendPushNotification", b'{"push_token":"tok"}', {"Content-Type": "text/plain"}, 400, "content-type", "content_type"),
    ("POST", "/v1/push", {"message": "x"}, {}, 401, "authorization", "auth"),
    ("POST", "/v1/push", {"message": "x"}, {"Authorization": "Bearer wrong"}, 401, "authorization", "auth"),
    ("POST", "/v1/push", {"targets": ["nobody"], "message": "x"}, "admin", 404, "targets", "exists"),
    ("POST", "/v1/push", {"targets": 5, "message": "x"}, "admin", 400, "targets", "type"),
    ("GET", "/v1/devices", None, {}, 401, "authorization", "auth"),
    ("GET", "/v1/nope", None, "admin", 404, "path", "exists"),
    ("PUT", "/v1/push", None, "admin", 405, None, None),
    ("GET", "/api/sendPushNotification", None, None, 405, None, None),
    ("DELETE", "/v1/activities/none", None, "admin", 404, "tag", "exists"),
    ("DELETE", "/v1/activities?dismissal=soon", None, "admin", 400, "dismissal", "enum"),
]


@pytest.mark.parametrize("method,path,body,headers,status,field,rule", CASES)
def test_bad_input_is_a_json_4xx_naming_the_field(gw, method, path, body, headers, status, field, rule):
    if headers == "admin":
        headers = gw.admin_headers()
    if isinstance(body, bytes):
        got_status, got = gw.request(method, path, raw=body, headers=headers)
    else:
        got_status, got = gw.request(method, path, body, headers=headers)
    assert_json_error(got_status, got, status, field, rule)
    still_works(gw)


def test_viewer_token_reads_but_cannot_write(gw):
    assert gw.get("/v1/devices", token=gw.viewer)[0] == 200
    status, body = gw.request("POST", "/v1/push", {"message": "x"}, headers={"Authorization": f"Bearer {gw.viewer}"})
    assert_json_error(status, body, 401, "authorization", "auth")


def test_body_too_large_is_413_json(gw):
    big = json.dumps({"push_token": "tok", "message": "x" * 70_000}).encode()
    status, headers, body = raw_http(gw.port, b"POST /api/sendPushNotification HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: %d\r\n\r\n" % len(big) + big)
    assert status == 413
    assert headers[b"content-type"].startswith(b"application/json")
    assert json.loads(body)["message"]
    still_works(gw)


def test_post_without_content_length_is_411_json(gw):
    status, headers, body = raw_http(gw.port, b"POST /api/sendPushNotification HTTP/1.1\r\nHost: x\r\n"
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


def test_native_push_targets_and_results(gw):
    status, body = gw.request("POST", "/v1/push", {"targets": ["phone", "tablet", "ghost"], "title": "Dishwasher",
                                                   "message": "Pre-wash", "data": {"tag": "dishwasher", "live_update": True,
                                                                                   "progress": 20, "progress_max": 100}},
                              headers=gw.admin_headers())
    assert status == 202
    assert {r["target"]: r["result"] for r in body["results"]} == {"phone": "delivered", "tablet": "queued", "ghost": "unknown_target"}
    assert gw.lan.pump(lambda c: "dishwasher" in c.activities)
    status, listing = gw.get("/v1/activities?device=tablet")
    assert status == 200 and [a["tag"] for a in listing["activities"]] == ["dishwasher"]
    status, ended = gw.request("DELETE", "/v1/activities/dishwasher?dismissal=immediate", headers=gw.admin_headers())
    assert status == 200 and len(ended["ended"]) == 2
    assert gw.lan.pump(lambda c: "dishwasher" not in c.activities)


def test_unknown_push_token_is_kept_for_the_relay_with_202(gw):
    status, body = gw.request("POST", "/api/sendPush/android/v1", {**GOOD, "push_token": "unregistered"})
    assert status == 202 and body["target"] == "unregistered"
    assert body["rateLimits"]["maximum"] == 500


def test_duplicate_hass_confirm_id_is_not_applied_twice(gw):
    # On the LAN (data.lanpush.path), though the device has relay credentials: the LAN client is the witness.
    body = {"push_token": "tok", "message": "door", "data": {"group": "x", "lanpush": {"path": "lan"}},
            "hass_confirm_id": "c-1"}
    assert gw.request("POST", "/api/sendPushNotification", body)[0] == 201
    assert gw.request("POST", "/api/sendPushNotification", body)[0] == 201
    gw.lan.pump(timeout=1)
    assert [n["message"] for n in gw.lan.notifications] == ["door"]


def test_healthz_and_metrics(gw):
    status, body = gw.request("GET", "/healthz")
    assert status == 200 and body["status"] == "ok"
    assert gw.request("GET", "/metrics")[0] == 401
    status, text = gw.get("/metrics")
    assert status == 200
    for series in ["lanpush_sessions", "lanpush_events_in_total", "lanpush_frames_out_total", "lanpush_bytes_out_total",
                   "lanpush_coalesced_updates_total", "lanpush_rejects_total"]:
        assert series in text, series


def test_bad_config_stops_the_start_naming_the_key(tmp_path):
    import subprocess
    from gateway import BINARY
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("session:\n  ping_intervl: 5\n")
    r = subprocess.run([str(BINARY), "--config", str(cfg), "--state-dir", str(tmp_path / "s"), "--no-mdns"],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    assert "session.ping_intervl" in r.stderr
