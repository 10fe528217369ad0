#!/usr/bin/env python3
"""The fixed workload of Benchmarks/callgrind.sh (stdlib only, loopback only).

Starts lanpushd under `valgrind --tool=callgrind` (in memory, no mDNS), warms up, then measures two workloads with
`callgrind_control` (counters zeroed before and dumped after each, so start-up and warm-up are not counted):

- ingest: one device session; a round is one `POST /v1/push` (an update of one tag), its 202, the frame on the
  session and the session's ack.
- fanout: 100 device sessions; a round is one `POST /v1/push` to all 100, the 100 frames and the 100 acks.

Prints the server's instructions (callgrind Ir) per round for each. Callgrind counts instructions, not time, so the
figures repeat within a fraction of a percent from run to run on the same binary.
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
    """A minimal lanpush client (v1 unless `protocol` says otherwise): masked text frames out, unmasked frames in."""

    def __init__(self, port, token, protocol="lanpush.v1"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Sec-WebSocket-Protocol: {protocol}\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.recv()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        assert b" 101 " in head.split(b"\r\n")[0], head
        assert self.read()["type"] == "auth_required"
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
        data = json.dumps(obj, separators=(",", ":")).encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(data)))

    def close(self):
        """A close frame (1000), then the socket."""
        mask = os.urandom(4)
        self.sock.sendall(bytes([0x88, 0x82]) + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(struct.pack(">H", 1000))))
        self.sock.close()

    def read(self):
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
            if op == 1:
                return json.loads(payload)
            if op == 8:
                raise ConnectionError(f"closed: {payload!r}")
            # pings are answered by nobody: the ping interval is longer than the run


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
    ap.add_argument("--lanpushd", required=True)
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--fanout-rounds", type=int, default=30)
    ap.add_argument("--keep", action="store_true", help="keep the callgrind files (printed)")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="lanpush-callgrind-")
    port = free_port()
    admin = secrets.token_urlsafe(24)
    tokens = [secrets.token_urlsafe(24) for _ in range(DEVICES)]
    lines = [f'listen: "127.0.0.1:{port}"', f"admin_token: {admin}", "log_level: warning", "mdns: {enabled: false}",
             "store: {enabled: false}",
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

        print(f"ingest: {ingest / args.rounds:,.0f} instructions per round ({args.rounds} rounds: POST /v1/push "
              f"-> 202 + 1 frame + 1 ack)")
        print(f"fanout: {fanout / args.fanout_rounds:,.0f} instructions per round ({args.fanout_rounds} rounds: "
              f"POST /v1/push to {DEVICES} devices -> 202 + {DEVICES} frames + {DEVICES} acks)")
    finally:
        stop(proc)
        if args.keep:
            print(f"callgrind files in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
