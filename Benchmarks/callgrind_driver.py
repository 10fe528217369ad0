#!/usr/bin/env python3
"""The fixed workload of Benchmarks/callgrind.sh (stdlib only, loopback only).

Starts lanpushd under `valgrind --tool=callgrind` (in memory unless `--store`, no mDNS), warms up, then measures
each workload with `callgrind_control` (counters zeroed before and dumped after each, so start-up and warm-up are not
counted):

- ingest: one device session; a round is one `POST /v1/push` (an update of one tag), its 202, the frame on the
  session and the session's ack.
- fanout: 100 device sessions; a round is one `POST /v1/push` to all 100, the 100 frames and the 100 acks.
- notify: 100 device sessions; a round is one plain notification (`lanpush-bench`'s `notify` body) to the next
  device in turn, its 202, the frame on that device's session and its ack.
- notify-stream: the same notifications as `push` items of one publisher stream, each round waiting for its
  `accepted` (no HTTP request).

With `--mosquitto BINARY` it measures mosquitto instead, on the `notify` round as `lanpush-bench` runs it there:
100 MQTT-over-WebSocket subscribers (`b/dN/#`, QoS 1) and a plain-MQTT publisher; a round is one QoS 1 PUBLISH to
the next device's topic, the broker's PUBACK, the PUBLISH to that subscriber and its PUBACK.

Prints the server's instructions (callgrind Ir, every thread) per round for each. Callgrind counts instructions, not
time, so the figures repeat within about a percent from run to run on the same binary; the store's commits (`--store`)
are counted wherever they run (on the loop when updates come one at a time, as here).
"""
import argparse
import base64
import glob
import json
import os
import re
import secrets
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

DEVICES = 100


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HTTP:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def request(self, method, path, body=b"", headers=()):
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{h}\r\n" for h in headers) + "\r\n"
        self.sock.sendall(head.encode() + body)
        while b"\r\n\r\n" not in self.buf:
            self.recv()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ")[1])
        length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
        while len(self.buf) < length:
            self.recv()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, body

    def recv(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk


class WS:
    """A minimal lanpush client (v1 unless `protocol` says otherwise): masked text frames out, unmasked frames in.
    `publisher`: a publisher stream (the admin token), which neither subscribes nor gets events."""

    def __init__(self, port, token, protocol="lanpush.v1", publisher=False, path="/v1/stream"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Sec-WebSocket-Protocol: {protocol}\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.recv()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        assert b" 101 " in head.split(b"\r\n")[0], head
        if token is None:  # another protocol (MQTT) runs on the socket
            return
        assert self.read()["type"] == "auth_required"
        if publisher:
            self.send({"type": "auth", "token": token, "role": "publisher"})
            assert self.read()["type"] == "auth_ok"
            return
        self.send({"type": "auth", "token": token})
        assert self.read()["type"] == "auth_ok"
        self.send({"type": "subscribe"})
        while self.read()["type"] != "synced":
            pass

    def recv(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the session")
        self.buf += chunk

    def send(self, obj):
        self.send_text(json.dumps(obj, separators=(",", ":")).encode())

    def send_binary(self, data):
        self.send_text(data, opcode=0x2)

    def send_text(self, data, opcode=0x1):
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(data)))

    def close(self):
        """A close frame (1000), then the socket."""
        mask = os.urandom(4)
        self.sock.sendall(bytes([0x88, 0x82]) + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(struct.pack(">H", 1000))))
        self.sock.close()

    def read(self):
        return json.loads(self.read_message(0x1))

    def read_binary(self):
        return self.read_message(0x2)

    def read_message(self, opcode):
        while True:
            while len(self.buf) < 2:
                self.recv()
            op, n = self.buf[0] & 0x0F, self.buf[1] & 0x7F
            off = 2
            if n == 126:
                while len(self.buf) < 4:
                    self.recv()
                n, off = struct.unpack(">H", self.buf[2:4])[0], 4
            while len(self.buf) < off + n:
                self.recv()
            payload, self.buf = self.buf[off:off + n], self.buf[off + n:]
            if op == opcode:
                return payload
            if op == 8:
                raise ConnectionError(f"closed: {payload!r}")
            # pings are answered by nobody: the ping interval is longer than the run


class MQTTStream:
    """MQTT 3.1.1 packets over a byte stream: plain TCP, or the binary frames of a WebSocket (`ws`)."""

    def __init__(self, sock, ws=None):
        self.sock, self.ws, self.buf = sock, ws, b""

    @staticmethod
    def packet(kind, body):
        n, length = len(body), b""
        while True:
            byte, n = n % 128, n // 128
            length += bytes([byte | (0x80 if n else 0)])
            if not n:
                return bytes([kind]) + length + body

    @staticmethod
    def string(text):
        data = text.encode()
        return struct.pack(">H", len(data)) + data

    def send(self, data):
        if self.ws:
            self.ws.send_binary(data)
        else:
            self.sock.sendall(data)

    def fill(self):
        if self.ws:
            self.buf += self.ws.read_binary()
        else:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("mosquitto closed the connection")
            self.buf += chunk

    def read(self):
        """(packet type, flags, body) of the next packet."""
        while True:
            if len(self.buf) >= 2:
                n, shift, at = 0, 0, 1
                while at < len(self.buf):
                    n |= (self.buf[at] & 0x7F) << shift
                    shift += 7
                    at += 1
                    if not self.buf[at - 1] & 0x80:
                        if len(self.buf) >= at + n:
                            head, body, self.buf = self.buf[0], self.buf[at:at + n], self.buf[at + n:]
                            return head >> 4, head & 0x0F, body
                        break
            self.fill()

    def connect(self, client_id, filters=()):
        self.send(self.packet(0x10, self.string("MQTT") + bytes([4, 0x02]) + struct.pack(">H", 600) + self.string(client_id)))
        assert self.read()[0] == 2  # CONNACK
        if filters:
            self.send(self.packet(0x82, struct.pack(">H", 1) + b"".join(self.string(f) + b"\x01" for f in filters)))
            assert self.read()[0] == 9  # SUBACK


def mosquitto_notify(binary, rounds, keep):
    """The notify round on mosquitto under callgrind (see the module's doc); returns instructions per round."""
    work = tempfile.mkdtemp(prefix="mosquitto-callgrind-")
    mqtt_port, ws_port = free_port(), free_port()
    conf = os.path.join(work, "mosquitto.conf")
    with open(conf, "w") as f:
        # `user root`: mosquitto started as root otherwise drops to its own user, which cannot write callgrind's
        # files into this (private) folder.
        f.write("\n".join(["user root", "per_listener_settings false", "allow_anonymous true", "persistence false",
                           "set_tcp_nodelay true", "max_connections -1", "log_dest stderr", "log_type error",
                           f"listener {mqtt_port} 127.0.0.1", "protocol mqtt",
                           f"listener {ws_port} 127.0.0.1", "protocol websockets", ""]))
    log = open(os.path.join(work, "mosquitto.log"), "wb")
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/callgrind.out.%p",
                             "--dump-instr=no", binary, "-c", conf], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError("mosquitto exited:\n" + open(log.name, errors="replace").read()[-3000:])
            try:
                publisher = MQTTStream(socket.create_connection(("127.0.0.1", mqtt_port), timeout=120))
                break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("mosquitto did not start under valgrind")
                time.sleep(0.5)
        publisher.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        publisher.connect("callgrind-publisher")
        subscribers = []
        for i in range(DEVICES):
            ws = WS(ws_port, None, protocol="mqtt", path="/mqtt")
            sub = MQTTStream(ws.sock, ws)
            sub.connect(f"callgrind-{i}", [f"b/d{i}/#", "all/#"])
            subscribers.append(sub)
        packet_id = 0

        def notify_round(i):
            nonlocal packet_id
            packet_id = packet_id % 65535 + 1
            payload = json.dumps({"message": f"@{i}", "title": "Bench"}, separators=(",", ":")).encode()
            publisher.send(MQTTStream.packet(0x32, MQTTStream.string(f"b/d{i % DEVICES}/notify") +
                                             struct.pack(">H", packet_id) + payload))
            kind, _, body = publisher.read()
            assert kind == 4 and body == struct.pack(">H", packet_id), (kind, body)  # PUBACK
            sub = subscribers[i % DEVICES]
            kind, flags, body = sub.read()
            assert kind == 3 and (flags >> 1) & 3 == 1, (kind, flags)  # PUBLISH, QoS 1
            topic_length = struct.unpack(">H", body[:2])[0]
            sub.send(MQTTStream.packet(0x40, body[2 + topic_length:4 + topic_length]))

        for i in range(DEVICES):
            notify_round(i)
        return measure(proc.pid, work, "notify", rounds, lambda i: notify_round(1000 + i)) / rounds
    finally:
        stop(proc)
        if keep:
            print(f"callgrind files in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def callgrind_total(path):
    """The `summary:`/`totals:` Ir of one callgrind dump."""
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def measure(pid, outdir, name, rounds, body):
    before = set(glob.glob(os.path.join(outdir, "callgrind.out.*")))
    subprocess.run(["callgrind_control", "-z", str(pid)], check=True, capture_output=True)
    for i in range(rounds):
        body(i)
    subprocess.run(["callgrind_control", "-d", name, str(pid)], check=True, capture_output=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        new = set(glob.glob(os.path.join(outdir, "callgrind.out.*"))) - before
        if new:
            time.sleep(0.5)
            return callgrind_total(new.pop())
        time.sleep(0.2)
    raise RuntimeError("callgrind did not dump")


def start_under_callgrind(lanpushd, config, work, port, options=(), args=()):
    """lanpushd under `valgrind --tool=callgrind` (dumps in `work`), once it answers /healthz on `port`."""
    log = open(os.path.join(work, "lanpushd.log"), "wb")
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/callgrind.out.%p", "--dump-instr=no", *options,
         lanpushd, "--config", config, "--state-dir", os.path.join(work, "state"), *args],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 180
    while True:
        if proc.poll() is not None:
            raise RuntimeError("lanpushd exited:\n" + open(log.name, errors="replace").read()[-3000:])
        try:
            if HTTP(port).request("GET", "/healthz")[0] == 200:
                return proc
        except OSError:
            pass
        if time.time() > deadline:
            stop(proc)
            raise RuntimeError("lanpushd did not start under valgrind")
        time.sleep(0.5)


def stop(proc):
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lanpushd")
    ap.add_argument("--mosquitto", help="measure this mosquitto binary's notify round instead of lanpushd")
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--fanout-rounds", type=int, default=30)
    ap.add_argument("--notify-rounds", type=int, default=500)
    ap.add_argument("--store", action="store_true", help="the store on (durable, synchronous: normal), as lanpush-bench's 'lanpush'")
    ap.add_argument("--keep", action="store_true", help="keep the callgrind files (printed)")
    args = ap.parse_args()
    if args.mosquitto:
        per_round = mosquitto_notify(args.mosquitto, args.notify_rounds, args.keep)
        print(f"mosquitto notify: {per_round:,.0f} instructions per round ({args.notify_rounds} rounds: a QoS 1 PUBLISH "
              f"to 1 of {DEVICES} subscribers -> PUBACK + 1 PUBLISH + 1 PUBACK)")
        return
    if not args.lanpushd:
        ap.error("--lanpushd or --mosquitto is required")

    work = tempfile.mkdtemp(prefix="lanpush-callgrind-")
    port = free_port()
    admin = secrets.token_urlsafe(24)
    tokens = [secrets.token_urlsafe(24) for _ in range(DEVICES)]
    lines = [f'listen: "127.0.0.1:{port}"', f"admin_token: {admin}", "log_level: warning", "mdns: {enabled: false}",
             "store: {enabled: true, synchronous: normal}" if args.store else "store: {enabled: false}",
             "session: {window: 32, ack_timeout: 600, ping_interval: 600, ping_timeout: 600}", "devices:"]
    lines += [f"  - {{id: d{i}, name: d{i}, token: {t}}}" for i, t in enumerate(tokens)]
    config = os.path.join(work, "lanpush.yaml")
    with open(config, "w") as f:
        f.write("\n".join(lines) + "\n")
    proc = start_under_callgrind(args.lanpushd, config, work, port, args=["--no-mdns"])
    try:
        auth = [f"Authorization: Bearer {admin}", "Content-Type: application/json"]
        http = HTTP(port)

        def push(targets, i, tag="t"):
            body = json.dumps({"targets": targets, "title": "Washer", "message": f"step {i}",
                               "data": {"tag": tag, "live_update": True, "progress": i, "progress_max": 100000}},
                              separators=(",", ":")).encode()
            status, _ = http.request("POST", "/v1/push", body, auth)
            assert status == 202, status

        one = WS(port, tokens[0])

        def ingest_round(i):
            push(["d0"], i + 1)
            f = one.read()
            assert f["type"] in ("start", "update"), f
            one.send({"type": "ack", "seq": f["seq"]})

        for i in range(20):  # warm-up: first-use allocations, the activity's start
            ingest_round(i)
        ingest = measure(proc.pid, work, "ingest", args.rounds, lambda i: ingest_round(1000 + i))

        sessions = [one] + [WS(port, t) for t in tokens[1:]]
        everyone = [f"d{i}" for i in range(DEVICES)]

        def fanout_round(i):
            push(everyone, i, tag="f")
            for s in sessions:
                f = s.read()
                assert f["type"] in ("start", "update"), f
                s.send({"type": "ack", "seq": f["seq"]})

        for i in range(3):
            fanout_round(i + 1)
        fanout = measure(proc.pid, work, "fanout", args.fanout_rounds, lambda i: fanout_round(100 + i))

        def notification(i):
            return json.dumps({"targets": [f"d{i % DEVICES}"], "title": "Bench", "message": f"@{i}", "data": {}},
                              separators=(",", ":")).encode()

        def delivered(i):
            s = sessions[i % DEVICES]
            f = s.read()
            assert f["type"] == "notification", f
            s.send({"type": "ack", "seq": f["seq"]})

        def notify_round(i):
            status, _ = http.request("POST", "/v1/push", notification(i), auth)
            assert status == 202, status
            delivered(i)

        for i in range(DEVICES):  # every device's first notification
            notify_round(i)
        notify = measure(proc.pid, work, "notify", args.notify_rounds, lambda i: notify_round(1000 + i))

        publisher = WS(port, admin, publisher=True)
        items = 0

        def stream_round(i):
            nonlocal items
            publisher.send_text(b'{"type":"push",' + notification(i)[1:])
            items += 1
            while True:
                f = publisher.read()
                if f["type"] == "accepted" and f["through"] >= items:
                    break
                assert f["type"] == "accepted", f
            delivered(i)

        for i in range(DEVICES):
            stream_round(i)
        stream = measure(proc.pid, work, "notify-stream", args.notify_rounds, lambda i: stream_round(5000 + i))

        mode = "durable" if args.store else "in memory"
        print(f"ingest ({mode}): {ingest / args.rounds:,.0f} instructions per round ({args.rounds} rounds: POST /v1/push "
              f"-> 202 + 1 frame + 1 ack)")
        print(f"fanout ({mode}): {fanout / args.fanout_rounds:,.0f} instructions per round ({args.fanout_rounds} rounds: "
              f"POST /v1/push to {DEVICES} devices -> 202 + {DEVICES} frames + {DEVICES} acks)")
        print(f"notify ({mode}): {notify / args.notify_rounds:,.0f} instructions per round ({args.notify_rounds} rounds: "
              f"a plain notification to 1 of {DEVICES} devices -> 202 + 1 frame + 1 ack)")
        print(f"notify-stream ({mode}): {stream / args.notify_rounds:,.0f} instructions per round ({args.notify_rounds} "
              f"rounds: the same as a publisher stream's push item -> accepted + 1 frame + 1 ack)")
    finally:
        stop(proc)
        if args.keep:
            print(f"callgrind files in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
