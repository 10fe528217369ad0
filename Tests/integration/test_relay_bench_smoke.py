"""A seconds-long smoke run of the relay-path benchmark `Benchmarks/relay_replay.py`.

`--smoke` replays both HA-docs scenarios (washer cycle, EV charging) at 1000× with a 1 s update interval against a
gone device and the local fake relay; the script exits non-zero if the final state did not reach the relay. This
checks the benchmark still runs and that the pacer delivers the final state — not the figures (the benchmark itself
is `Benchmarks/relay_replay.py` with a release build).

Daemon: `$LANPUSHD`, else the debug build the other integration tests use (`.build/debug/lanpushd`).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

from gateway import BINARY, ROOT

SCRIPT = ROOT / "Benchmarks" / "relay_replay.py"
DAEMON = Path(os.environ.get("LANPUSHD") or BINARY)


def test_relay_replay_smoke(tmp_path):
    if not DAEMON.exists():
        subprocess.run(["swift", "build", "--product", "lanpushd"], cwd=ROOT, check=True)
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke", "--lanpushd", str(DAEMON),
         "--markdown", str(tmp_path / "relay.md"), "--json", str(tmp_path / "relay.json")],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "smoke scale" in proc.stdout
    for label in ("Washer cycle", "EV charging", "relay requests sent", "final state reached the relay"):
        assert label in proc.stdout, proc.stdout
    runs = json.loads((tmp_path / "relay.json").read_text())["runs"]
    assert len(runs) == 1
    for name, updates in (("washer", 8), ("ev", 22)):
        f = runs[0]["scenarios"][name]["figures"]
        assert f["updates"] == updates and f["codes"] == {"202": updates}, f
        assert f["final_ok"] is True, f
        # 1000× with a 1 s interval: the pacer must merge (fewer requests than updates), one start and one end.
        assert f["start"] == 1 and f["end"] == 1 and f["requests"] < f["updates"], f
        assert f["failed_answers"] == 0, f
    assert "| figure | median |" in (tmp_path / "relay.md").read_text()
