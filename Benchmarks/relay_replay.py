#!/usr/bin/env python3
"""Relay-path benchmark: HA-docs scenarios replayed against a gone device, through the real pacer.

For the washer cycle and the EV charging 0→100 % sequence of HA's Live Activity docs, replayed at `--speed` × real time (10 by
default), HA's relay body is POSTed to lanpushd's HA-compatible ingest (`/api/sendPushNotification`) for a device
that registered its push_token over lanpush.v1 and then closed its WebSocket (gone): every accepted change goes,
through the pacer with the *default* relay limits of Config/lanpush.yaml (min_update_interval 15 s, …), to a
local fake of HA's relay (Tests/integration/fake_relay.py, loopback only), which records what arrives.

Per scenario it reports: updates received (ingest requests and their answer codes), relay requests sent (by event:
start / update / end), requests / updates, whether the final state reached the relay (the last state-carrying relay
request has the content-state of the last live update), the time from posting that last update to the relay
receiving the final state, and the ingest answer latency p50 / p99. Medians over `--runs` (default 3).

    swift build -c release --scratch-path .build-relaybench --product lanpushd
    .venv-test/bin/python Benchmarks/relay_replay.py                      # 3 runs at 10x, ~13 min
    .venv-test/bin/python Benchmarks/relay_replay.py --jobs 3             # the 3 runs side by side
    .venv-test/bin/python Benchmarks/relay_replay.py --smoke              # seconds; exit 1 if the final state is lost

Both scenarios run at the same time against one daemon and one gone device (a phone following the washer and
the car at once): the pacer's slots are per (device, tag), so they do not pace each other; the start budget
(10/h) and the quota (500/day) are per device and are far from reached.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "integration"))

import gateway as gateway_mod  # noqa: E402  (the integration harness: starts the real lanpushd)
from fake_relay import FakeRelay  # noqa: E402

DEFAULT_BINARY = ROOT / ".build-relaybench" / "release" / "lanpushd"
BUILD_CMD = ["swift", "build", "-c", "release", "--scratch-path", ".build-relaybench", "--product", "lanpushd"]
PUSH_TOKEN = "fcm:tok-phone"  # an FCM token has a ":" (HA's relay refuses one without)
REGISTRATION_INFO = {"app_id": "io.robbie.HomeAssistant", "app_version": "2024.1", "os_version": "17.2",
                     "webhook_id": "hook-1"}
# The data keys the relay turns into the activity's content-state (RelayBodyEdit.stateKeys), plus `message`.
STATE_KEYS = ["critical_text", "progress", "progress_max", "chronometer", "when", "when_relative", "notification_icon",
              "notification_icon_color", "color", "background_color", "text_color", "progress_bar_color",
              "progress_bar_direction", "url"]


# ---- scenarios (HA's Live Activity docs; same steps as Sources/lanpush-bench/Scenarios.swift SeedSequences.ev / .washer) ------

@dataclass
class Step:
    at: float  # real seconds from the scenario's start
    message: str
    data: dict  # without tag / live_update (added on send); None for the end (clear_notification)
    end: bool = False


@dataclass
class Scenario:
    name: str
    label: str
    tag: str
    title: str
    steps: list
    timeline: str  # how the real-time timeline was chosen (printed with the results)


def washer(end_after: float) -> Scenario:
    """HA's Live Activity docs, washing machine: the phases the docs name, progress in seconds of a 3600 s cycle.

    Timeline: an update at each phase change, at t = progress (the payload's own clock: progress counts seconds of
    progress_max 3600), i.e. every 10 min over a 60 min cycle — what the seed's state trigger on
    `sensor.washing_machine_operation_state` produces ("only a handful of updates across a whole cycle"). The countdown
    is the seed's `chronometer` + `when` (seconds left) + `when_relative`, as HA's docs send it. The end
    (`clear_notification`) follows `end_after` s after "Cycle complete" (someone empties the machine)."""
    def phase(t, message, progress, done=False):
        d = {"progress": progress, "progress_max": 3600, "notification_icon": "mdi:washing-machine",
             "notification_icon_color": "#4CAF50" if done else "#2196F3", "color": "#4CAF50" if done else "#2196F3"}
        if not done:
            d.update(chronometer=True, when=3600 - progress, when_relative=True)
        return Step(t, message, d)

    steps = [phase(0, "Cycle started", 0), phase(600, "Washing", 600), phase(1200, "Washing", 1200),
             phase(1800, "Rinsing · 1 of 2", 1800), phase(2400, "Rinsing · 2 of 2", 2400), phase(3000, "Spinning", 3000),
             phase(3600, "Cycle complete", 3600, done=True),
             Step(3600 + end_after, "clear_notification", None, end=True)]
    return Scenario("washer", "Washer cycle (HA's Live Activity docs)", "washer_cycle", "Washing Machine", steps,
                    f"7 updates, one per phase every 600 s over a 3600 s cycle (t = progress), clear {end_after:g} s "
                    "after 'Cycle complete'")


def ev(end_after: float) -> Scenario:
    """HA's Live Activity docs, EV charging, throttled to 5 % steps as the docs' template condition does: 0 → 100 %.

    Timeline: the messages say "Est. (100 - p) × 1.2 min remaining" (Scenarios.swift), i.e. 1.2 min per percent:
    a 5 % step every 360 s and 0 → 100 % in 2 h (e.g. an 11 kW wallbox and a ~22 kWh pack, or 22 kW into ~44 kWh);
    the timeline follows the payload's own estimate. The end follows `end_after` s after "Charging complete"."""
    steps = []
    for p in range(0, 101, 5):
        minutes = (100 - p) * 6 // 5
        steps.append(Step(p * 72.0, "Charging complete" if p == 100 else f"Charging · Est. {minutes} min remaining",
                          {"critical_text": f"{p}%", "progress": p, "progress_max": 100,
                           "notification_icon": "mdi:ev-station", "notification_icon_color": "#4CAF50"}))
    steps.append(Step(7200 + end_after, "clear_notification", None, end=True))
    return Scenario("ev", "EV charging 0→100 % (HA's Live Activity docs)", "ev-charging", "EV Charging", steps,
                    f"21 updates, a 5 % step every 360 s (1.2 min/%, as the 'Est. N min remaining' text says), 2 h "
                    f"in all, clear {end_after:g} s after 'Charging complete'")


def ha_body(sc: Scenario, step: Step) -> dict:
    """The body HA's mobile_app posts to a device's push_url: title omitted on the clear."""
    body = {"push_token": PUSH_TOKEN, "registration_info": dict(REGISTRATION_INFO), "message": step.message}
    if step.end:
        body["data"] = {"tag": sc.tag}
    else:
        body["title"] = sc.title
        body["data"] = {"tag": sc.tag, "live_update": True, **step.data}
    return body


# ---- content-state -----------------------------------------------------------------------------------------

def content_state(body: dict) -> dict:
    """What the relay would show from a body: the state keys of `data`, `message` (not the clear command), and
    `data.content_state` overrides (an end carrying a superseded update's state puts its message there)."""
    data = body.get("data") or {}
    out = {k: data[k] for k in STATE_KEYS if k in data}
    msg = body.get("message")
    if msg is not None and msg != "clear_notification":
        out["message"] = msg
    out.update(data.get("content_state") or {})
    return out


def resolved(state: dict, accepted_at: float) -> dict:
    """`when` + `when_relative` as the daemon makes it absolute at acceptance."""
    s = dict(state)
    if s.pop("when_relative", False) and "when" in s:
        s["when"] = accepted_at + float(s["when"])
    return s


def same_state(got: dict, want: dict, when_tolerance: float = 2.0) -> bool:
    if set(got) != set(want):
        return False
    for k, v in want.items():
        if k == "when":
            if abs(float(got[k]) - float(v)) > when_tolerance:
                return False
        elif got[k] != v:
            return False
    return True


# ---- one run -----------------------------------------------------------------------------------------------

@dataclass
class Posted:
    step: Step
    sent_at: float
    latency: float
    status: int


@dataclass
class ScenarioResult:
    name: str
    posted: list = field(default_factory=list)
    relay: list = field(default_factory=list)  # (arrival time, kind, body, answer status)
    figures: dict = field(default_factory=dict)


def post(port: int, body: dict) -> tuple[int, float]:
    """One ingest request on a fresh connection (as HA's aiohttp client may), TCP_NODELAY; returns status, latency."""
    raw = json.dumps(body).encode()
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.connect()
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.request("POST", "/api/sendPushNotification", body=raw, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    latency = time.perf_counter() - t0
    c.close()
    return r.status, latency


def replay(gw, sc: Scenario, t0: float, speed: float, out: ScenarioResult, log) -> None:
    for step in sc.steps:
        at = t0 + step.at / speed
        delay = at - time.time()
        if delay > 0:
            time.sleep(delay)
        sent = time.time()
        try:
            status, latency = post(gw.port, ha_body(sc, step))
        except OSError as e:
            status, latency = 0, float("nan")
            log(f"  ! {sc.name}: POST failed: {e}")
        out.posted.append(Posted(step, sent, latency, status))


def classify(requests) -> list:
    """Relay requests per tag in arrival order, each with its kind: `data.event` when the body has one; otherwise an
    end is the clear command, the first live update of a tag (or the first after an end) a start, the rest updates."""
    live = set()
    out = []
    for r in requests:
        body = r.body if isinstance(r.body, dict) else {}
        data = body.get("data") or {}
        tag = data.get("tag")
        kind = data.get("event")
        if kind not in ("start", "update", "end"):
            if body.get("message") == "clear_notification":
                kind = "end"
            elif data.get("live_update"):
                kind = "update" if tag in live else "start"
            else:
                kind = "notification"
        if kind in ("start", "update"):
            live.add(tag)
        elif kind == "end":
            live.discard(tag)
        out.append((tag, r.at, kind, body, r.answer_status))
    return out


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a small sample."""
    v = sorted(x for x in values if x == x)
    if not v:
        return float("nan")
    k = max(0, min(len(v) - 1, int(-(-q * len(v) // 100)) - 1))
    return v[k]


def figures(sc: Scenario, res: ScenarioResult) -> dict:
    live_posts = [p for p in res.posted if not p.step.end]
    last = live_posts[-1]
    want = resolved(content_state(ha_body(sc, last.step)), last.sent_at)
    kinds = {"start": 0, "update": 0, "end": 0, "notification": 0}
    for _, _, kind, _, _ in res.relay:
        kinds[kind] += 1
    # The last relay request that carries a state (a start/update, or an end carrying a superseded update's state).
    carrying = [(at, kind, body) for _, at, kind, body, status in res.relay
                if status is not None and 200 <= status < 300 and content_state(body)]
    final_ok = bool(carrying) and same_state(content_state(carrying[-1][2]), want)
    reached = next((at for at, kind, body in carrying if at >= last.sent_at - 0.5 and same_state(content_state(body), want)),
                   None)
    codes = {}
    for p in res.posted:
        codes[p.status] = codes.get(p.status, 0) + 1
    lat = [p.latency * 1000 for p in res.posted]
    n_req = sum(kinds.values())
    end_posted = [p for p in res.posted if p.step.end]
    end_at = next((at for _, at, kind, _, _ in res.relay if kind == "end"), None)
    return {
        "updates": len(res.posted),
        "live_updates": len(live_posts),
        "codes": codes,
        "requests": n_req,
        "start": kinds["start"], "update": kinds["update"], "end": kinds["end"], "other": kinds["notification"],
        "ratio": n_req / len(res.posted) if res.posted else float("nan"),
        "final_ok": final_ok,
        "final_delay_s": (reached - last.sent_at) if reached is not None else float("nan"),
        "end_delay_s": (end_at - end_posted[-1].sent_at) if end_at is not None and end_posted else float("nan"),
        "p50_ms": percentile(lat, 50),
        "p99_ms": percentile(lat, 99),
        "failed_answers": sum(1 for *_, s in res.relay if not (s is not None and 200 <= s < 300)),
    }


def relay_config(interval: float | None) -> dict:
    """The relay section of Config/lanpush.yaml (the shipped defaults), upstream pointed at the fake relay later."""
    import yaml  # PyYAML, from Tests/integration/requirements.txt
    cfg = dict((yaml.safe_load((ROOT / "Config" / "lanpush.yaml").read_text()) or {}).get("relay") or {})
    if interval is not None:
        cfg["min_update_interval"] = interval
    return cfg



def one_run(run: int, scenarios: list, args, relay_cfg: dict, log) -> dict:
    with FakeRelay() as relay:
        cfg = dict(relay_cfg, upstream=relay.url)
        gw = gateway_mod.Gateway(devices=("phone",), extra=f"log_level: {args.log_level}\nrelay: {json.dumps(cfg)}\n")
        gw.start()
        try:
            # A phone registers its push_token (its push_url = the fake relay) over lanpush.v1, then closes: gone.
            c = gw.client("phone")
            c.send({"type": "register", "push_token": PUSH_TOKEN, "push_url": relay.ios_url,
                    "registration_info": dict(REGISTRATION_INFO)})
            if not c.pump(lambda c: any(f["type"] == "registered" for f in c.frames)):
                raise RuntimeError("registration not confirmed")
            c.close()
            d = gw.wait_disconnected(timeout=10.0)
            if d.get("path") not in (None, "relay"):
                log(f"  note: device path after close is {d.get('path')!r}")
            results = {sc.name: ScenarioResult(sc.name) for sc in scenarios}
            t0 = time.time() + 0.5
            threads = [threading.Thread(target=replay, args=(gw, sc, t0, args.speed, results[sc.name], log),
                                        name=f"replay-{sc.name}") for sc in scenarios]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            # Wait for every scenario's end (it goes at once) and for any held final update, then a quiet settle.
            deadline = time.time() + float(cfg.get("min_update_interval", 15)) * 2 + 10
            want_ends = sum(1 for sc in scenarios if any(s.end for s in sc.steps))
            try:
                relay.wait_for(want_ends, timeout=max(0.1, deadline - time.time()),
                               predicate=lambda r: isinstance(r.body, dict) and r.body.get("message") == "clear_notification"
                               and r.answer_status is not None)
            except TimeoutError as e:
                log(f"  ! run {run}: {e}")
            time.sleep(args.settle)
            reqs = list(relay.requests)
            per_tag = classify(reqs)
            for sc in scenarios:
                res = results[sc.name]
                res.relay = [x for x in per_tag if x[0] == sc.tag]
                res.figures = figures(sc, res)
            stray = [x for x in per_tag if x[0] not in {sc.tag for sc in scenarios}]
            raw = {
                "run": run,
                "relay_requests": [{"at": r.at, "path": r.path, "status": r.answer_status, "body": r.body} for r in reqs],
                "stray_relay_requests": len(stray),
                "scenarios": {
                    sc.name: {
                        "figures": results[sc.name].figures,
                        "posted": [{"at_real_s": p.step.at, "message": p.step.message, "end": p.step.end,
                                    "sent_at": p.sent_at, "latency_ms": p.latency * 1000, "status": p.status}
                                   for p in results[sc.name].posted],
                        "relay": [{"at": at, "kind": kind, "status": status, "content_state": content_state(body)}
                                  for _, at, kind, body, status in results[sc.name].relay],
                    } for sc in scenarios},
            }
            return raw
        finally:
            gw.stop()
            if args.keep_logs:
                log(f"  run {run}: lanpushd log in {gw.dir / 'lanpushd.log'}")


# ---- report ------------------------------------------------------------------------------------------------

ROWS = [
    ("updates received (ingest requests)", "updates", "{:.0f}"),
    ("  of which live updates (start + updates)", "live_updates", "{:.0f}"),
    ("ingest answers", "codes", None),
    ("relay requests sent", "requests", "{:.0f}"),
    ("  start", "start", "{:.0f}"),
    ("  update", "update", "{:.0f}"),
    ("  end", "end", "{:.0f}"),
    ("relay requests / updates received", "ratio", "{:.2f}"),
    ("final state reached the relay (last state-carrying request)", "final_ok", None),
    ("last update posted → relay has the final state (s)", "final_delay_s", "{:.3f}"),
    ("end posted → relay has the end (s)", "end_delay_s", "{:.3f}"),
    ("ingest answer latency p50 (ms)", "p50_ms", "{:.2f}"),
    ("ingest answer latency p99 (ms)", "p99_ms", "{:.2f}"),
]


def fmt(key, fmtstr, value):
    if key == "codes":
        return ", ".join(f"{n}×{code}" for code, n in sorted(value.items()))
    if key == "final_ok":
        return "yes" if value else "**NO**"
    if isinstance(value, float) and value != value:
        return "—"
    return fmtstr.format(value)


def median_of(key, values):
    if key == "codes":
        merged = {}
        for v in values:
            for code, n in v.items():
                merged.setdefault(code, []).append(n)
        return {code: statistics.median(ns) for code, ns in merged.items()}
    if key == "final_ok":
        return all(values)
    clean = [v for v in values if v == v]
    return statistics.median(clean) if clean else float("nan")


def table(sc: Scenario, runs: list) -> str:
    figs = [r["scenarios"][sc.name]["figures"] for r in runs]
    head = "| figure | median |" + "".join(f" run {i + 1} |" for i in range(len(figs)))
    sep = "|---|---|" + "---|" * len(figs)
    lines = [head, sep]
    for label, key, f in ROWS:
        med = median_of(key, [x[key] for x in figs])
        medtxt = fmt(key, f, med) if key != "final_ok" else ("yes, every run" if med else "**NO** (see runs)")
        lines.append(f"| {label} | {medtxt} |" + "".join(f" {fmt(key, f, x[key])} |" for x in figs))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lanpushd", help=f"daemon binary (default {DEFAULT_BINARY.relative_to(ROOT)}, built if missing)")
    ap.add_argument("--speed", type=float, default=10.0, help="replay speed, × real time (default 10)")
    ap.add_argument("--interval", type=float, default=None,
                    help="relay.min_update_interval in s (default: Config/lanpush.yaml's, 15)")
    ap.add_argument("--runs", type=int, default=3, help="runs, a fresh daemon and relay each (default 3)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at the same time (default 1: one after the other)")
    ap.add_argument("--scenario", choices=["washer", "ev", "both"], default="both")
    ap.add_argument("--end-after", type=float, default=120.0,
                    help="real seconds between the final update and the clear_notification (default 120)")
    ap.add_argument("--settle", type=float, default=3.0, help="s to keep listening after the ends arrived (default 3)")
    ap.add_argument("--log-level", default="info", help="lanpushd log_level (default info, as shipped)")
    ap.add_argument("--keep-logs", action="store_true", help="print where each run's daemon log is")
    ap.add_argument("--markdown", help="also write the tables (markdown) to this file")
    ap.add_argument("--json", help="write every run's raw record (posts, relay requests, figures) to this file")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds-long check: speed 1000, interval 1, 1 run; exit 1 if the final state did not reach the relay")
    args = ap.parse_args(argv)
    if args.smoke:
        args.speed, args.interval, args.runs, args.jobs = 1000.0, 1.0, 1, 1
        args.settle = min(args.settle, 1.0)

    binary = Path(args.lanpushd) if args.lanpushd else DEFAULT_BINARY
    if not binary.exists():
        if args.lanpushd:
            print(f"no lanpushd at {binary}", file=sys.stderr)
            return 2
        print("building: " + " ".join(BUILD_CMD), flush=True)
        subprocess.run(BUILD_CMD, cwd=ROOT, check=True)
    gateway_mod.BINARY = binary.resolve()  # Gateway.start() runs the module's BINARY

    scenarios = [s for s in (washer(args.end_after), ev(args.end_after)) if args.scenario in ("both", s.name)]
    relay_cfg = relay_config(args.interval)
    lock = threading.Lock()

    def log(msg):
        with lock:
            print(msg, flush=True)

    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    longest = max(s.steps[-1].at for s in scenarios) / args.speed
    log(f"relay replay: {', '.join(s.name for s in scenarios)} at {args.speed:g}× real time, {args.runs} run(s), "
        f"{args.jobs} at a time; ~{longest:.0f} s per run{' (smoke scale)' if args.smoke else ''}")
    log(f"lanpushd: {binary} {version}".rstrip())
    log("relay config (Config/lanpush.yaml" + (", --interval" if args.interval is not None else "") + "): "
        + ", ".join(f"{k}={v}" for k, v in relay_cfg.items() if k != "upstream")
        + "; upstream and the device's push_url = a local fake relay (201 + rateLimits)")
    for s in scenarios:
        log(f"timeline {s.name}: {s.timeline}; at {args.speed:g}× the updates are "
            f"{(s.steps[1].at - s.steps[0].at) / args.speed:g} s apart")
    started = time.time()

    def go(i):
        log(f"run {i + 1}: started")
        r = one_run(i + 1, scenarios, args, relay_cfg, log)
        summary = "; ".join(f"{n}: {f['figures']['requests']} relay / {f['figures']['updates']} posted, final "
                            f"{'ok' if f['figures']['final_ok'] else 'MISSING'} after "
                            f"{f['figures']['final_delay_s']:.3f} s" for n, f in r["scenarios"].items())
        log(f"run {i + 1}: done ({summary})")
        return r

    if args.jobs > 1:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = []
            for i in range(args.runs):
                futures.append(pool.submit(go, i))
                time.sleep(1.3)  # staggered, so the runs' posts do not line up to the millisecond
            runs = [f.result() for f in futures]
    else:
        runs = [go(i) for i in range(args.runs)]

    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    md = [f"Relay-path replay ({when}; {args.speed:g}× real time; min_update_interval "
          f"{relay_cfg.get('min_update_interval')} s; {args.runs} run(s), {args.jobs} at a time; medians; "
          f"{time.time() - started:.0f} s wall)", ""]
    for s in scenarios:
        md += [f"### {s.label}", "", f"Timeline: {s.timeline}.", "", table(s, runs), ""]
    text = "\n".join(md)
    print("\n" + text, flush=True)
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(text + "\n")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"args": vars(args), "version": version, "relay_config": relay_cfg,
                                               "runs": runs}, indent=1, default=str))
    ok = all(r["scenarios"][s.name]["figures"]["final_ok"] for r in runs for s in scenarios)
    bad_codes = any(code != 202 for r in runs for s in scenarios for code in r["scenarios"][s.name]["figures"]["codes"])
    if not ok:
        print("FAIL: the final state did not reach the relay in every run", file=sys.stderr)
        return 1
    if bad_codes:
        print("FAIL: an ingest request was not answered 202", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
