"""The real lanpushd against what a hostile device, or a hostile web page in a LAN browser, would try — every
request to loopback, bounded in count and time. Each test is one attack of the LAN-attacker review; the in-process
counterparts are in Tests/LanpushGatewayTests/LANAttackerTests.swift.
"""
import http.client
import json
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import websockets.sync.client as wsclient
from websockets.exceptions import InvalidStatus

from fake_relay import FakeRelay
from gateway import BINARY, Gateway


def rss_kib(gw):
    for line in open(f"/proc/{gw.proc.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def post(gw, path, body, headers=None, source="127.0.0.1", raw=None):
    """One POST from `source` (a loopback address: 127.0.0.x are all this host's)."""
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=10, source_address=(source, 0))
    h = {"Content-Type": "application/json", **(headers or {})}
    conn.request("POST", path, body=raw if raw is not None else json.dumps(body).encode(), headers=h)
    r = conn.getresponse()
    text = r.read()
    conn.close()
    return r.status, (json.loads(text) if r.getheader("Content-Type", "").startswith("application/json") else text)


def relay_body(token, message="m", **data):
    return {"push_token": token, "message": message, "data": data,
            "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "2026.8", "webhook_id": "hook-1"}}


def registered(gw, device, token, push_url):
    """A client of `device` registers `token` with `push_url`; returns it and the frame the gateway answered with."""
    c = gw.client(device, register=None)
    c.send({"type": "register", "push_token": token, "push_url": push_url})
    assert c.pump(lambda c: any(f["type"] in ("registered", "error") for f in c.frames))
    return c, next(f for f in c.frames if f["type"] in ("registered", "error"))


def test_unauthenticated_posts_leave_no_memory_behind(gateway):
    """2,000 posts with a unique 30 KB push_token each, then 2,000 with unknown short ones: all refused, and the
    resident set stays put (it grew by ~57 MiB, never given back, when every token got counters)."""
    gw = gateway()
    for i in range(50):  # warm up the allocator and the HTTP path
        post(gw, "/api/sendPushNotification", relay_body(f"warm-{i}:x"))
    before = rss_kib(gw)
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=10)
    for i in range(2000):
        body = json.dumps(relay_body(f"{i:06d}" + "x" * 30_000)).encode()
        conn.request("POST", "/api/sendPushNotification", body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 400 and json.loads(r.read())["rule"] == "max_length"
    for i in range(2000):
        conn.request("POST", "/api/sendPushNotification", body=json.dumps(relay_body(f"made-up-{i}:token")).encode(),
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 404 and json.loads(r.read())["rule"] == "registered"
    conn.close()
    time.sleep(0.5)
    grown = rss_kib(gw) - before
    assert grown < 6 * 1024, f"RSS grew {grown} KiB"


class Forwarder:
    """A relay on the LAN that passes every request on to the gateway at `target` with its headers, as a misconfigured
    relay (or a push_url naming the gateway by a name it cannot know) would: the loop the hop header breaks."""

    def __init__(self):
        self.count = 0
        self.target = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                outer.count += 1
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                conn = http.client.HTTPConnection("127.0.0.1", outer.target, timeout=5)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                conn.request("POST", self.path, body=body, headers=headers)
                r = conn.getresponse()
                data = r.read()
                self.send_response(r.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_a_push_url_that_loops_is_refused_and_a_loop_through_a_relay_stops(gateway):
    gw = gateway()
    for url in (f"http://127.0.0.1:{gw.port}/api/sendPushNotification", f"https://localhost:{gw.port}/api",
                "http://192.0.2.7/steal", "https://127.0.0.1:8123/api", "https://169.254.169.254/latest"):
        c, answer = registered(gw, "phone", "fcm:tok-phone", url)
        assert answer["type"] == "error" and answer["field"] == "push_url", (url, answer)
        c.close()
    assert next(d for d in gw.get("/v1/devices")[1]["devices"] if d["id"] == "phone").get("registration") is None

    # A relay the admin allowed, which forwards back into the gateway (headers and all): one round trip, then the
    # gateway refuses its own request (508) and never relays it again. It looped without end, only a device's
    # removal stopping it.
    forwarder = Forwarder()
    try:
        loop = gateway(extra=f'relay: {{allowed_push_urls: ["http://127.0.0.1:{forwarder.port}"], timeout: 2}}\n')
        forwarder.target = loop.port
        c, answer = registered(loop, "phone", "fcm:tok-loop", f"http://127.0.0.1:{forwarder.port}/api/sendPushNotification")
        assert answer["type"] == "registered"
        c.close()
        loop.wait_disconnected("phone")
        assert post(loop, "/api/sendPushNotification", relay_body("fcm:tok-loop", "Door"))[0] == 202
        time.sleep(3)
        assert forwarder.count == 1, f"{forwarder.count} requests: the loop did not stop"
        assert loop.metric("lanpush_relay_requests_total") == 1
    finally:
        forwarder.close()


def test_one_device_cannot_take_anothers_notifications(gateway):
    with FakeRelay() as relay, FakeRelay() as attacker:
        gw = gateway(extra=f'relay: {{upstream: "{relay.url}", allowed_push_urls: ["{attacker.url}"], timeout: 2}}\n')
        a, answer = registered(gw, "phone", "fcm:tok-a", relay.ios_url)
        assert answer["type"] == "registered"
        a.close()
        gw.wait_disconnected("phone")
        b, answer = registered(gw, "tablet", "fcm:tok-a", attacker.ios_url)
        assert answer == {"type": "error", "field": "push_token", "rule": "owned", "message": answer["message"]}
        assert post(gw, "/api/sendPushNotification", relay_body("fcm:tok-a", "Your code is 123456"))[0] == 202
        relay.wait_for(1)
        time.sleep(0.3)
        assert [r.body["message"] for r in relay.requests] == ["Your code is 123456"]
        assert attacker.requests == []


def test_a_visited_web_page_cannot_post_or_burn_pairing_attempts(gateway):
    gw = gateway()
    c = gw.client("phone", register="fcm:tok-phone")
    # no-cors with a "JSON-ish" text type: sent without a preflight, so the type itself is refused.
    status, body = post(gw, "/api/sendPushNotification", relay_body("fcm:tok-phone", "hi", tag="x", live_update=True),
                        headers={"Content-Type": "text/plain;x=+json"})
    assert status == 400 and body["rule"] == "content_type"
    for _ in range(15):
        status, body = post(gw, "/v1/pair", {"code": "ABCD-EFGH"}, headers={"Origin": "http://evil.example"})
        assert status == 403 and body["field"] == "origin"
    status, _ = post(gw, "/api/sendPushNotification", relay_body("fcm:tok-phone", "hi"), headers={"Origin": "null"})
    assert status == 403
    # Nothing of it counted against the address: the real code still works from this browser's address.
    made = gw.request("POST", "/v1/pairings", {"device": "kitchen"}, headers=gw.admin_headers())[1]
    assert post(gw, "/v1/pair", {"code": made["code"]})[0] == 200
    c.pump(timeout=0.3)
    assert c.notifications == []


def test_dns_rebinding_and_cross_site_websockets_are_refused(gateway):
    gw = gateway()
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=5)
    conn.request("GET", "/v1/devices", headers={"Host": "evil.example", "Authorization": f"Bearer {gw.admin}"})
    r = conn.getresponse()
    assert r.status == 403 and json.loads(r.read())["rule"] == "allowed_hosts"
    conn.close()
    with pytest.raises(InvalidStatus) as refused:
        wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream", origin="http://evil.example", open_timeout=5)
    assert refused.value.response.status_code == 403
    # Ten bad auths from that page would have locked this address out; the page cannot even connect. A client
    # without Origin (the libraries, the Scripting app) and a page on a .local name connect as before.
    ws = wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream", origin="http://homeassistant.local:8123", open_timeout=5)
    assert json.loads(ws.recv(timeout=5))["type"] == "auth_required"
    ws.close()
    c = gw.client("phone")
    assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames))


def test_the_viewer_reads_no_relay_credentials(gateway):
    gw = gateway()
    token = "fcm-token-abc:APA91bExample-0123456789"
    gw.client("phone", register=token)
    viewer = gw.get("/v1/devices", token=gw.viewer)[1]
    assert token not in json.dumps(viewer)
    phone = next(d for d in viewer["devices"] if d["id"] == "phone")
    assert phone["registration"]["push_token"] == "…456789"
    admin = next(d for d in gw.get("/v1/devices")[1]["devices"] if d["id"] == "phone")
    assert admin["registration"]["push_token"] == token


def test_wrong_pairing_codes_never_lock_the_household_out(gateway):
    gw = gateway(limits={"auth_failures": 10})
    made = gw.request("POST", "/v1/pairings", {"device": "kitchen"}, headers=gw.admin_headers())[1]
    for i in range(60):
        post(gw, "/v1/pair", {"code": f"WRONG{i:03d}"}, source=f"127.0.0.{10 + i % 6}")
    # That pairing is void (it saw more wrong codes than it survives); a new one works at once from a new address.
    assert post(gw, "/v1/pair", {"code": made["code"]}, source="127.0.0.30")[0] == 403
    again = gw.request("POST", "/v1/pairings", {"device": "kitchen"}, headers=gw.admin_headers())[1]
    status, body = post(gw, "/v1/pair", {"code": again["short_code"]}, source="127.0.0.31")
    assert status == 200 and body["device_id"] == "kitchen"


def test_unknown_push_tokens_are_not_proxied_unless_asked(gateway):
    with FakeRelay() as upstream:
        gw = gateway(extra=f'relay: {{upstream: "{upstream.url}", timeout: 2}}\n')
        conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=10)
        for i in range(2000):
            conn.request("POST", "/api/sendPushNotification", body=json.dumps(relay_body(f"stranger-{i}:t")).encode(),
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            assert r.status == 404
        conn.close()
        time.sleep(0.5)
        assert upstream.requests == []
    with FakeRelay() as upstream:
        gw = gateway(extra=f'relay: {{upstream: "{upstream.url}", proxy_unknown_tokens: true, proxy_per_minute: 20}}\n')
        statuses = [post(gw, "/api/sendPushNotification", relay_body(f"s-{i}:t"))[0] for i in range(30)]
        assert statuses.count(202) == 20 and statuses.count(429) == 10
        assert post(gw, "/api/sendPushNotification", relay_body("s-x:t"), source="127.0.0.2")[0] == 202
        upstream.wait_for(21)


def test_sockets_that_never_authenticate_cannot_keep_a_device_out(gateway):
    gw = gateway(limits={"max_sessions": 20})
    idle = []
    for _ in range(22):
        try:
            idle.append(wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream", open_timeout=5,
                                         source_address=("127.0.0.9", 0)))
        except OSError:
            pass
    c = gw.client("phone")
    assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames)), "the device was kept out"
    first = [json.loads(ws.recv(timeout=5)) for ws in idle]
    refused = [f for f in first if f["type"] == "error"]
    assert len(refused) == 22 - 8 and all(f["rule"] == "unauthenticated_per_address" for f in refused)
    assert sum(f["type"] == "auth_required" for f in first) == 8
    for ws in idle:
        ws.close()


def test_tls_offers_only_aead_suites(gateway, tmp_path):
    gw = gateway(extra="tls: {enabled: true}\n")
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers("ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES256-SHA")
    with socket.create_connection(("127.0.0.1", gw.port), timeout=5) as raw, pytest.raises(ssl.SSLError):
        ctx.wrap_socket(raw).do_handshake()
    ctx.set_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256")
    with socket.create_connection(("127.0.0.1", gw.port), timeout=5) as raw:
        with ctx.wrap_socket(raw) as tls:
            assert tls.cipher()[0] == "ECDHE-ECDSA-AES128-GCM-SHA256"


def test_pages_are_served_with_a_content_security_policy(gateway):
    gw = gateway()
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=5)
    conn.request("GET", "/preview")
    r = conn.getresponse()
    r.read()
    assert r.status == 200
    csp = r.getheader("Content-Security-Policy")
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
    assert r.getheader("X-Content-Type-Options") == "nosniff" and r.getheader("Referrer-Policy") == "no-referrer"


@pytest.mark.parametrize("text,key", [
    ('admin_token: "a"\n', "admin_token"),
    ('admin_token: "' + "x" * 40 + '"\nviewer_token: "' + "x" * 40 + '"\n', "viewer_token"),
])
def test_check_config_refuses_guessable_tokens(tmp_path, text, key):
    config = tmp_path / "lanpush.yaml"
    config.write_text(text)
    run = subprocess.run([str(BINARY), "--check-config", "--config", str(config)], capture_output=True, text=True,
                         timeout=30)
    assert run.returncode != 0 and key in (run.stdout + run.stderr)
