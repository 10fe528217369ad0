"""Start the real lanpushd on loopback and talk to it as HA, curl and LAN clients would."""
import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import websockets.sync.client as wsclient
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parents[2]
# LANPUSHD: another build of the daemon (e.g. an older one, to show a regression test fails on it).
BINARY = Path(os.environ["LANPUSHD"]) if os.environ.get("LANPUSHD") else ROOT / ".build" / "debug" / "lanpushd"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_traced(proc, timeout=15):
    """Stops a lanpushd started under `strace` (`proc` is strace): SIGTERM to lanpushd itself, strace's child, so it
    shuts down normally while traced. Signalling strace alone would detach it and leave lanpushd running."""
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    kids = children.read_text().split() if children.exists() else []
    for kid in kids:
        os.kill(int(kid), signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        for kid in kids:
            try:
                os.kill(int(kid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.kill()
        proc.wait()


class Gateway:
    """One lanpushd process with its own config and state folder."""

    def __init__(self, devices=("phone", "tablet"), session=None, limits=None, extra="", store=None, notifications=None,
                 env=None):
        """`notifications`: a device's plain-notification routing (`devices[].notifications`), e.g. {"phone": "lan"}.
        `env`: variables set for lanpushd on top of the tests' environment (a value of None unsets one), e.g. the CA
        bundle its outgoing TLS trusts."""
        self.dir = Path(tempfile.mkdtemp(prefix="lanpush-test-"))
        self.port = free_port()
        self.admin = secrets.token_urlsafe(24)
        self.viewer = secrets.token_urlsafe(24)
        self.tokens = {d: secrets.token_urlsafe(24) for d in devices}
        lines = [f'listen: "127.0.0.1:{self.port}"', f"admin_token: {self.admin}", f"viewer_token: {self.viewer}",
                 "log_level: debug", "mdns: {enabled: false}", "devices:"]
        for d, t in self.tokens.items():
            routing = f", notifications: {notifications[d]}" if notifications and d in notifications else ""
            lines.append(f"  - {{id: {d}, name: {d.title()}, token: {t}{routing}}}")
        if session:
            lines.append("session: " + json.dumps(session))
        if limits:
            lines.append("limits: " + json.dumps(limits))
        if store:
            lines.append("store: " + json.dumps(store))
        self.state = self.dir / "state"
        self.config = self.dir / "lanpush.yaml"
        self.config.write_text("\n".join(lines) + "\n" + extra)
        self.log = open(self.dir / "lanpushd.log", "wb")
        self.env = env
        self.proc = None

    def start(self, *args):
        env = {k: v for k, v in {**os.environ, **self.env}.items() if v is not None} if self.env else None
        self.proc = subprocess.Popen([str(BINARY), "--config", str(self.config), "--state-dir", str(self.state), *args],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("lanpushd exited: " + self.logtext())
            try:
                if self.get("/healthz")[0] == 200:
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("lanpushd did not start: " + self.logtext())

    def logtext(self):
        self.log.flush()
        return (self.dir / "lanpushd.log").read_text(errors="replace")[-4000:]

    def stop(self, sig=signal.SIGTERM, timeout=5):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    # HTTP
    def request(self, method, path, body=None, headers=None, raw=None, conn=None):
        c = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        h = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        text = r.read()
        if conn is None:
            c.close()
        ctype = r.getheader("Content-Type", "")
        payload = json.loads(text) if ctype.startswith("application/json") else text.decode()
        return r.status, payload

    def get(self, path, token=None):
        return self.request("GET", path, headers={"Authorization": f"Bearer {token or self.admin}"})

    def admin_headers(self):
        return {"Authorization": f"Bearer {self.admin}"}

    def metric(self, name):
        """A series of `/metrics`, summed over its labels (0 when it has no sample yet)."""
        status, text = self.get("/metrics")
        assert status == 200
        return sum(float(line.split()[-1]) for line in text.splitlines()
                   if line.startswith(name + " ") or line.startswith(name + "{"))

    def relay(self, push_token, title=None, message=None, data=None, **extra):
        body = {"push_token": push_token, "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "2024.1",
                                                               "os_version": "17.2", "webhook_id": "hook-1"}}
        if title is not None:
            body["title"] = title
        if message is not None:
            body["message"] = message
        body["data"] = data or {}
        body.update(extra)
        return self.request("POST", "/api/sendPushNotification", body)

    def client(self, device, **kw):
        return LanClient(self, device, **kw)

    def wait_disconnected(self, device="phone", timeout=8.0):
        """Waits until GET /v1/devices shows `device` without a live session (it is gone); returns its entry."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            d = next(d for d in self.get("/v1/devices")[1]["devices"] if d["id"] == device)
            if not d["connected"]:
                return d
            time.sleep(0.05)
        raise AssertionError(f"device {device} still connected after {timeout} s")


def apply_patch(target, patch):
    """RFC 7386, written independently of the gateway's implementation."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = apply_patch(result.get(k), v)
    return result


class LanClient:
    """A lanpush.v1 device client (Python websockets): keeps the activities it was sent, acks as told."""

    def __init__(self, gw, device, resume=None, register=None, auto_ack=True):
        self.ws = wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream", subprotocols=["lanpush.v1"], open_timeout=10, max_queue=None,
                                   max_size=None)
        self.activities = {}
        self.dismissed = {}  # tag -> the last state of an activity removed by an end that dismissed it at once
        self.frames = []
        self.notifications = []
        self.seq = 0
        self.epoch = None
        self.auto_ack = auto_ack
        self.close_code = None
        hello = self.recv_json()
        assert hello["type"] == "auth_required"
        self.send({"type": "auth", "token": gw.tokens[device]})
        ok = self.recv_json()
        assert ok["type"] == "auth_ok", ok
        self.device = ok["device_id"]
        self.epoch = ok["epoch"]
        if register:
            # An https:// name no resolver knows: a push_url the gateway takes, where nothing ever answers.
            self.send({"type": "register", "push_token": register, "push_url": "https://relay.invalid/relay"})
            assert self.recv_json()["type"] == "registered"
        sub = {"type": "subscribe"}
        if resume:
            sub.update(epoch=resume[0], seq=resume[1])
        self.send(sub)

    def send(self, obj):
        self.ws.send(json.dumps(obj))

    def recv_json(self, timeout=10):
        return json.loads(self.ws.recv(timeout=timeout))

    def apply(self, f):
        t = f["type"]
        if t == "snapshot":
            self.epoch = f["epoch"]
            self.activities = {a["tag"]: {"state": a["state"], "phase": a["phase"], "title": a["attributes"]["title"]}
                               for a in f["activities"]}
        elif t == "start":
            self.activities[f["tag"]] = {"state": f["state"], "phase": f.get("phase", "active"),
                                         "title": f["attributes"]["title"]}
        elif t == "update":
            a = self.activities[f["tag"]]
            a["state"] = apply_patch(a["state"], f["patch"])
            a["phase"] = f.get("phase", "active")
        elif t == "end":
            a = self.activities[f["tag"]]
            a["state"] = apply_patch(a["state"], f["patch"])
            a["phase"] = "ended"
            if f.get("phase") == "dismissed":  # ended and dismissed at once (clear_notification)
                self.activities.pop(f["tag"], None)
                self.dismissed[f["tag"]] = a
        elif t == "lifecycle":
            if f["phase"] == "dismissed":
                self.activities.pop(f["tag"], None)
            elif f["tag"] in self.activities:
                self.activities[f["tag"]]["phase"] = f["phase"]
        elif t in ("notification", "clear"):
            self.notifications.append(f)
        if "seq" in f and t != "synced":
            self.seq = max(self.seq, f["seq"])

    def pump(self, until=None, timeout=5.0):
        """Read frames (acking each) until `until(self)` is true or `timeout` passes quietly."""
        deadline = time.time() + timeout
        while True:
            if until and until(self):
                return True
            remaining = deadline - time.time()
            if remaining <= 0:
                return until is None
            try:
                f = self.recv_json(timeout=min(remaining, 0.2))
            except TimeoutError:
                continue
            except ConnectionClosed as closed:
                self.close_code = closed.rcvd.code if closed.rcvd else None
                return bool(until and until(self))
            self.frames.append(f)
            self.apply(f)
            if self.auto_ack and "seq" in f and f["type"] not in ("synced", "replay"):
                try:
                    self.send({"type": "ack", "seq": f["seq"]})
                except ConnectionClosed:
                    pass

    def state(self, tag):
        return self.activities[tag]["state"]

    def close(self):
        self.ws.close()
