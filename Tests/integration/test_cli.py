"""The `lanpush` CLI against the real lanpushd (loopback only): send, watch, status, token, discover, --help.

The CLI binary is `.build/debug/lanpush` (built here if missing), or `$LANPUSH_CLI`. `$LANPUSHD` may point the
gateway fixture at another lanpushd build (e.g. a private scratch dir).
"""
import base64
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

import pytest

import gateway as gateway_module
from gateway import ROOT
from test_pairing import read_qr

CLI = Path(os.environ.get("LANPUSH_CLI") or ROOT / ".build" / "debug" / "lanpush")
if os.environ.get("LANPUSHD"):
    gateway_module.BINARY = Path(os.environ["LANPUSHD"])

# The seed-000 washer cycle as `lanpush send` flags.
WASHER = [
    ["--title", "Washing Machine", "--message", "Cycle started", "--tag", "washer_cycle"],
    ["--title", "Washing Machine", "--message", "Rinsing · 1 of 2", "--tag", "washer_cycle", "--progress", "900",
     "--progress-max", "3600", "--chronometer", "--when", "2700", "--relative", "--icon", "mdi:washing-machine",
     "--icon-color", "#2196F3", "--color", "#2196F3"],
    ["--title", "Washing Machine", "--message", "Cycle complete", "--tag", "washer_cycle", "--progress", "3600",
     "--progress-max", "3600", "--icon", "mdi:washing-machine", "--icon-color", "#4CAF50", "--color", "#4CAF50"],
    ["--tag", "washer_cycle", "--end"],
]
def plain(client):
    """The plain notifications a client got (not the clears a clear_notification also sends)."""
    return [n for n in client.notifications if n["type"] == "notification"]


FINAL_STATE = {"message": "Cycle complete", "title": "Washing Machine", "progress": 3600, "progress_max": 3600, "icon": "mdi:washing-machine",
               "color": "#4CAF50"}


@pytest.fixture(scope="module", autouse=True)
def cli_binary():
    if not CLI.exists():
        subprocess.run(["swift", "build", "--product", "lanpush"], cwd=ROOT, check=True)
    assert CLI.exists(), CLI


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANPUSH_")}
    env.update(extra)
    return env


def lanpush(*args, gw=None, token="admin", input=None, timeout=30, env=None):
    """Runs the CLI to completion; `token` is "admin", "viewer", None or a literal token."""
    cmd = [str(CLI), *args]
    e = clean_env(**(env or {}))
    if gw is not None:
        e["LANPUSH_GATEWAY"] = f"http://127.0.0.1:{gw.port}"
        if token is not None:
            e["LANPUSH_TOKEN"] = {"admin": gw.admin, "viewer": gw.viewer}.get(token, token)
    return subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=timeout, env=e)


def one_error_line(r):
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("lanpush: "), lines[0]
    return lines[0]


class Watch:
    """A running `lanpush watch`, its stdout and stderr collected line by line."""

    def __init__(self, gw, *args, token="admin"):
        e = clean_env(LANPUSH_GATEWAY=f"http://127.0.0.1:{gw.port}")
        if token:
            e["LANPUSH_TOKEN"] = {"admin": gw.admin, "viewer": gw.viewer}.get(token, token)
        self.proc = subprocess.Popen([str(CLI), "watch", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=e)
        self.out, self.err = [], []
        self.threads = [threading.Thread(target=self._pump, args=(s, l), daemon=True)
                        for s, l in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for t in self.threads:
            t.start()

    @staticmethod
    def _pump(stream, lines):
        for line in stream:
            lines.append(line.rstrip("\n"))

    def wait_for(self, predicate, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate(self):
                return True
            time.sleep(0.02)
        return predicate(self)

    def synced(self, n=1, timeout=10):
        assert self.wait_for(lambda w: sum("synced" in l for l in w.err) >= n, timeout), self.err
        return self

    def finish(self, timeout=20):
        rc = self.proc.wait(timeout)
        for t in self.threads:
            t.join(5)
        return rc

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture
def watches():
    started = []
    yield lambda *a, **kw: started.append(Watch(*a, **kw)) or started[-1]
    for w in started:
        w.stop()


def event_lines(lines, kind=None):
    """The event lines (not the indented state lines) of `watch`, as (device, type, rest)."""
    out = []
    for line in lines:
        m = re.match(r"^\d\d:\d\d:\d\d (\S+) (\S+)(.*)$", line)
        if m and (kind is None or m.group(2) == kind):
            out.append((m.group(1), m.group(2), m.group(3).strip()))
    return out


# ---------------------------------------------------------------------------------------------------- help, token

@pytest.mark.parametrize("sub,flags", [
    ([], ["send", "watch", "status", "discover", "token", "LANPUSH_GATEWAY"]),
    (["send"], ["--target", "--tag", "--title", "--message", "--progress", "--progress-max", "--critical-text",
                "--icon", "--color", "--when", "--relative", "--chronometer", "--silent", "--live", "--end",
                "--data", "--file", "--gateway", "--token"]),
    (["watch"], ["--device", "--device-token", "--json", "--count", "--timeout", "--resume", "--gateway", "--token"]),
    (["status"], ["--json", "--gateway", "--token"]),
    (["discover"], ["--timeout", "--json"]),
    (["token"], ["--id", "--name", "--quiet"]),
])
def test_help_of_every_command(sub, flags):
    r = subprocess.run([str(CLI), *sub, "--help"], capture_output=True, text=True, timeout=10, env=clean_env())
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("OVERVIEW:")
    for flag in flags:
        assert flag in r.stdout, (sub, flag)
    if sub:
        assert subprocess.run([str(CLI), "help", *sub], capture_output=True, text=True, timeout=10,
                              env=clean_env()).stdout == r.stdout


def test_token_is_32_random_bytes_in_url_safe_base64_with_a_config_snippet():
    r = subprocess.run([str(CLI), "token", "--id", "kitchen-tablet", "--name", "Kitchen tablet"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    token = lines[0]
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token), token
    assert len(base64.urlsafe_b64decode(token + "=")) == 32
    assert f'  - {{id: kitchen-tablet, name: "Kitchen tablet", token: "{token}"}}' in lines
    assert "devices:" in lines
    tokens = {subprocess.run([str(CLI), "token", "-q"], capture_output=True, text=True, timeout=10).stdout
              for _ in range(5)}
    assert len(tokens) == 5 and all(re.fullmatch(r"[A-Za-z0-9_-]{43}\n", t) for t in tokens)


def test_a_generated_token_authenticates_a_device(gateway):
    token = subprocess.run([str(CLI), "token", "-q"], capture_output=True, text=True, timeout=10).stdout.strip()
    gw = gateway(devices=("phone",))
    gw.stop()
    text = gw.config.read_text().replace(gw.tokens["phone"], token)
    gw.config.write_text(text)
    gw.tokens["phone"] = token
    gw.start()
    c = gw.client("phone")
    assert c.device == "phone"
    c.close()


# ---------------------------------------------------------------------------------------------------------- send

def test_send_live_update_end_and_plain_notification(gateway):
    gw = gateway()
    c = gw.client("phone")
    assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames))

    r = lanpush("send", "--target", "phone", "--target", "tablet", *WASHER[0], gw=gw)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["phone: delivered", "tablet: queued"]
    assert r.stderr == ""
    assert c.pump(lambda c: "washer_cycle" in c.activities)
    start = next(f for f in c.frames if f["type"] == "start")
    assert start["attributes"]["title"] == "Washing Machine" and start["state"] == {"message": "Cycle started", "title": "Washing Machine"}

    for flags in WASHER[1:3]:
        r = lanpush("send", "--target", "phone", *flags, gw=gw)
        assert r.returncode == 0 and r.stdout == "phone: delivered\n", (r.stdout, r.stderr)
    assert c.pump(lambda c: c.state("washer_cycle") == FINAL_STATE)
    rinse = [f for f in c.frames if f["type"] == "update"][0]
    assert rinse["patch"]["progress"] == 900 and rinse["patch"]["chronometer"] is True
    assert abs(rinse["patch"]["countdown_end"] - (time.time() + 2700)) < 30

    # --end is HA's clear_notification: the activity ends and is dismissed at once, as on the phone.
    r = lanpush("send", "--target", "phone", *WASHER[3], gw=gw)
    assert r.returncode == 0, r.stderr
    assert c.pump(lambda c: "washer_cycle" in c.dismissed)
    assert c.dismissed["washer_cycle"]["state"] == FINAL_STATE
    assert c.dismissed["washer_cycle"]["title"] == "Washing Machine"

    # A plain notification (no tag), with JSON-typed --data; every device by default.
    r = lanpush("send", "--title", "Door", "--message", "Front door opened", "--data", "group=doors",
                "--data", "ttl=0", "--data", "push.sound=\"chime\"", "--data", "urgent=true", gw=gw)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["phone: delivered", "tablet: queued"]
    assert c.pump(lambda c: plain(c))
    n = plain(c)[0]
    assert n["title"] == "Door" and n["message"] == "Front door opened"
    assert n["data"]["group"] == "doors" and n["data"]["ttl"] == 0 and n["data"]["urgent"] is True
    assert n["data"]["push"] == {"sound": "chime"}

    # --no-live with a tag is a plain notification that carries the tag.
    r = lanpush("send", "--target", "phone", "--tag", "door", "--no-live", "--message", "knock", gw=gw)
    assert r.returncode == 0, r.stderr
    assert c.pump(lambda c: len(plain(c)) == 2)
    assert plain(c)[1]["data"]["tag"] == "door" and "door" not in c.activities
    c.close()


def test_send_file_and_stdin(gateway, tmp_path):
    gw = gateway()
    payload = {"targets": ["tablet"], "title": "Dishwasher", "message": "Washing",
               "data": {"tag": "dishwasher", "live_update": True, "progress": 10, "progress_max": 100,
                        "notification_icon": "mdi:dishwasher"}}
    f = tmp_path / "payload.json"
    f.write_text(json.dumps(payload))
    r = lanpush("send", "--file", str(f), gw=gw)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "tablet: queued\n"
    status, body = gw.get("/v1/activities/dishwasher")
    assert status == 200
    [a] = body["activities"]
    assert a["device_id"] == "tablet" and a["attributes"]["title"] == "Dishwasher"
    assert a["state"] == {"message": "Washing", "title": "Dishwasher", "progress": 10, "progress_max": 100, "icon": "mdi:dishwasher"}

    # From stdin, with flags applied on top of the file; --json prints the gateway's answer.
    r = lanpush("send", "--file", "-", "--progress", "50", "--json", gw=gw, input=json.dumps(payload))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"results": [{"target": "tablet", "result": "queued"}]}
    _, body = gw.get("/v1/activities/dishwasher")
    assert body["activities"][0]["state"]["progress"] == 50


def test_send_stream_of_lines(gateway, tmp_path):
    gw = gateway()
    c = gw.client("phone")
    assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames))

    def update(message, **data):
        return json.dumps({"targets": ["phone"], "title": "Washer", "message": message,
                           "data": {"tag": "washer", "live_update": True, **data}})

    f = tmp_path / "updates.jsonl"
    f.write_text("\n".join([
        update("Washing", progress=1), update("Rinsing", progress="lots"), "",
        json.dumps({"targets": ["ghost"], "message": "x"}), update("Spinning", progress=3), ""]))
    r = lanpush("send", "--stream", str(f), gw=gw)
    # A rejected line is named (its line in the file, field and rule) and fails the command; the others are applied.
    assert r.returncode == 1, r.stderr
    assert r.stdout == "2 of 4 accepted, 2 rejected\n"
    err = r.stderr.splitlines()
    assert len(err) == 3 and err[2] == "lanpush: 2 of 4 lines rejected", r.stderr
    assert err[0].startswith("line 2: rejected: data.progress") and err[0].endswith("(data.progress/type)")
    assert err[1] == "line 4: rejected: targets: no such device (targets/exists)"
    assert c.pump(lambda c: c.activities.get("washer", {}).get("state", {}).get("message") == "Spinning"), c.frames
    assert gw.get("/v1/activities/washer")[1]["activities"][0]["state"]["progress"] == 3

    # More lines than the gateway's window: pipelined, all accepted, applied in order.
    r = lanpush("send", "--stream", "-", gw=gw, input="".join(update("Bulk", progress=i) + "\n" for i in range(3000)))
    assert r.returncode == 0 and r.stdout == "3000 of 3000 accepted\n", r.stderr
    # On the publisher's own subprotocol, which the gateway reads in large pieces (a session's is read ~500 B a turn).
    opened = [l for l in gw.logtext().splitlines() if "publisher session opened" in l]
    assert opened and all("subprotocol=lanpush.publisher" in l for l in opened), opened
    assert gw.get("/v1/activities/washer")[1]["activities"][0]["state"]["progress"] == 2999

    # stdin and --json: every answer frame, the last one accepting every line.
    r = lanpush("send", "--stream", "-", "--json", gw=gw, input=update("Done", progress=4) + "\n")
    assert r.returncode == 0, r.stderr
    assert [json.loads(l) for l in r.stdout.splitlines()][-1] == {"type": "accepted", "through": 1}

    # A line that is not a JSON object stops everything before anything is sent.
    f.write_text(update("Never", progress=9) + "\n{nope\n")
    r = lanpush("send", "--stream", str(f), gw=gw)
    assert r.returncode != 0 and f"{f}:2:" in one_error_line(r)
    assert gw.get("/v1/activities/washer")[1]["activities"][0]["state"]["progress"] == 4
    # Only the admin token publishes; body flags do not mix with --stream.
    r = lanpush("send", "--stream", "-", gw=gw, token="viewer", input=update("x") + "\n")
    assert r.returncode != 0 and "needs the admin token" in one_error_line(r)
    r = lanpush("send", "--stream", "-", "--tag", "x", gw=gw, input=update("x") + "\n")
    assert r.returncode != 0 and "exclude each other" in one_error_line(r)


def test_send_errors_are_one_line_and_a_nonzero_exit(gateway, tmp_path):
    gw = gateway()
    # The gateway's 400, with its message.
    r = lanpush("send", "--tag", "bad tag!", "--message", "x", gw=gw)
    assert r.returncode != 0 and r.stdout == ""
    line = one_error_line(r)
    assert "400" in line and "data.tag" in line
    # No such device: 404 with the server's message.
    r = lanpush("send", "--target", "ghost", "--message", "x", gw=gw)
    assert r.returncode != 0
    assert "404" in one_error_line(r) and "no such device" in r.stderr
    # Wrong token, viewer token, no token.
    r = lanpush("send", "--message", "x", gw=gw, token="not-a-token")
    assert r.returncode != 0 and "401" in one_error_line(r) and "invalid token" in r.stderr
    r = lanpush("send", "--message", "x", gw=gw, token="viewer")
    assert r.returncode != 0 and "viewer token cannot write" in one_error_line(r)
    r = lanpush("send", "--message", "x", gw=gw, token=None)
    assert r.returncode != 0 and "LANPUSH_TOKEN" in one_error_line(r)
    # Usage errors: one line too (not ArgumentParser's usage block).
    for args in (["--progress", "many"], ["--end"], ["--relative"], ["--data", "novalue"], ["--bogus"]):
        r = lanpush("send", *args, gw=gw)
        assert r.returncode != 0, args
        one_error_line(r)
    # Unreadable or invalid file.
    r = lanpush("send", "--file", str(tmp_path / "missing.json"), gw=gw)
    assert r.returncode != 0 and "cannot read" in one_error_line(r)
    (tmp_path / "bad.json").write_text("{nope")
    r = lanpush("send", "--file", str(tmp_path / "bad.json"), gw=gw)
    assert r.returncode != 0 and "bad.json" in one_error_line(r)
    # Nothing listening.
    gw.stop()
    r = lanpush("send", "--message", "x", gw=gw)
    assert r.returncode != 0 and "cannot reach the gateway" in one_error_line(r)


# --------------------------------------------------------------------------------------------------------- watch

def check_washer_output(lines, device):
    kinds = [(d, k) for d, k, _ in event_lines(lines) if k in ("start", "update", "end")]
    assert kinds == [(device, "start"), (device, "update"), (device, "update"), (device, "end")], lines
    start = event_lines(lines, "start")[0][2]
    assert start.startswith("washer_cycle #") and 'title="Washing Machine"' in start and 'message="Cycle started"' in start
    rinse = event_lines(lines, "update")[0][2]
    assert "progress=900" in rinse and "icon=mdi:washing-machine" in rinse and "chronometer=true" in rinse
    # After every change, the current state of the activity; the last one is the final state.
    states = [l for l in lines if l.startswith(f"  {device}/washer_cycle ")]
    assert len(states) >= 4
    assert states[0] == f"  {device}/washer_cycle [active] Washing Machine: Cycle started"
    assert "[active] Washing Machine: timer to " in states[1] and "(Rinsing · 1 of 2) | 900/3600 (25%)" in states[1]
    assert states[-1] == (f"  {device}/washer_cycle [ended] Washing Machine: Cycle complete | 3600/3600 (100%) | "
                          "color=#4CAF50 icon=mdi:washing-machine")


def test_watch_as_observer_sees_the_washer_cycle(gateway, watches):
    gw = gateway()
    w = watches(gw, "--device", "phone", "--count", "4", "--timeout", "20").synced()
    assert any("as observer of device phone" in l for l in w.err)
    for flags in WASHER:
        assert lanpush("send", "--target", "phone", *flags, gw=gw).returncode == 0
    assert w.finish() == 0, w.err
    check_washer_output(w.out, "phone")
    # An observer never makes the device count as connected.
    _, body = gw.get("/v1/devices")
    assert {d["id"]: d["sessions"] for d in body["devices"]}["phone"] == 0


def test_watch_as_observer_of_every_device_with_the_viewer_token(gateway, watches):
    gw = gateway()
    w = watches(gw, "--count", "2", "--timeout", "20", token="viewer").synced(2)
    r = lanpush("send", *WASHER[0], gw=gw)
    assert sorted(r.stdout.splitlines()) == ["phone: queued", "tablet: queued"]
    assert w.finish() == 0, w.err
    assert sorted(d for d, _, _ in event_lines(w.out, "start")) == ["phone", "tablet"]
    assert "  phone/washer_cycle [active] Washing Machine: Cycle started" in w.out
    assert "  tablet/washer_cycle [active] Washing Machine: Cycle started" in w.out


def test_watch_as_device_acks_and_resumes(gateway, watches):
    gw = gateway()
    # `--device-token=T`, not `--device-token T`: a generated token that starts with '-' would read as an option.
    # Six events: the washer's start, two updates and end, the clear its clear_notification makes, the notification.
    w = watches(gw, f"--device-token={gw.tokens['phone']}", "--count", "6", "--timeout", "20").synced()
    assert any("as device phone" in l for l in w.err)
    for flags in WASHER:
        r = lanpush("send", "--target", "phone", *flags, gw=gw)
        assert r.stdout == "phone: delivered\n", r.stdout  # the watch counts as the device's session
    lanpush("send", "--target", "phone", "--title", "Door", "--message", "Front door opened", gw=gw)
    assert w.finish() == 0, w.err
    check_washer_output(w.out, "phone")
    assert len(event_lines(w.out, "notification")) == 1
    resume = [l for l in w.err if l.startswith("resume point: --resume ")]
    assert resume, w.err
    point = resume[-1].split("--resume ")[1]
    epoch, seq = point.rsplit(":", 1)
    assert int(seq) == 6

    # Every frame was acknowledged: the queued notification is gone, and a resume from that point gets nothing
    # but the sync; the final state is still there for a fresh watcher.
    _, body = gw.get("/v1/devices")
    phone = {d["id"]: d for d in body["devices"]}["phone"]
    assert phone["queued_notifications"] == 0 and phone["seq"] == 6
    w2 = watches(gw, f"--device-token={gw.tokens['phone']}", "--resume", point, "--timeout", "2").synced()
    assert w2.finish() == 0
    assert event_lines(w2.out) == [] or all(k == "replay" for _, k, _ in event_lines(w2.out)), w2.out
    lanpush("send", "--target", "phone", "--tag", "washer_cycle", "--message", "Again", "--title", "Washer 2", gw=gw)
    w3 = watches(gw, f"--device-token={gw.tokens['phone']}", "--resume", point, "--count", "1", "--timeout", "10")
    assert w3.finish() == 0, w3.err
    [(_, kind, rest)] = [e for e in event_lines(w3.out) if e[1] != "replay"]
    assert kind == "start" and rest.startswith("washer_cycle #7") and 'title="Washer 2"' in rest


def test_watch_json_prints_the_raw_frames(gateway, watches):
    gw = gateway()
    w = watches(gw, "--json", "--device", "tablet", "--count", "1", "--timeout", "20").synced()
    lanpush("send", "--target", "tablet", *WASHER[0], gw=gw)
    assert w.finish() == 0, w.err
    frames = [json.loads(l) for l in w.out]
    assert [f["type"] for f in frames[:-1]] == ["auth_required", "auth_ok", "snapshot", "synced"]
    assert frames[1]["version"] == "lanpush.v2"
    # As received: lanpush.v2's start is an array, the observer's device in its extras.
    kind, seq, tag, state, extras = frames[-1]
    assert (kind, tag, state) == ("start", "washer_cycle", {"message": "Cycle started", "title": "Washing Machine"}), frames[-1]
    assert isinstance(seq, int) and extras["device_id"] == "tablet" and extras["attributes"]["title"], frames[-1]


def test_watch_exits_when_the_gateway_closes_and_on_sigterm(gateway, watches):
    gw = gateway()
    w = watches(gw).synced(2)
    gw.stop()
    assert w.finish(10) == 0
    assert any("closed the connection (1001" in l for l in w.err), w.err

    gw.start()
    w = watches(gw).synced(2)
    t0 = time.time()
    w.proc.terminate()
    assert w.finish(10) == 0
    assert time.time() - t0 < 3


def test_watch_failures_are_one_line_and_nonzero(gateway, watches):
    gw = gateway()
    for args, token, needle in [
        ([], "not-a-token", "authentication failed: invalid token"),
        (["--device-token", "not-a-token"], None, "authentication failed: invalid token"),
        (["--device", "ghost"], "admin", "authentication failed: unknown device 'ghost'"),
        ([], None, "LANPUSH_TOKEN"),
    ]:
        w = watches(gw, "--timeout", "10", *args, token=token)
        assert w.finish(15) == 1, (args, w.err)
        [line] = [l for l in w.err if l.startswith("lanpush: ")]
        assert needle in line, (args, w.err)
    # --count not reached within --timeout.
    w = watches(gw, "--count", "3", "--timeout", "1")
    assert w.finish(10) == 1
    assert any("timed out after 1 s: saw 0 of 3 events" in l for l in w.err), w.err
    # Nothing listening.
    gw.stop()
    w = watches(gw, "--timeout", "10")
    assert w.finish(15) == 1
    assert any(l.startswith("lanpush: cannot connect to ws://127.0.0.1:") for l in w.err), w.err


def tls_gateway(gateway):
    """A gateway serving https/wss only (but to this host) with its self-signed certificate: the gateway, the
    certificate's SHA-256 as the pairing URL carries it, the same with colons in upper case, a fingerprint that
    differs in one digit, and the CLI's environment for it."""
    gw = gateway(extra="tls: {enabled: true, plain: false}\n")
    status, made = gw.request("POST", "/v1/pairings", {"device": "kitchen"}, gw.admin_headers())
    assert status == 201, made
    fp = re.search(r"[?&]fp=([0-9a-f]{64})", made["url"]).group(1)
    colons = ":".join(fp[i:i + 2] for i in range(0, 64, 2)).upper()
    wrong = ("0" if fp[0] != "0" else "1") + fp[1:]
    return gw, fp, colons, wrong, {"LANPUSH_GATEWAY": f"https://127.0.0.1:{gw.port}", "LANPUSH_TOKEN": gw.admin}


def test_watch_and_send_stream_pin_the_gateways_own_certificate(gateway):
    """wss:// to a gateway with its self-signed certificate: --fingerprint pins it (any case, colons allowed), another
    fingerprint gets nothing through, and with neither --fingerprint nor --insecure the CA check refuses it."""
    gw, fp, colons, wrong, wss = tls_gateway(gateway)

    def body(message):
        return json.dumps({"targets": ["phone"], "title": "Oven", "message": message,
                           "data": {"tag": "oven", "live_update": True}}) + "\n"

    def oven():
        return gw.get("/v1/activities/oven")[1]["activities"][0]["state"]["message"]

    r = lanpush("send", "--stream", "-", "--fingerprint", colons, input=body("Preheating"), env=wss)
    assert r.returncode == 0 and r.stdout == "1 of 1 accepted\n", r.stderr
    assert oven() == "Preheating"
    for flags in (["--fingerprint", wrong], []):
        r = lanpush("send", "--stream", "-", *flags, input=body("Never"), env=wss)
        assert r.returncode == 1 and "TLS handshake failed" in one_error_line(r), (flags, r.stderr)
    assert oven() == "Preheating"

    r = lanpush("watch", "--fingerprint", fp, "--timeout", "3", env=wss)
    assert r.returncode == 0, r.stderr
    assert any(l.strip().startswith("phone/oven [active] Oven: Preheating") for l in r.stdout.splitlines()), r.stdout
    r = lanpush("watch", "--fingerprint", wrong, "--timeout", "10", env=wss)
    assert r.returncode == 1 and "TLS handshake failed" in r.stderr, r.stderr

    for flags, needle in [(["--fingerprint", fp, "--insecure"], "--fingerprint and --insecure exclude each other"),
                          (["--fingerprint", fp[1:]], "not a SHA-256 (64 hex digits)")]:
        r = lanpush("watch", *flags, env=wss)
        assert r.returncode != 0 and needle in r.stderr, (flags, r.stderr)


def test_plain_http_commands_pin_the_gateways_own_certificate(gateway):
    """send, status, device and pair over https:// to a gateway with its self-signed certificate: --fingerprint pins
    it (any case, colons allowed), --insecure skips the check; another fingerprint, and neither flag (the CA check),
    get nothing through: no request reaches the gateway, whose state stays as it was."""
    gw, fp, colons, wrong, https = tls_gateway(gateway)
    refused = (["--fingerprint", wrong], [])

    def send(message, *flags):
        return lanpush("send", "--target", "phone", "--tag", "oven", "--title", "Oven", "--message", message, "--live",
                       *flags, env=https)

    def oven():
        return gw.get("/v1/activities/oven")[1]["activities"][0]["state"]["message"]

    def device_ids():
        return sorted(d["id"] for d in gw.get("/v1/devices")[1]["devices"])

    r = send("Preheating", "--fingerprint", colons)
    assert r.returncode == 0, r.stderr
    assert oven() == "Preheating"
    for flags in refused:
        r = send("Never", *flags)
        assert r.returncode == 1 and "TLS handshake failed" in one_error_line(r), (flags, r.stderr)
    assert oven() == "Preheating"
    assert send("Baking", "--insecure").returncode == 0
    assert oven() == "Baking"

    r = lanpush("status", "--json", "--fingerprint", fp, env=https)
    assert r.returncode == 0, r.stderr
    assert [a["tag"] for a in json.loads(r.stdout)["activities"]] == ["oven"]
    for flags in refused:
        r = lanpush("status", *flags, env=https)
        assert r.returncode == 1 and "TLS handshake failed" in one_error_line(r), (flags, r.stderr)

    before = device_ids()
    for flags in refused:
        r = lanpush("device", "add", "garage", *flags, env=https)
        assert r.returncode == 1 and "TLS handshake failed" in one_error_line(r), (flags, r.stderr)
    assert device_ids() == before
    r = lanpush("device", "add", "garage", "--fingerprint", fp, env=https)
    assert r.returncode == 0, r.stderr
    assert device_ids() == sorted(before + ["garage"])

    r = lanpush("pair", "garage", "--no-qr", "--fingerprint", fp, env=https)
    assert r.returncode == 0, r.stderr
    assert f"fp={fp}" in r.stdout.splitlines()[0]
    r = lanpush("pair", "garage", "--no-qr", "--fingerprint", wrong, env=https)
    assert r.returncode == 1 and "TLS handshake failed" in one_error_line(r), r.stderr


def test_pair_for_the_scripting_app_prints_its_run_url_with_the_pairing_inside(gateway):
    """`lanpush pair --scripting`: the QR code an iPhone's Camera opens into the Scripting script —
    `scripting://run/NAME?pair=…`, the pairing URL whole in `pair`, escaped as JavaScript's encodeURIComponent
    escapes it (what the script's own builder writes) — then the pairing URL and the short code as usual."""
    gw = gateway()
    for flags, name in ((["--scripting"], "lanpush"), (["--scripting", "--script-name", "lanpush home"], "lanpush home")):
        r = lanpush("pair", "iphone", *flags, gw=gw)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.rstrip("\n").split("\n")
        run = next(line for line in lines if line.startswith("scripting://"))
        pairing = next(line for line in lines if line.startswith("lanpush://"))
        assert lines.index(pairing) == lines.index(run) + 1 and lines[-1].startswith("code: ")
        assert read_qr(lines[:lines.index(run)]) == run, "the QR code is the run URL"
        assert run == f"scripting://run/{quote(name, safe=ENCODE_URI_COMPONENT_KEEPS)}?pair={quote(pairing, safe=ENCODE_URI_COMPONENT_KEEPS)}"
        parts = urlsplit(run)
        assert unquote(parts.path) == f"/{name}" and parse_qs(parts.query) == {"pair": [pairing]}
    r = lanpush("pair", "iphone", "--script-name", "x", gw=gw)
    assert r.returncode != 0 and "--script-name goes with --scripting" in r.stderr


# What JavaScript's encodeURIComponent leaves as it is (ECMA-262, "encodeURIComponent"): the unreserved marks.
ENCODE_URI_COMPONENT_KEEPS = "-_.!~*'()"


# -------------------------------------------------------------------------------------------------------- status

def test_status_lists_devices_and_activities(gateway):
    gw = gateway()
    c = gw.client("phone")
    assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames))
    for flags in WASHER[:2]:
        assert lanpush("send", "--target", "phone", *flags, gw=gw).returncode == 0
    assert lanpush("send", "--target", "tablet", "--tag", "dryer", "--title", "Dryer", "--message", "Drying",
                   "--critical-text", "40 min", gw=gw).returncode == 0
    r = lanpush("status", gw=gw, token="viewer")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "Devices (2):"
    assert re.match(r"^  ID\s+NAME\s+SESSIONS\s+PATH\s+ACTIVITIES\s+LAST SEEN$", lines[1])
    assert re.match(r"^  phone\s+Phone\s+1\s+lan\s+1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(\d+s ago\)$", lines[2]), lines[2]
    assert re.match(r"^  tablet\s+Tablet\s+0\s+none\s+1\s+never$", lines[3]), lines[3]
    assert lines[4] == "Activities (2):"
    assert re.match(r"^  DEVICE\s+TAG\s+PHASE\s+TITLE\s+MESSAGE / PROGRESS$", lines[5])
    assert re.match(r"^  phone\s+washer_cycle\s+active\s+Washing Machine\s+timer to \d\d:\d\d:\d\d \(Rinsing · 1 of 2\)"
                    r" \| 900/3600 \(25%\) \| color=#2196F3 icon=mdi:washing-machine$", lines[6]), lines[6]
    assert re.match(r"^  tablet\s+dryer\s+active\s+Dryer\s+Drying \| critical: 40 min$", lines[7]), lines[7]

    r = lanpush("status", "--json", gw=gw)
    body = json.loads(r.stdout)
    assert [d["id"] for d in body["devices"]] == ["phone", "tablet"]
    assert {a["tag"] for a in body["activities"]} == {"washer_cycle", "dryer"}

    r = lanpush("status", gw=gw, token="nope")
    assert r.returncode != 0 and "401" in one_error_line(r)
    c.close()


# ------------------------------------------------------------------------------------------------------ discover

def test_discover_answers_within_its_timeout():
    """Discovery itself is tested in network namespaces (test_discovery.py). Here: in the root namespace, where
    no avahi-daemon is meant to run, `discover` ends within its timeout, with either one clear error line (daemon
    or D-Bus unreachable) or well-formed result lines."""
    t0 = time.time()
    r = subprocess.run([str(CLI), "discover", "--timeout", "2"], capture_output=True, text=True, timeout=20,
                       env=clean_env())
    assert time.time() - t0 < 6
    if r.returncode != 0:
        line = one_error_line(r)
        assert "avahi-daemon is not reachable" in line, line
        assert r.stdout == ""
    else:
        for line in r.stdout.splitlines():
            assert re.match(r"^.+  \S+:\d+  wss?://\S+(  .*)?$", line), line
