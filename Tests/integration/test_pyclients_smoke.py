"""A seconds-long smoke run of `Benchmarks/pyclients.py` (docs/BENCHMARKS.md, "Python clients"): the `notify`
scenario with Python clients (websockets + http.client for lanpush, paho-mqtt for mosquitto). It checks that the
script starts each server itself, that every session received notifications with their stamps, and that it writes
its figures — not the figures themselves (never pass/fail on numbers)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

from gateway import BINARY, ROOT


def test_pyclients_smoke_delivers_on_every_server():
    servers = ["lanpush", "lanpush-mem"] + (["mosquitto"] if shutil.which("mosquitto") or Path("/usr/sbin/mosquitto").exists() else [])
    done = subprocess.run(
        [sys.executable, str(ROOT / "Benchmarks" / "pyclients.py"), "--smoke", "--lanpushd", str(BINARY),
         "--servers", ",".join(servers)],
        cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    path = Path(done.stdout.strip().splitlines()[-1].split("results in ", 1)[1])
    result = json.loads(path.read_text())
    assert sorted(result["runs"]) == sorted(servers)
    for server, runs in result["runs"].items():
        for run in runs:
            assert run["delivered_percent"] > 50, (server, run)
            assert run["p50_ms"] > 0 and run["p99_ms"] >= run["p50_ms"], (server, run)
            assert run["rss_mib"] > 1, (server, run)
    assert "server CPU per notification" in done.stdout
