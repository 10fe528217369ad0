#!/usr/bin/env python3
"""Which functions lanpushd runs, for the linker's symbol order (scripts/order-file; stdlib only, loopback only).

Starts lanpushd under `valgrind --tool=callgrind` as a home runs it (the committed Config/lanpush.yaml, every key
at its default, with one device: store on, mDNS on — without an avahi-daemon to reach it still sets discovery up and
retries), lets it start, has callgrind dump what start-up ran, then drives what a day brings: a device session on
each protocol version, plain notifications, live updates started and updated, a `clear_notification` that ends one,
a publisher's stream of items, the read endpoints, the preview page, a store that goes quiet (its caches handed
back), and a phone away from home: its updates handed to HA's relay (a local stand-in that answers as the relay does)
through the outgoing HTTP client. A dump after each phase holds what it ran. It
does so `--runs` times, each in a fresh process: which functions run varies a little from one start to the next
(Swift seeds its hashing at random per process).

Prints the mangled names of the functions of the lanpushd image that ran in any run, one per line, in three groups,
each most instructions first: what start-up ran, then what the day at home ran besides, then what only the phone away
needed. Each group sits on pages of its own, so a gateway that has only started touches the first, one that serves
the LAN the first two, and the relay path adds the third. lld lays their sections out in that order
(`--symbol-ordering-file`), so the code a running gateway touches sits on few pages instead of being spread over
the whole image, where every touched page brings its neighbours into memory with it (the kernel maps the pages
around each fault on a file mapping: 16, or the whole large folio of the page cache they sit in).
"""
import argparse
import glob
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_driver import HTTP, WS, free_port, start_under_callgrind, stop  # noqa: E402

ADMIN = "order-admin-token-0123456789abcdef"
DEVICE = "order-device-token-0123456789abcdef"


def functions(path, image):
    """Self instructions per function of `image` in one callgrind dump (`--compress-strings=no`)."""
    cost = {}
    obj = fn = None
    skip_next = False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                obj = line[3:].strip()
            elif line.startswith("fn="):
                fn = line[3:].strip().split("'")[0] if obj and obj.endswith(image) else None
                if fn is not None and fn.startswith("0x"):
                    fn = None  # no symbol: the linker cannot place it by name (scripts/lanpushd.ld gathers these)
                if fn is not None:
                    cost.setdefault(fn, 0)
            elif line.startswith("calls="):
                skip_next = True  # the next cost line is the call's inclusive cost, not the caller's own
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip_next:
                    skip_next = False
                elif fn is not None:
                    parts = line.split()
                    if len(parts) >= 2 and parts[1].isdigit():
                        cost[fn] += int(parts[1])
    return cost


def wait_dump(outdir, before, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        new = set(glob.glob(os.path.join(outdir, "callgrind.out.*"))) - before
        if new:
            time.sleep(1)  # callgrind writes the file in one go, but give it a moment to close it
            return new.pop()
        time.sleep(0.2)
    raise RuntimeError("callgrind did not dump")


def ack(ws, frame):
    """Acknowledges an event frame: an object with a `seq` (v1, and v2's other frames) or v2's array form."""
    seq = frame.get("seq") if isinstance(frame, dict) else frame[1]
    if seq is not None:
        ws.send({"type": "ack", "seq": seq})


class Relay(http.server.BaseHTTPRequestHandler):
    """HA's push relay as lanpushd sees it: every POST answered 201 with the relay's rate limits."""
    received = threading.Event()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = json.dumps({"messageId": "m", "target": "t", "rateLimits": {
            "attempts": 1, "successful": 1, "errors": 0, "total": 1, "maximum": 500, "remaining": 499,
            "resetsAt": "2030-01-01T00:00:00.000Z"}}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        Relay.received.set()

    def log_message(self, *args):
        pass


def away(port, relay_port, http):
    """The phone registers its relay credentials, leaves, and a live update for it goes to the relay."""
    ws = WS(port, DEVICE, protocol="lanpush.v2")
    ws.send({"type": "register", "push_token": "order-push-token",
             "push_url": f"http://127.0.0.1:{relay_port}/api/sendPushNotification",
             "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "2025.1", "os_version": "18.2",
                                   "webhook_id": "order-hook"}})
    for _ in range(20):
        frame = ws.read()
        if isinstance(frame, dict) and frame.get("type") == "registered":
            break
    ws.close()
    time.sleep(1)
    body = {"push_token": "order-push-token", "message": "12 min left", "title": "Washer",
            "registration_info": {"app_id": "io.robbie.HomeAssistant", "webhook_id": "order-hook"},
            "data": {"tag": "washer-away", "live_update": True, "progress": 48, "progress_max": 60}}
    status, _ = http.request("POST", "/api/sendPushNotification", json.dumps(body).encode(), ["Content-Type: application/json"])
    assert status in (200, 201, 202), status
    if not Relay.received.wait(30):
        raise RuntimeError("lanpushd never reached the relay stand-in")


def workload(port):
    auth = [f"Authorization: Bearer {ADMIN}", "Content-Type: application/json"]
    http = HTTP(port)

    def post(body):
        status, _ = http.request("POST", "/v1/push", json.dumps(body).encode(), auth)
        assert status in (200, 202), (status, body)

    for version in ("lanpush.v1", "lanpush.v2"):
        ws = WS(port, DEVICE, protocol=version)
        for i in range(60):
            if i % 10 == 9:
                post({"targets": ["phone"], "title": "Door", "message": f"opened {i}", "data": {"tag": "door"}})
            else:
                post({"targets": ["phone"], "title": "Washer", "message": f"{i} min left",
                      "data": {"tag": f"washer-{i % 3}", "live_update": True, "progress": i, "progress_max": 60,
                               "notification_icon": "mdi:washing-machine"}})
            ack(ws, ws.read())
        post({"targets": ["phone"], "message": "clear_notification", "data": {"tag": "washer-0"}})
        ack(ws, ws.read())
        ws.close()
    stream(port)
    for path in ("/healthz", "/v1/devices", "/v1/activities", "/metrics", "/"):
        http.request("GET", path, b"", auth)


def stream(port):
    """A publisher stream (Node-RED, a script, `lanpush send`): items pipelined faster than one a loop turn, one
    rejected and a ping among them, while the device's session takes the merged frames and acks them."""
    ws = WS(port, DEVICE, protocol="lanpush.v2")
    publisher = WS(port, ADMIN, protocol="lanpush.publisher, lanpush.v1", publisher=True)
    items = 0
    for i in range(300):
        publisher.send({"type": "push", "id": i, "targets": ["phone"], "title": "EV", "message": f"{i} %",
                        "data": {"tag": f"ev-{i % 10}", "live_update": True, "progress": i, "progress_max": 300}})
        items += 1
        if i % 100 == 50:
            publisher.send({"type": "push", "targets": ["phone"], "data": {"progress": "half"}})
            publisher.send({"type": "ping"})
            items += 1
    through = 0
    while through < items:
        frame = publisher.read()
        if frame.get("type") == "accepted":
            through = frame["through"]
    publisher.close()
    ws.sock.settimeout(1)
    try:
        while True:
            ack(ws, ws.read())
    except (TimeoutError, OSError):
        pass
    ws.close()


def home_config(port):
    """Config/lanpush.yaml with lanpushd on loopback, an admin token and one device."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    text = open(os.path.join(root, "Config", "lanpush.yaml")).read()
    replaced = {"listen:": f'listen: "127.0.0.1:{port}"', "admin_token:": f"admin_token: {ADMIN}",
                "devices:": f"devices:\n  - {{id: phone, name: Phone, token: {DEVICE}}}"}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        for key, value in replaced.items():
            if line.startswith(key):
                lines[i] = value
    out = "\n".join(lines) + "\n"
    for value in replaced.values():
        if value not in out:
            raise RuntimeError(f"Config/lanpush.yaml has no top-level line for {value.split(':')[0]}")
    return out


def run_once(lanpushd):
    """(start-up, workload, away): self instructions per function of one lanpushd process."""
    image = os.path.basename(lanpushd)
    work = tempfile.mkdtemp(prefix="lanpush-order-")
    port = free_port()
    config = os.path.join(work, "lanpush.yaml")
    with open(config, "w") as f:
        f.write(home_config(port))
    relay = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    Relay.received.clear()
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    try:
        proc = start_under_callgrind(
            lanpushd, config, work, port, options=["--compress-strings=no", "--compress-pos=no", "--demangle=no"])
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    try:
        time.sleep(12)  # the first housekeeping ticks and mDNS retries belong to start-up
        before = set(glob.glob(os.path.join(work, "callgrind.out.*")))
        subprocess.run(["callgrind_control", "-d", "startup", str(proc.pid)], check=True, capture_output=True)
        startup = functions(wait_dump(work, before), image)
        workload(port)
        time.sleep(8)  # a quiet store: the writer's thread hands SQLite's page caches back, as after every burst
        before = set(glob.glob(os.path.join(work, "callgrind.out.*")))
        subprocess.run(["callgrind_control", "-d", "workload", str(proc.pid)], check=True, capture_output=True)
        running = functions(wait_dump(work, before), image)
        away(port, relay.server_address[1], HTTP(port))
        before = set(glob.glob(os.path.join(work, "callgrind.out.*")))
        subprocess.run(["callgrind_control", "-d", "away", str(proc.pid)], check=True, capture_output=True)
        relayed = functions(wait_dump(work, before), image)
    finally:
        stop(proc)
        relay.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    if sum(1 for c in running.values() if c > 0) < 500:
        raise RuntimeError(f"few functions of {image} ran during the workload: is it the binary that ran?")
    return startup, running, relayed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lanpushd", required=True, help="a lanpushd without debug info (valgrind cannot read Swift's DWARF 5)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    phases = ({}, {}, {})
    for _ in range(args.runs):
        for total, part in zip(phases, run_once(args.lanpushd)):
            for name, cost in part.items():
                total[name] = total.get(name, 0) + cost
    order, seen = [], set()
    for phase in phases:
        group = sorted((n for n, c in phase.items() if c > 0 and n not in seen), key=lambda n: (-phase[n], n))
        order += group
        seen |= set(group)
    sys.stdout.write("".join(n + "\n" for n in order))


if __name__ == "__main__":
    sys.exit(main())
