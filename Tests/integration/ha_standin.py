"""A recording stand-in for Home Assistant, for what the real one on this machine (2025.4.4) cannot show: how lanpushd
talks to an HA that claims another release (2026.7, with the Live Activity webhooks), and exactly which webhook calls
it makes and when.

It is not Home Assistant. It speaks just enough of HA's APIs for lanpushd's HA-native link, on 127.0.0.1, from
threads, and records every call:

- websocket ``/api/websocket`` (a minimal RFC 6455 server, text frames, ping/pong, close): ``auth_required`` →
  ``auth_ok`` with ``ha_version``; ``get_config`` (RUNNING); ``config/device_registry/list`` and ``config_entries/get``
  from its own registrations; ``mobile_app/push_notification_channel`` (subscribed); ``push_notification_confirm``
  and ``unsubscribe_events`` (success);
- ``POST /api/mobile_app/registrations`` → 201 with a new ``webhook_id``; ``DELETE
  /api/config/config_entries/entry/<id>``; ``GET /api/config``;
- ``POST /api/webhook/<webhook_id>``, answered as HA 2025.4.4's mobile_app answers: ``update_registration`` echoes
  the merged registration, ``register_sensor`` 201 ``{"success": true}``, ``update_sensor_states`` per sensor
  ``{"success": true}`` or ``not_registered``; every other type 200 ``{}`` (as HA answers the Live Activity webhooks,
  and any type it does not know).
"""
from __future__ import annotations

import base64
import hashlib
import json
import secrets
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@dataclass
class Call:
    """One recorded request: a webhook call (``type``, ``data``) or a REST call (``type`` is the path)."""
    webhook_id: str | None
    type: str
    data: object
    at: float = field(default_factory=time.time)


class HAStandIn:
    def __init__(self, version="2026.7.0"):
        self.version = version
        self.calls: list[Call] = []
        self.registrations: dict[str, dict] = {}  # webhook_id -> {"body", "entry_id"}
        self.sensors: set[tuple[str, str]] = set()  # (webhook_id, unique_id)
        self.failing_updates = 0  # the next N update_sensor_states are answered 500 (as an HA that is restarting)
        self.lock = threading.Condition()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path == "/api/websocket" and self.headers.get("Upgrade", "").lower() == "websocket":
                    return WebSocketSession(self, stand_in).run()
                if self.path == "/api/config":
                    return self.answer(200, {"version": stand_in.version, "state": "RUNNING"})
                self.answer(404, {"message": "not found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                if self.path == "/api/mobile_app/registrations":
                    return self.answer(201, stand_in.register(body))
                if self.path.startswith("/api/webhook/"):
                    return self.answer(*stand_in.webhook(self.path.rsplit("/", 1)[1], body))
                self.answer(404, {"message": "not found"})

            def do_DELETE(self):
                prefix = "/api/config/config_entries/entry/"
                if self.path.startswith(prefix):
                    return self.answer(*stand_in.remove_entry(self.path[len(prefix):]))
                self.answer(404, {"message": "not found"})

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    # What HA would do

    def record(self, webhook_id, type_, data):
        with self.lock:
            self.calls.append(Call(webhook_id, type_, data))
            self.lock.notify_all()

    def register(self, body):
        webhook_id = secrets.token_hex(32)
        with self.lock:
            self.registrations[webhook_id] = {"body": body, "entry_id": secrets.token_hex(16)}
        self.record(None, "registration", body)
        return {"webhook_id": webhook_id, "cloudhook_url": None, "remote_ui_url": None, "secret": None}

    def webhook(self, webhook_id, body):
        type_, data = body.get("type"), body.get("data")
        self.record(webhook_id, type_, data)
        with self.lock:
            registration = self.registrations.get(webhook_id)
            if registration is None:
                return 200, {}  # HA's answer to an unknown webhook_id
            if type_ == "update_registration":
                registration["body"] = {**registration["body"], **data}
                return 200, registration["body"]
            if type_ == "register_sensor":
                self.sensors.add((webhook_id, data["unique_id"]))
                return 201, {"success": True}
            if type_ == "update_sensor_states":
                if self.failing_updates > 0:
                    self.failing_updates -= 1
                    return 500, {"message": "Internal Server Error"}
                return 200, {s["unique_id"]: {"success": True} if (webhook_id, s["unique_id"]) in self.sensors else
                             {"success": False, "error": {"code": "not_registered", "message": "not registered"}}
                             for s in data}
        return 200, {}

    def remove_entry(self, entry_id):
        with self.lock:
            for webhook_id, registration in list(self.registrations.items()):
                if registration["entry_id"] == entry_id:
                    del self.registrations[webhook_id]
                    self.record(webhook_id, "remove_entry", entry_id)
                    return 200, {"require_restart": False}
        return 404, {"message": "Config entry not found"}

    def forget_sensors(self):
        """As if the user deleted every entity in HA: updates are answered ``not_registered``."""
        with self.lock:
            self.sensors.clear()

    # For the tests

    def webhooks(self, type_=None, webhook_id=None):
        with self.lock:
            return [c for c in self.calls if (type_ is None or c.type == type_) and c.webhook_id is not None
                    and (webhook_id is None or c.webhook_id == webhook_id)]

    def wait_for(self, predicate, timeout=5.0, what="a call"):
        deadline = time.time() + timeout
        with self.lock:
            while True:
                value = predicate()
                if value:
                    return value
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}; calls: {[(c.type, c.data) for c in self.calls]}")
                self.lock.wait(min(left, 0.1))

    def registry(self):
        with self.lock:
            devices = [{"id": r["entry_id"][:8], "name": r["body"]["device_name"], "config_entries": [r["entry_id"]],
                        "identifiers": [["mobile_app", r["body"].get("device_id")]]} for r in self.registrations.values()]
            entries = [{"entry_id": r["entry_id"], "domain": "mobile_app", "state": "loaded",
                        "title": r["body"]["device_name"]} for r in self.registrations.values()]
        return devices, entries


class WebSocketSession:
    """HA's websocket API as far as lanpushd's link uses it, on the request handler's socket."""

    def __init__(self, handler: BaseHTTPRequestHandler, stand_in: HAStandIn):
        self.handler, self.stand_in = handler, stand_in
        self.rfile, self.wfile = handler.rfile, handler.wfile
        self.write_lock = threading.Lock()

    def run(self):
        accept = base64.b64encode(hashlib.sha1((self.handler.headers["Sec-WebSocket-Key"] + WS_GUID).encode()).digest())
        self.wfile.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        self.send({"type": "auth_required", "ha_version": self.stand_in.version})
        try:
            while (message := self.receive()) is not None:
                self.handle(json.loads(message))
        except (ConnectionError, OSError, ValueError):
            pass
        self.handler.close_connection = True

    def handle(self, msg):
        type_, ident = msg.get("type"), msg.get("id")
        if type_ == "auth":
            return self.send({"type": "auth_ok", "ha_version": self.stand_in.version})
        self.stand_in.record(None, f"ws:{type_}", msg)
        result = None
        if type_ == "get_config":
            result = {"state": "RUNNING", "version": self.stand_in.version}
        elif type_ == "config/device_registry/list":
            result = self.stand_in.registry()[0]
        elif type_ == "config_entries/get":
            result = self.stand_in.registry()[1]
        self.send({"id": ident, "type": "result", "success": True, "result": result})

    def send(self, obj):
        data = json.dumps(obj).encode()
        header = bytes([0x81])
        if len(data) < 126:
            header += bytes([len(data)])
        elif len(data) < 1 << 16:
            header += bytes([126]) + struct.pack("!H", len(data))
        else:
            header += bytes([127]) + struct.pack("!Q", len(data))
        with self.write_lock:
            self.wfile.write(header + data)

    def receive(self):
        """The next text message (fragments joined); `None` once the client closes."""
        parts = []
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return None
            fin, opcode, length = head[0] & 0x80, head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = struct.unpack("!H", self.rfile.read(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode == 0x8:  # close: answer it and stop
                with self.write_lock:
                    self.wfile.write(bytes([0x88, len(payload[:2])]) + payload[:2])
                return None
            if opcode == 0x9:  # ping → pong
                with self.write_lock:
                    self.wfile.write(bytes([0x8A, len(payload)]) + payload)
                continue
            if opcode in (0x1, 0x0):
                parts.append(payload)
                if fin:
                    return b"".join(parts).decode()
