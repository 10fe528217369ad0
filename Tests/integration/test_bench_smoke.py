"""A seconds-long smoke run of `lanpush-bench` (docs/BENCHMARKS.md): tiny counts, every scenario, both servers.

It checks that the load tool starts lanpushd (store on and off) and mosquitto itself, drives them, and prints a
figure for each — not the figures themselves (the benchmark is `./scripts/bench`, never pass/fail on numbers).

Binaries: `.build/debug/lanpush-bench` and `.build/debug/lanpushd` (built here if missing), or `$LANPUSH_BENCH` /
`$LANPUSHD`.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gateway import BINARY, ROOT

BENCH = Path(os.environ.get("LANPUSH_BENCH") or ROOT / ".build" / "debug" / "lanpush-bench")
DAEMON = Path(os.environ.get("LANPUSHD") or BINARY)
SCENARIOS = ["latency", "fast-1", "fast-1-stream", "fast-100", "fast-100-each", "fanout", "notify", "notify-stream", "bytes", "slow", "ingest"]


def mosquitto():
    return shutil.which("mosquitto") or next((p for p in ("/usr/sbin/mosquitto", "/sbin/mosquitto") if os.path.exists(p)), None)


def build_missing():
    if not BENCH.exists():
        subprocess.run(["swift", "build", "--product", "lanpush-bench"], cwd=ROOT, check=True)
    if not DAEMON.exists():
        subprocess.run(["swift", "build", "--product", "lanpushd"], cwd=ROOT, check=True)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    assert mosquitto(), "mosquitto is not installed: ./scripts/setup --test installs it"
    build_missing()
    out = tmp_path_factory.mktemp("bench")
    proc = subprocess.run(
        [str(BENCH), "--smoke", "--runs", "1", "--lanpushd", str(DAEMON), "--wrk-script", "none",
         "--settle", "0.5", "--json", str(out / "runs.json"), "--markdown", str(out / "tables.md")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    return proc, out


def section(text, scenario):
    """The printed table of one scenario."""
    match = re.search(r"^== %s: .*?(?=^== |\Z)" % re.escape(scenario), text, re.M | re.S)
    return match.group(0) if match else ""


def test_runs_every_scenario_against_both_servers(smoke):
    proc, _ = smoke
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "smoke scale" in proc.stdout
    # A scenario that failed on one server prints "! <scenario> on <server>": none may.
    assert not re.search(r"^\s*! ", proc.stdout, re.M), proc.stdout
    for scenario in SCENARIOS:
        table = section(proc.stdout, scenario)
        assert table, f"no table for {scenario}:\n{proc.stdout}"
        header = table.splitlines()[1]
        assert "lanpush (durable)" in header and "lanpush (in memory)" in header, table
        if scenario != "ingest":  # mosquitto has no HTTP ingest
            assert "mosquitto" in header and "lanpush/mosq" in header, table


def test_prints_the_figures(smoke):
    proc, out = smoke
    text = proc.stdout
    for scenario, label in [
        ("latency", "ingest→delivery p99"),
        ("fast-1", "deliveries/s"),
        ("fast-1-stream", "updates accepted/s"),
        ("fast-1-stream", "updates reaching the sessions/s"),
        ("fast-1-stream", "accepted after p99"),
        ("notify", "server CPU per update"),
        ("notify", "server RSS 0.5 s after the run"),
        ("notify-stream", "server CPU per update"),
        ("fast-100", "server RSS 0.5 s after the run"),
        ("fast-100", "deliveries/s"),
        ("fanout", "RSS per idle session"),
        ("fanout", "time to last delivery"),
        ("bytes", "delta / full state"),
        ("slow", "frames delivered to the slow session per second"),
        ("slow", "final state exact"),
        ("ingest", "requests/s"),
    ]:
        row = next((l for l in section(text, scenario).splitlines() if label in l), None)
        assert row, f"{scenario}: no '{label}' row:\n{section(text, scenario)}"
        assert re.search(r"\d", row[row.index(label) + len(label):]), row  # a value, not only dashes
    runs = json.loads((out / "runs.json").read_text())["runs"]
    assert set(runs) == set(SCENARIOS)
    for scenario in SCENARIOS:
        for server in ["lanpush", "lanpush-mem"] + ([] if scenario == "ingest" else ["mosquitto"]):
            assert runs[scenario].get(server), f"{scenario}: no run on {server}"
    assert "| figure |" in (out / "tables.md").read_text()
    # On an ordered stream every frame moves its tag's progress on, so it stands for one update or more (lanpush: the
    # ones merged into it); a count that could not read the frames' progress would fall short of the frames.
    for server in ["lanpush-mem", "lanpush", "mosquitto"]:
        run = runs["fast-1-stream"][server][0]
        assert run["fast1stream.covered"] >= run["fast1stream.deliveries"] > 0, (server, run)


def test_the_soak_reports_every_period_and_its_growth():
    """The soak (Benchmarks/soak.sh) at smoke scale, with the never-reading session: RSS (median and largest of the
    per-second samples), fds and p99 per period, the growth and least-squares trend from the second period on, and
    no session closed by the server."""
    build_missing()
    proc = subprocess.run(
        [str(BENCH), "--smoke", "--runs", "1", "--lanpushd", str(DAEMON), "--wrk-script", "none",
         "--scenarios", "soak", "--servers", "lanpush", "--stuck"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    table = section(proc.stdout, "soak")
    figures = {}
    for line in table.splitlines()[3:]:
        m = re.match(r"(.+?)\s{2,}(-?[\d.,]+)", line)
        if m:
            figures[m.group(1)] = float(m.group(2).replace(",", ""))
    periods = sorted(int(k.split()[1].rstrip(":")) for k in figures if k.endswith("server RSS, median"))
    assert periods == list(range(1, len(periods) + 1)) and len(periods) >= 3, table
    for k in periods:
        assert 0 < figures[f"period {k}: server RSS, median"] <= figures[f"period {k}: server RSS, largest"], table
        assert figures[f"period {k}: server fds"] > 40, table  # the 40 sessions' sockets at least
        assert figures[f"period {k}: sessions closed by the server"] == 0, table
    for label in ["RSS growth (medians), period 2 → last", "RSS trend (least-squares line), period 2 → last",
                  "fds growth, period 2 → last", "worst period's p99"]:
        assert label in figures, table
    assert figures["never-reading session's connections"] >= 1, table


def test_resume_history_bytes_reaches_lanpushd():
    """`--resume-history-bytes` writes the key into lanpushd's config (a line lanpushd refused would stop it at start,
    and the run with it); a value lanpushd would refuse is refused by the bench first."""
    build_missing()
    base = [str(BENCH), "--smoke", "--runs", "1", "--lanpushd", str(DAEMON), "--wrk-script", "none",
            "--scenarios", "fast-100", "--servers", "lanpush-mem"]
    ok = subprocess.run(base + ["--resume-history-bytes", "65536"], cwd=ROOT, capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and not re.search(r"^\s*! ", ok.stdout, re.M), ok.stdout[-2000:] + ok.stderr[-2000:]
    assert section(ok.stdout, "fast-100"), ok.stdout
    bad = subprocess.run(base + ["--resume-history-bytes", "1000"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode != 0 and "--resume-history-bytes: 65536 to 1073741824" in bad.stderr, bad.stderr
