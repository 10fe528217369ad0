"""Idle keepalive: how often an idle device session is woken by the gateway's pings, by the interval it asked for.

A phone that holds a session open wakes its radio for every ping; `auth`'s `keepalive` (docs/PROTOCOL.md,
"Handshake") lets it ask for a longer interval, which the gateway holds to `session.keepalive_min` …
`keepalive_max` and says in `auth_ok.keepalive`. This opens one idle session per interval asked (none = the default
`session.ping_interval`) against the real lanpushd, counts the WebSocket pings each receives (it answers them, as a
client does) and reports pings per hour and how long a dead session goes unnoticed (interval + `ping_timeout`).

    .venv-test/bin/python Benchmarks/keepalive.py [--seconds 600] [--lanpushd .build/debug/lanpushd]

The socket is read raw (the WebSocket libraries answer pings without telling): a ping is opcode 9, answered with a
masked pong carrying the same payload.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import socket
import struct
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "integration"))

import gateway as gateway_mod  # noqa: E402  (the integration harness: starts the real lanpushd)


class IdleSession(threading.Thread):
    def __init__(self, port: int, token: str, keepalive: float | None, seconds: float):
        super().__init__(daemon=True)
        self.port, self.token, self.keepalive, self.seconds = port, token, keepalive, seconds
        self.pings = 0
        self.buf = b""
        self.granted: float | None = None
        self.error: str | None = None

    def run(self):
        try:
            self._run()
        except Exception as e:  # reported in the table
            self.error = repr(e)

    def _send(self, s: socket.socket, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        head = bytes([0x80 | opcode])
        n = len(payload)
        head += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
        s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _frame(self, s: socket.socket):
        """The next (opcode, payload); what a timeout interrupted stays in `self.buf` for the next call."""
        while len(self.buf) < 2 or len(self.buf) < self._need(self.buf):
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("the gateway closed the session")
            self.buf += chunk
        need = self._need(self.buf)
        frame, self.buf = self.buf[:need], self.buf[need:]
        n = frame[1] & 0x7F
        start = 2 if n < 126 else 4 if n == 126 else 10
        return frame[0] & 0x0F, frame[start:]

    @staticmethod
    def _need(buf: bytes) -> int:
        n = buf[1] & 0x7F
        if n < 126:
            return 2 + n
        if n == 126:
            return 4 + struct.unpack(">H", buf[2:4])[0] if len(buf) >= 4 else 1 << 30
        return 10 + struct.unpack(">Q", buf[2:10])[0] if len(buf) >= 10 else 1 << 30

    def _run(self):
        s = socket.create_connection(("127.0.0.1", self.port))
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        assert b" 101 " in head.split(b"\r\n")[0], head
        auth = {"type": "auth", "token": self.token}
        if self.keepalive is not None:
            auth["keepalive"] = self.keepalive
        self._send(s, 1, json.dumps(auth).encode())
        self._send(s, 1, b'{"type":"subscribe"}')
        s.settimeout(1.0)
        deadline = time.time() + self.seconds
        while time.time() < deadline:
            try:
                opcode, payload = self._frame(s)
            except socket.timeout:
                continue
            if opcode == 9:
                self.pings += 1
                self._send(s, 10, payload)
            elif opcode == 1:
                msg = json.loads(payload)
                if msg.get("type") == "auth_ok":
                    self.granted = msg.get("keepalive")
        s.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--lanpushd", default=str(gateway_mod.BINARY))
    ap.add_argument("--asked", default="default,30,120,300", help="intervals to ask for, comma-separated")
    args = ap.parse_args()
    gateway_mod.BINARY = Path(args.lanpushd)
    asked = [None if a == "default" else float(a) for a in args.asked.split(",")]
    devices = [f"d{i}" for i in range(len(asked))]
    gw = gateway_mod.Gateway(devices=tuple(devices)).start()
    try:
        sessions = [IdleSession(gw.port, gw.tokens[d], k, args.seconds) for d, k in zip(devices, asked)]
        for s in sessions:
            s.start()
        for s in sessions:
            s.join(args.seconds + 30)
    finally:
        gw.stop()
    timeout = 10.0  # session.ping_timeout's default
    print(f"idle sessions for {args.seconds:.0f} s ({args.lanpushd})")
    print("| asked | granted (s) | pings received | pings per hour | a dead session noticed within (s) |")
    print("|---|---|---|---|---|")
    for s in sessions:
        per_hour = s.pings * 3600 / args.seconds
        granted = s.granted if s.granted is not None else float("nan")
        print(f"| {'default' if s.keepalive is None else f'{s.keepalive:g} s'} | {granted:g} | {s.pings} | "
              f"{per_hour:.0f} | {granted + timeout:g} |" + (f" error: {s.error}" if s.error else ""))
    return 1 if any(s.error for s in sessions) else 0


if __name__ == "__main__":
    sys.exit(main())
