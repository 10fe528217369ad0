"""Does lanpushd keep memory per reconnect? A release lanpushd (store on, 50 devices) takes ROUNDS batches of N
sessions that connect, authenticate, subscribe and close, one after another; 32 s after each batch (past a give-back
of freed memory, twice a minute) its VmRSS is printed. Flat means nothing is kept per session once it is gone.

    .venv-test/bin/python Benchmarks/reconnects.py [LANPUSHD] [ROUNDS] [N]    # defaults: .build/release/lanpushd 4 5000
"""
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / ".build" / "release" / "lanpushd")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
per = int(sys.argv[3]) if len(sys.argv) > 3 else 5000

work = Path(tempfile.mkdtemp(prefix="lanpush-reconnects-"))
(work / "state").mkdir()
tokens = {f"d{i}": secrets.token_urlsafe(24) for i in range(50)}
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
config = f"listen: 127.0.0.1:{port}\nmdns: {{enabled: false}}\nstore: {{enabled: true}}\ndevices:\n"
config += "".join(f"  - {{id: {d}, token: {t}}}\n" for d, t in tokens.items())
(work / "lanpush.yaml").write_text(config)
daemon = subprocess.Popen([binary, "--config", str(work / "lanpush.yaml"), "--state-dir", str(work / "state"), "--no-mdns"],
                          stdout=open(work / "lanpushd.log", "w"), stderr=subprocess.STDOUT)


def rss_mib():
    for line in open(f"/proc/{daemon.pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024


def reconnect(count):
    ids = list(tokens)
    for i in range(count):
        with connect(f"ws://127.0.0.1:{port}/v1/stream", subprotocols=["lanpush.v1"], open_timeout=10) as ws:
            ws.recv(5)  # auth_required
            ws.send(json.dumps({"type": "auth", "token": tokens[ids[i % len(ids)]]}))
            assert json.loads(ws.recv(5))["type"] == "auth_ok"
            ws.send(json.dumps({"type": "subscribe"}))
            ws.recv(5)  # snapshot


try:
    time.sleep(1.5)
    print(f"started: RSS {rss_mib():.1f} MiB", flush=True)
    for r in range(rounds):
        began = time.time()
        reconnect(per)
        took = time.time() - began
        time.sleep(32)
        print(f"after {(r + 1) * per} reconnects ({took:.0f} s): RSS {rss_mib():.1f} MiB", flush=True)
finally:
    daemon.terminate()
    daemon.wait()
    subprocess.run(["rm", "-rf", str(work)])
