#!/usr/bin/env python3
"""lanpush-bench's `notify` scenario with Python clients: N device sessions, plain notifications at a fixed rate,
each to one device (round robin); the server's CPU per notification, ingest→delivery latency, RSS after the run.

A user's client is rarely native, so this runs the clients people write: lanpush sessions with `websockets`
(asyncio, one task per session, every event acknowledged as docs/PROTOCOL.md asks) and the publisher with
`http.client` (one keep-alive connection, `POST /v1/push`); mosquitto's subscribers and publisher with paho-mqtt
(MQTT over WebSocket for the subscribers, plain MQTT for the publisher, QoS 1 like lanpush-bench's `notify`: each
message acknowledged). The publisher runs in its own process, so the sessions' process does not slow it down.

    .venv-test/bin/python Benchmarks/pyclients.py                 # 100 sessions, 1,000/s, 10 s, 3 runs per server
    .venv-test/bin/python Benchmarks/pyclients.py --smoke         # seconds: does it run
    .venv-test/bin/python Benchmarks/pyclients.py --servers lanpush-mem --runs 5

Results: a Markdown table on stdout (medians, ratios to mosquitto) and test-artifacts/bench/py-<UTC time>.json.
"""
from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVERS = ("lanpush", "lanpush-mem", "mosquitto")
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


class Server:
    """lanpushd (store on or off) or mosquitto, started on fresh loopback ports in a temporary folder."""

    def __init__(self, kind: str, sessions: int, lanpushd: str, mosquitto: str):
        self.kind = kind
        self.dir = Path(tempfile.mkdtemp(prefix=f"pyclients-{kind}-"))
        self.tokens = [secrets.token_hex(16) for _ in range(sessions)]
        self.admin = secrets.token_hex(16)
        self.log = open(self.dir / "server.log", "wb")
        if kind == "mosquitto":
            self.port, self.mqtt_port = free_port(), free_port()
            conf = self.dir / "mosquitto.conf"
            conf.write_text(
                "user root\nper_listener_settings false\nallow_anonymous true\npersistence false\n"
                "set_tcp_nodelay true\nmax_connections -1\nlog_dest stderr\nlog_type error\n"
                f"listener {self.mqtt_port} 127.0.0.1\nprotocol mqtt\n"
                f"listener {self.port} 127.0.0.1\nprotocol websockets\n")
            argv = [mosquitto, "-c", str(conf)]
        else:
            self.port = free_port()
            devices = "".join(f"  - {{id: d{i}, name: d{i}, token: {t}}}\n" for i, t in enumerate(self.tokens))
            (self.dir / "lanpush.yaml").write_text(
                f'listen: "127.0.0.1:{self.port}"\nadmin_token: "{self.admin}"\nlog_level: warning\n'
                "mdns: {enabled: false}\nsession: {window: 32, ack_timeout: 60}\n"
                f"store: {{enabled: {'true' if kind == 'lanpush' else 'false'}, synchronous: normal}}\n"
                f"devices:\n{devices}")
            argv = [lanpushd, "--config", str(self.dir / "lanpush.yaml"), "--state-dir", str(self.dir / "state")]
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                self.log.close()
                raise RuntimeError(f"{kind} exited at start: {(self.dir / 'server.log').read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{kind} did not start listening")
                time.sleep(0.05)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Deliveries:
    """Latencies of the deliveries whose stamp is inside the measured window, from any thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.window = (0, 0)
        self.latencies: list[float] = []
        self.total = 0

    def add(self, stamp: int) -> None:
        now = time.monotonic_ns()
        with self.lock:
            self.total += 1
            if self.window[0] <= stamp < self.window[1]:
                self.latencies.append((now - stamp) / 1e6)


def stamp_of(text: str) -> int | None:
    return int(text[1:]) if text.startswith("@") and text[1:].isdigit() else None


# ---- lanpush: websockets sessions ----

async def lanpush_session(port: int, token: str, got: Deliveries, ready: asyncio.Event, count: list[int]) -> None:
    from websockets.asyncio.client import connect

    async with connect(f"ws://127.0.0.1:{port}/v1/stream", subprotocols=["lanpush.v1"], max_queue=None) as ws:
        await ws.recv()  # auth_required
        await ws.send(json.dumps({"type": "auth", "token": token}))
        await ws.recv()  # auth_ok
        await ws.send(json.dumps({"type": "subscribe"}))
        async for raw in ws:
            frame = json.loads(raw)
            if frame.get("type") == "synced":
                count[0] += 1
                if count[0] == count[1]:
                    ready.set()
                continue
            if frame.get("type") == "notification" and (stamp := stamp_of(frame.get("message", ""))) is not None:
                got.add(stamp)
            if "seq" in frame:
                await ws.send(json.dumps({"type": "ack", "seq": frame["seq"]}))


# ---- mosquitto: paho subscribers ----

def mosquitto_subscribers(port: int, n: int, got: Deliveries) -> list:
    import paho.mqtt.client as mqtt

    clients, subscribed = [], threading.Semaphore(0)
    for i in range(n):
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"py-sub-{i}", transport="websockets")
        c.ws_set_options(path="/")
        c.on_connect = lambda c, _u, _f, _rc, _p, i=i: c.subscribe(f"b/d{i}", qos=1)
        c.on_subscribe = lambda *_: subscribed.release()
        c.on_message = lambda _c, _u, m: (s := stamp_of(m.payload.decode())) is not None and got.add(s)
        c.connect("127.0.0.1", port)
        c.loop_start()
        clients.append(c)
    for _ in range(n):
        if not subscribed.acquire(timeout=30):
            raise RuntimeError("mosquitto subscribers did not all subscribe")
    return clients


# ---- the publisher (its own process) ----

def publish(kind: str, port: int, admin: str, sessions: int, rate: float, start: int, seconds: float, result) -> None:
    interval = 1e9 / rate
    end = start + int(seconds * 1e9)
    sent, late = 0, 0
    if kind == "mosquitto":
        import paho.mqtt.client as mqtt

        pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="py-pub")
        pub.connect("127.0.0.1", port)
        pub.loop_start()
        send = lambda i, stamp: pub.publish(f"b/d{i % sessions}", f"@{stamp}", qos=1)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        headers = {"Authorization": f"Bearer {admin}", "Content-Type": "application/json"}

        def send(i: int, stamp: int) -> None:
            body = json.dumps({"targets": [f"d{i % sessions}"], "title": "Bench", "message": f"@{stamp}"})
            conn.request("POST", "/v1/push", body=body, headers=headers)
            answer = conn.getresponse()
            answer.read()
            if answer.status >= 300:
                raise RuntimeError(f"push answered {answer.status}")
    while (now := time.monotonic_ns()) < start:
        time.sleep((start - now) / 1e9)
    due = start
    while (now := time.monotonic_ns()) < end:
        if now < due:
            time.sleep((due - now) / 1e9)
            continue
        if now - due > 2_000_000:
            late += 1
        send(sent, time.monotonic_ns())
        sent += 1
        due = start + int(sent * interval)
    if kind == "mosquitto":
        time.sleep(0.5)
        pub.loop_stop()
    result.put((sent, late))


# ---- one run ----

def run_once(kind: str, args) -> dict:
    # mosquitto's libwebsockets binds its listener to every address, so a port free on 127.0.0.1 when picked can be
    # taken meanwhile by another client's ephemeral port: then it exits at start, and fresh ports are tried.
    for attempt in range(5):
        try:
            server = Server(kind, args.sessions, args.lanpushd, args.mosquitto)
            break
        except RuntimeError:
            if kind != "mosquitto" or attempt == 4:
                raise
    got = Deliveries()
    try:
        loop = asyncio.new_event_loop()
        tasks, clients = [], []
        if kind == "mosquitto":
            clients = mosquitto_subscribers(server.port, args.sessions, got)
        else:
            ready, count = asyncio.Event(), [0, args.sessions]
            tasks = [loop.create_task(lanpush_session(server.port, t, got, ready, count)) for t in server.tokens]
            loop.run_until_complete(asyncio.wait_for(ready.wait(), 60))
        lead = args.lead
        start = time.monotonic_ns() + 1_000_000_000  # the publisher's process starts meanwhile
        got.window = (start + int(lead * 1e9), start + int((lead + args.seconds) * 1e9))
        spawn = multiprocessing.get_context("spawn")
        result = spawn.Queue()
        publisher = spawn.Process(target=publish, args=(
            kind, server.mqtt_port if kind == "mosquitto" else server.port, server.admin, args.sessions, args.rate,
            start, lead + args.seconds, result))
        publisher.start()

        async def measure() -> tuple[float, float]:
            await asyncio.sleep((got.window[0] - time.monotonic_ns()) / 1e9)
            c0, t0 = cpu_seconds(server.process.pid), time.monotonic()
            await asyncio.sleep(args.seconds)
            return cpu_seconds(server.process.pid) - c0, time.monotonic() - t0

        cpu, wall = loop.run_until_complete(measure())
        loop.run_until_complete(asyncio.sleep(1.0))  # the last deliveries of the window
        sent, late = result.get(timeout=60)
        publisher.join(30)
        rss = rss_mib(server.process.pid)
        async def close_sessions() -> None:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        loop.run_until_complete(close_sessions())
        loop.close()
        for c in clients:
            c.loop_stop()
            c.disconnect()
        expected = args.rate * args.seconds
        with got.lock:
            latencies = list(got.latencies)
        return {
            "cpu_us_per_update": cpu / max(1, len(latencies)) * 1e6,
            "cpu_percent": cpu / wall * 100,
            "delivered_percent": len(latencies) / expected * 100,
            "send_rate": sent / (lead + args.seconds),
            "late_sends": late,
            "p50_ms": percentile(latencies, 50),
            "p99_ms": percentile(latencies, 99),
            "rss_mib": rss,
        }
    finally:
        server.stop()


FIGURES = [
    ("cpu_us_per_update", "server CPU per notification", "µs"),
    ("cpu_percent", "server CPU", "% of a core"),
    ("delivered_percent", "delivered in the window", "%"),
    ("send_rate", "achieved send rate", "/s"),
    ("p50_ms", "ingest→delivery p50", "ms"),
    ("p99_ms", "ingest→delivery p99", "ms"),
    ("rss_mib", "server RSS after the run", "MiB"),
]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", default=",".join(SERVERS))
    p.add_argument("--sessions", type=int, default=100)
    p.add_argument("--rate", type=float, default=1000)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--lead", type=float, default=2)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--smoke", action="store_true", help="5 sessions, 100/s, 0.5 s, 1 run")
    p.add_argument("--lanpushd", default=str(ROOT / ".build" / "release" / "lanpushd"))
    p.add_argument("--mosquitto", default=shutil.which("mosquitto") or "/usr/sbin/mosquitto")
    args = p.parse_args()
    if args.smoke:
        args.sessions, args.rate, args.seconds, args.lead, args.runs = 5, 100, 0.5, 0.3, 1
    servers = [s for s in args.servers.split(",") if s]
    if "mosquitto" in servers and not Path(args.mosquitto).exists():
        print(f"pyclients: no mosquitto at {args.mosquitto}: skipped", file=sys.stderr)
        servers.remove("mosquitto")
    runs: dict[str, list[dict]] = {s: [run_once(s, args) for _ in range(args.runs)] for s in servers}
    med = {s: {k: statistics.median(r[k] for r in rs) for k, _, _ in FIGURES} for s, rs in runs.items()}
    print(f"Python clients: {args.sessions} sessions, {args.rate:g} notifications/s, {args.seconds:g} s, "
          f"medians of {args.runs}\n")
    print("| figure | " + " | ".join(servers) + (" | " + " | ".join(f"{s}/mosq" for s in servers if s != "mosquitto")
                                                   if "mosquitto" in med else "") + " |")
    print("|---|" + "--:|" * (len(servers) + (len(servers) - 1 if "mosquitto" in med else 0)))
    for key, label, unit in FIGURES:
        cells = [(f"{med[s][key]:,.0f}" if med[s][key] >= 1000 else f"{med[s][key]:.3g}") + f" {unit}" for s in servers]
        if "mosquitto" in med:
            base = med["mosquitto"][key]
            cells += [f"{med[s][key] / base:.2f}×" if base else "—" for s in servers if s != "mosquitto"]
        print(f"| {label} | " + " | ".join(cells) + " |")
    out = ROOT / "test-artifacts" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"py-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    path.write_text(json.dumps({"args": vars(args), "runs": runs, "medians": med}, indent=1))
    print(f"\npyclients: results in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
