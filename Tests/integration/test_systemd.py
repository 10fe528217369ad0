"""lanpushd as a systemd service: scripts/install, the unit, and the sd_notify protocol.

There is no systemd running here (it is not PID 1), so the unit is checked the ways that work without one:

- `scripts/install --destdir ROOT` into a temporary root, next to a copy of the system's own units, then
  `systemd-analyze verify --root=ROOT` (clean: no output at all) and `systemd-analyze --offline=true --root=ROOT
  security` (exposure <= 2.0, "OK"); `systemctl --root=ROOT enable` links it into multi-user.target.
- The sandbox the unit asks for is re-created with seccomp (the installed unit's own SystemCallFilter=,
  RestrictAddressFamilies=, MemoryDenyWriteExecute=, LimitNOFILE=, UMask= and a non-root user) and the daemon
  must still come up, serve a device and stop cleanly under it; strace shows it touches only what ProtectSystem=,
  ProcSubset= and PrivateTmp= leave it.
- The notify protocol is tested against the daemon itself: the test is the $NOTIFY_SOCKET listener.
- Besides the debug build, `scripts/install` also builds as it does for the README's `sudo ./scripts/install`
  (release, Swift runtime linked in, ~3 minutes from scratch; staged with --destdir), and that binary goes
  through verify, notify and the sandbox too: optimized builds have failed where debug ones passed.
  LANPUSH_SKIP_RELEASE_BUILD=1 leaves it out; `./scripts/test` sets it (the build takes tens of minutes on a slow
  machine) and `scripts/test-long release-install` runs these tests.

    .venv-test/bin/python -m pytest -v Tests/integration/test_systemd.py
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import pwd
import queue
import re
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import websockets.sync.client as wsclient

from gateway import free_port, stop_traced

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "scripts" / "install"
UNIT_SOURCE = ROOT / "systemd" / "lanpushd.service"
SYSTEM_UNITS = Path("/usr/lib/systemd/system")


def _scratch() -> Path:
    return (ROOT / os.environ.get("LANPUSH_SCRATCH_PATH", ".build")).resolve()


@pytest.fixture(scope="module")
def lanpushd() -> Path:
    """The lanpushd under test: $LANPUSHD_BINARY, else the debug build (built when missing)."""
    explicit = os.environ.get("LANPUSHD_BINARY")
    path = Path(explicit) if explicit else _scratch() / "debug" / "lanpushd"
    if not explicit and (os.environ.get("LANPUSH_REBUILD") or not path.exists()):
        subprocess.run(["swift", "build", "--scratch-path", str(_scratch()), "--product", "lanpushd"], cwd=ROOT,
                       check=True, timeout=1800)
    assert path.exists(), f"{path} not found"
    return path


def install(root: Path, binary: Path, *extra: str) -> subprocess.CompletedProcess:
    result = subprocess.run([str(INSTALL), "--destdir", str(root), "--binary", str(binary), *extra],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def add_system_units(root: Path) -> None:
    """verify --root resolves every unit under ROOT: give it the machine's own (sysinit.target, ...)."""
    target = root / "usr" / "lib" / "systemd" / "system"
    if not target.exists():
        shutil.copytree(SYSTEM_UNITS, target, symlinks=True)


def systemd_analyze(*args: str) -> subprocess.CompletedProcess:
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze is missing: run scripts/setup --test (Debian package systemd)")
    return subprocess.run(["systemd-analyze", *args], capture_output=True, text=True, timeout=60)


def parse_unit(path: Path) -> dict[str, list[str]]:
    """"Section.Key" -> every value in order (systemd allows repeated keys)."""
    values: dict[str, list[str]] = {}
    section = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        values.setdefault(f"{section}.{key.strip()}", []).append(value.strip())
    return values


def words(unit: dict[str, list[str]], key: str) -> list[str]:
    return [w for v in unit.get(key, []) for w in v.split()]


@pytest.fixture(scope="module")
def installed(lanpushd, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("root")
    install(root, lanpushd)
    add_system_units(root)
    return root


@pytest.fixture(scope="module")
def installed_release(tmp_path_factory) -> Path:
    """`scripts/install` exactly as the README runs it (it builds release with --static-swift-stdlib), staged in a
    temporary root. LANPUSH_SKIP_RELEASE_BUILD=1 skips these tests for a quick local run."""
    if os.environ.get("LANPUSH_SKIP_RELEASE_BUILD"):
        pytest.skip("LANPUSH_SKIP_RELEASE_BUILD is set")
    root = tmp_path_factory.mktemp("release-root")
    result = subprocess.run([str(INSTALL), "--destdir", str(root)], capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    add_system_units(root)
    return root


# --------------------------------------------------------------------------------------------------
# scripts/install, systemd-analyze verify / security


def test_install_lays_out_binary_unit_and_config(installed: Path, lanpushd: Path):
    binary = installed / "usr/local/bin/lanpushd"
    unit = installed / "etc/systemd/system/lanpushd.service"
    config = installed / "etc/lanpush/lanpush.yaml"
    assert binary.read_bytes() == lanpushd.read_bytes()
    assert os.access(binary, os.X_OK)
    assert unit.read_text() == UNIT_SOURCE.read_text()  # default prefix: the unit as committed
    assert unit.stat().st_mode & 0o777 == 0o644
    assert config.read_text() == (ROOT / "Config/lanpush.yaml").read_text()
    assert config.stat().st_mode & 0o777 == 0o600, "the config can hold device tokens: root-only"
    assert (installed / "usr/local/share/doc/lanpush/lanpush.yaml.example").exists()
    # The installed config is one the installed binary accepts (what ExecStartPre= checks).
    check = subprocess.run([str(binary), "--check-config", "--config", str(config)], capture_output=True,
                           text=True, timeout=30)
    assert check.returncode == 0 and "configuration OK" in check.stdout, check.stdout + check.stderr


def test_reinstall_keeps_an_edited_config(lanpushd: Path, tmp_path: Path):
    install(tmp_path, lanpushd)
    config = tmp_path / "etc/lanpush/lanpush.yaml"
    config.write_text('listen: "0.0.0.0:9999"\n')
    (tmp_path / "usr/local/bin/lanpushd").write_bytes(b"old")
    result = install(tmp_path, lanpushd)
    assert config.read_text() == 'listen: "0.0.0.0:9999"\n', "install overwrote the admin's config"
    assert "kept the existing /etc/lanpush/lanpush.yaml" in result.stdout
    assert (tmp_path / "usr/local/bin/lanpushd").read_bytes() == lanpushd.read_bytes(), "binary not updated"


def test_install_rejects_bad_arguments(lanpushd: Path, tmp_path: Path):
    for argv in (["--prefix", "relative/path"], ["--frobnicate"], ["--binary", str(tmp_path / "nope")]):
        result = subprocess.run([str(INSTALL), "--destdir", str(tmp_path), *argv], capture_output=True, text=True,
                                timeout=60)
        assert result.returncode != 0, argv
        assert result.stderr.startswith("install: "), result.stderr
    assert not (tmp_path / "etc").exists(), "a rejected install must not write anything"


def test_verify_is_clean(installed: Path):
    result = systemd_analyze("verify", f"--root={installed}", "lanpushd.service")
    assert result.returncode == 0 and result.stdout == "" and result.stderr == "", result.stdout + result.stderr


def test_release_install_verifies_clean(installed_release: Path):
    assert (installed_release / "etc/systemd/system/lanpushd.service").read_text() == UNIT_SOURCE.read_text()
    result = systemd_analyze("verify", f"--root={installed_release}", "lanpushd.service")
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stdout + result.stderr


def test_release_install_lays_out_the_ordered_functions_first(installed_release: Path):
    """The release link lays the functions of scripts/lanpushd.order out first (what keeps the daemon's resident code
    small: docs/BENCHMARKS.md, "Baseline memory"). The list goes stale as code changes (a name that is gone is
    skipped): when a fifth of it no longer names a function of the binary, regenerate it with scripts/order-file."""
    binary = installed_release / "usr/local/bin/lanpushd"
    nm = subprocess.run(["nm", "--defined-only", str(binary)], capture_output=True, text=True, check=True).stdout
    address = {}
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            address.setdefault(parts[2], int(parts[0], 16))
    order = (ROOT / "scripts" / "lanpushd.order").read_text().split()
    found = [address[name] for name in order if name in address]
    assert len(found) >= 0.8 * len(order), f"only {len(found)} of {len(order)} names: run scripts/order-file"
    # Laid out first: the hot swift_retain sits below nearly every other function of the binary.
    text = sorted(address.values())
    rank = text.index(address["swift_retain"]) / len(text)
    assert rank < 0.1, f"swift_retain at {rank:.0%} of the functions: the order was not applied"


def test_verify_really_checks_the_installed_unit(installed: Path, tmp_path: Path):
    """Negative controls: the clean result above is not verify looking somewhere else."""
    root = tmp_path / "root"
    shutil.copytree(installed, root, symlinks=True)
    (root / "usr/local/bin/lanpushd").unlink()
    result = systemd_analyze("verify", f"--root={root}", "lanpushd.service")
    assert "/usr/local/bin/lanpushd is not executable" in result.stderr, result.stderr
    (root / "usr/local/bin/lanpushd").write_text("#!/bin/sh\n")
    (root / "usr/local/bin/lanpushd").chmod(0o755)
    unit = root / "etc/systemd/system/lanpushd.service"
    unit.write_text(unit.read_text().replace("UMask=0077", "UMask=0077\nNoSuchSetting=1"))
    result = systemd_analyze("verify", f"--root={root}", "lanpushd.service")
    assert "Unknown key 'NoSuchSetting'" in result.stderr, result.stderr


def test_install_with_another_prefix(lanpushd: Path, tmp_path: Path):
    install(tmp_path, lanpushd, "--prefix", "/opt/lanpush")
    add_system_units(tmp_path)
    unit = parse_unit(tmp_path / "etc/systemd/system/lanpushd.service")
    assert unit["Service.ExecStart"] == ["/opt/lanpush/bin/lanpushd --config %d/lanpush.yaml"]
    assert unit["Service.ExecStartPre"] == ["/opt/lanpush/bin/lanpushd --check-config --config %d/lanpush.yaml"]
    assert (tmp_path / "opt/lanpush/bin/lanpushd").exists()
    result = systemd_analyze("verify", f"--root={tmp_path}", "lanpushd.service")
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stdout + result.stderr


EXPOSURE = re.compile(r"Overall exposure level for lanpushd\.service: (\d+\.\d+) (\S+)")


def test_security_exposure_is_ok(installed: Path):
    result = systemd_analyze("--offline=true", f"--root={installed}", "security", "lanpushd.service")
    assert result.returncode == 0, result.stdout + result.stderr
    match = EXPOSURE.search(result.stdout)
    assert match, result.stdout[-2000:]
    level, label = float(match.group(1)), match.group(2)
    assert level <= 2.0 and label == "OK", f"exposure {level} {label}\n{result.stdout}"
    # The same bar as systemd's own exit code (threshold is in tenths: 20 = 2.0).
    gate = systemd_analyze("--offline=true", f"--root={installed}", "--threshold=20", "security", "lanpushd.service")
    assert gate.returncode == 0, gate.stdout[-1500:]


def test_unit_contract(installed: Path):
    unit = parse_unit(installed / "etc/systemd/system/lanpushd.service")
    one = {k: v[-1] for k, v in unit.items()}
    assert one["Service.Type"] == "notify"
    assert one["Service.NotifyAccess"] == "main"
    assert re.fullmatch(r"\d+s", one["Service.WatchdogSec"]) and int(one["Service.WatchdogSec"][:-1]) >= 10
    assert one["Service.Restart"] == "on-failure"
    # A config error (lanpushd exits 64, test below) or an unusable state database (3) is not restarted.
    assert set(one["Service.RestartPreventExitStatus"].split()) == {"64", "3"}
    assert one["Service.DynamicUser"] == "yes"
    assert one["Service.StateDirectory"] == "lanpush"
    assert one["Service.ConfigurationDirectory"] == "lanpush"
    assert one["Service.LoadCredential"] == "lanpush.yaml:/etc/lanpush/lanpush.yaml"
    assert "--state-dir" not in one["Service.ExecStart"], "lanpushd takes $STATE_DIRECTORY itself"
    assert int(one["Service.LimitNOFILE"]) >= 4096
    for key in ("Unit.Wants", "Unit.After"):
        assert {"network-online.target", "avahi-daemon.service"} <= set(words(unit, key)), key
    for key in ("Unit.Requires", "Unit.BindsTo", "Unit.Requisite"):
        assert "avahi-daemon.service" not in words(unit, key), f"{key}: lanpushd must run without avahi-daemon"
    assert set(words(unit, "Service.RestrictAddressFamilies")) == {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"}
    assert one["Install.WantedBy"] == "multi-user.target"


def test_systemctl_enable_links_into_multi_user_target(installed: Path, tmp_path: Path):
    """README: `systemctl enable --now lanpushd` — the enable half, offline (the start half is the notify tests)."""
    root = tmp_path / "root"
    shutil.copytree(installed, root, symlinks=True)
    result = subprocess.run(["systemctl", f"--root={root}", "enable", "lanpushd"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    link = root / "etc/systemd/system/multi-user.target.wants/lanpushd.service"
    assert link.is_symlink() and os.readlink(link) == "/etc/systemd/system/lanpushd.service"


def test_journalctl_command_from_readme_is_valid(tmp_path: Path):
    """README: `journalctl -u lanpushd -f` — there is no journal here, so the unit filter is run against an empty
    journal folder (following, -f, needs a journal to follow and is left out)."""
    result = subprocess.run(["journalctl", f"--directory={tmp_path}", "-u", "lanpushd", "--no-pager"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr


# --------------------------------------------------------------------------------------------------
# --check-config (ExecStartPre=) and the exit code RestartPreventExitStatus= relies on


def test_check_config_one_line_and_exit_codes(lanpushd: Path, tmp_path: Path):
    good = tmp_path / "good.yaml"
    good.write_text('listen: "127.0.0.1:8765"\ndevices:\n  - {id: hall, token: "0123456789abcdef0123"}\n'
                    "mdns: {enabled: false, interfaces: [eth0]}\n")
    result = subprocess.run([str(lanpushd), "--check-config", "--config", str(good)], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1 and result.stderr == "", result.stdout + result.stderr
    assert "configuration OK" in result.stdout and "1 device" in result.stdout and "mDNS off" in result.stdout

    cases = {
        "session:\n  window: 0\n": "session.window",
        "mdns:\n  nmae: x\n": "mdns.nmae",
        "mdns:\n  interfaces: [\"not an interface\"]\n": "mdns.interfaces[0]",
        "devices:\n  - {id: a, token: short}\n": "devices[0].token",
    }
    for text, key in cases.items():
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        result = subprocess.run([str(lanpushd), "--check-config", "--config", str(bad)], capture_output=True,
                                text=True, timeout=30)
        assert result.returncode == 64, (text, result.returncode, result.stderr)
        assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
        assert f"config key '{key}'" in result.stderr, result.stderr

    # The daemon itself refuses the same config with the same code: systemd does not restart-loop on it.
    state = tmp_path / "state"
    result = subprocess.run([str(lanpushd), "--config", str(bad), "--state-dir", str(state)], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 64 and "devices[0].token" in result.stderr, result.stderr


# --------------------------------------------------------------------------------------------------
# $NOTIFY_SOCKET


class NotifyListener:
    """What systemd is to a Type=notify service: a unix datagram socket, messages timestamped on arrival."""

    def __init__(self, directory: Path, abstract: bool):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = f"lanpush-notify-{os.getpid()}-{time.monotonic_ns()}"
            self.sock.bind("\0" + name)
            self.address = "@" + name
        else:
            path = directory / "notify.sock"
            self.sock.bind(str(path))
            self.address = str(path)
        self.sock.settimeout(0.2)
        self.messages: "queue.Queue[tuple[float, str]]" = queue.Queue()
        self.log: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except (socket.timeout, OSError):
                continue
            entry = (time.monotonic(), data.decode("utf-8", "replace"))
            self.log.append(entry)
            self.messages.put(entry)

    def next(self, timeout: float) -> tuple[float, str] | None:
        try:
            return self.messages.get(timeout=timeout)
        except queue.Empty:
            return None

    def wait_for(self, field: str, timeout: float) -> tuple[float, str] | None:
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            entry = self.next(remaining)
            if entry and field in entry[1].split("\n"):
                return entry
        return None

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def write_config(directory: Path, port: int, device_token: str, extra: str = "") -> Path:
    config = directory / "lanpush.yaml"
    config.write_text(
        f'listen: "127.0.0.1:{port}"\nadmin_token: "systemd-test-admin-token-0123456789"\nlog_level: debug\n'
        f"mdns: {{enabled: false}}\n"
        f'devices:\n  - {{id: hall, name: Hall display, token: "{device_token}"}}\n' + extra)
    return config


def healthz(port: int, timeout: float = 2) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.mark.parametrize("abstract", [False, True], ids=["path", "abstract"])
def test_notify_ready_watchdog_stopping(lanpushd: Path, tmp_path: Path, abstract: bool):
    notify_sequence(lanpushd, tmp_path, abstract)


def test_release_install_notify_ready_watchdog_stopping(installed_release: Path, tmp_path: Path):
    """The same against what `scripts/install` builds (release, static Swift runtime): an optimized build once
    released its signal sources at start, so SIGTERM did nothing there while the debug build was fine."""
    binary = installed_release / "usr/local/bin/lanpushd"
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    assert "libswiftCore" not in ldd and "libFoundation" not in ldd, "expected the Swift runtime linked in"
    notify_sequence(binary, tmp_path, abstract=False)


def notify_sequence(lanpushd: Path, tmp_path: Path, abstract: bool) -> None:
    listener = NotifyListener(tmp_path, abstract)
    port = free_port()
    config = write_config(tmp_path, port, "notify-test-device-token")
    env = dict(os.environ, NOTIFY_SOCKET=listener.address, WATCHDOG_USEC="2000000")
    log = open(tmp_path / "lanpushd.log", "wb")
    proc = subprocess.Popen([str(lanpushd), "--config", str(config), "--state-dir", str(tmp_path / "state")],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    started = time.monotonic()
    try:
        ready = listener.wait_for("READY=1", 15)
        assert ready, f"no READY=1; got {listener.log}\n{(tmp_path / 'lanpushd.log').read_text()}"
        # READY=1 promises a listening socket: it must answer at once, with no retry.
        assert healthz(port) == 200
        assert listener.log[0][1].split("\n")[0] == "READY=1", f"READY=1 must be the first message: {listener.log}"

        # Half of WATCHDOG_USEC: a ping about every second, never a gap near the 2 s deadline.
        time.sleep(5.2)
        pings = [t for t, m in listener.log if "WATCHDOG=1" in m.split("\n") and t >= ready[0]]
        assert 4 <= len(pings) <= 7, f"{len(pings)} pings in 5.2 s: {listener.log}"
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        assert all(0.7 <= g <= 1.6 for g in gaps), f"ping gaps {gaps}"
        assert pings[0] - ready[0] <= 1.6, "first ping too late"

        mark = len(listener.log)
        proc.send_signal(signal.SIGTERM)
        stopping = listener.wait_for("STOPPING=1", 10)
        assert stopping, f"no STOPPING=1 after SIGTERM: {listener.log[mark:]}"
        assert proc.wait(10) == 0, (tmp_path / "lanpushd.log").read_text()
        assert not any("READY=1" in m for _, m in listener.log[mark:])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        listener.close()
        log.close()
    assert time.monotonic() - started < 30


def test_notify_without_watchdog_sends_no_pings(lanpushd: Path, tmp_path: Path):
    listener = NotifyListener(tmp_path, abstract=False)
    port = free_port()
    config = write_config(tmp_path, port, "notify-test-device-token")
    env = {k: v for k, v in os.environ.items() if k != "WATCHDOG_USEC"}
    env["NOTIFY_SOCKET"] = listener.address
    proc = subprocess.Popen([str(lanpushd), "--config", str(config), "--state-dir", str(tmp_path / "state")],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert listener.wait_for("READY=1", 15)
        time.sleep(2.5)
        assert not any("WATCHDOG=1" in m for _, m in listener.log), listener.log
        proc.send_signal(signal.SIGTERM)
        assert listener.wait_for("STOPPING=1", 10)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        listener.close()


# --------------------------------------------------------------------------------------------------
# LimitNOFILE= and the lws fd budget


def proc_limits(pid: int) -> tuple[int, int]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no Max open files line")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_fd_limit_raised_and_saturation_does_not_spin(lanpushd: Path, tmp_path: Path):
    """lanpushd raises its soft RLIMIT_NOFILE to the hard one (LimitNOFILE= sets both) and gives lws 64 fewer fds:
    more connections than that wait in the kernel's backlog instead of making lws spin on accept at EMFILE."""
    hard = 256
    port = free_port()
    config = write_config(tmp_path, port, "fd-test-device-token-123")

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))

    log = open(tmp_path / "lanpushd.log", "wb")
    proc = subprocess.Popen([str(lanpushd), "--config", str(config), "--state-dir", str(tmp_path / "state")],
                            stdout=log, stderr=subprocess.STDOUT, preexec_fn=limits)
    conns: list[socket.socket] = []
    try:
        deadline = time.time() + 15
        while True:
            try:
                if healthz(port) == 200:
                    break
            except OSError:
                assert time.time() < deadline and proc.poll() is None, (tmp_path / "lanpushd.log").read_text()
                time.sleep(0.05)
        assert proc_limits(proc.pid) == (hard, hard)

        for _ in range(hard + 40):  # beyond the process's own limit, not only lws's budget
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            conns.append(s)
        time.sleep(0.5)
        before = cpu_seconds(proc.pid)
        time.sleep(2.0)
        used = cpu_seconds(proc.pid) - before
        assert proc.poll() is None, (tmp_path / "lanpushd.log").read_text()
        assert used < 0.6, f"lanpushd burned {used:.2f} s of CPU in 2 s at its fd limit (accept spin?)"
        for s in conns:
            s.close()
        conns.clear()
        deadline = time.time() + 10
        while True:
            try:
                if healthz(port) == 200:
                    break
            except OSError:
                pass
            assert time.time() < deadline, "no /healthz after the connections closed"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        for s in conns:
            s.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


# --------------------------------------------------------------------------------------------------
# The unit's sandbox, re-created without systemd

SANDBOX = r'''
"""Runs argv under the unit's seccomp sandbox, as systemd would: python3 sandbox.py SPEC.json -- argv..."""
import errno, json, mmap, os, resource, subprocess, sys
import seccomp

spec = json.load(open(sys.argv[1]))
argv = sys.argv[3:]

def expand(name, seen=None):
    seen = set() if seen is None else seen
    if name in seen:
        return set()
    seen.add(name)
    if not name.startswith("@"):
        return {name}
    out = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True, check=True)
    calls = set()
    for line in out.stdout.splitlines()[1:]:
        item = line.strip()
        if item and not item.startswith("#"):
            calls |= expand(item, seen)
    return calls

allow, deny = set(), set()
for entry in spec["filters"]:
    if entry.startswith("~"):
        for name in entry[1:].split():
            deny |= expand(name)
    else:
        for name in entry.split():
            allow |= expand(name)
allow -= deny
error = getattr(errno, spec["errno"])
families = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16}
special = {"socket", "mmap", "mprotect", "pkey_mprotect"}

f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(error))
for call in sorted(allow - special):
    try:
        f.add_rule(seccomp.ALLOW, call)
    except (RuntimeError, ValueError):
        pass  # not a syscall on this architecture
if "socket" in allow:
    for family in spec["families"]:
        f.add_rule(seccomp.ALLOW, "socket", seccomp.Arg(0, seccomp.EQ, families[family]))
    for number in range(0, 46):  # RestrictAddressFamilies= answers EAFNOSUPPORT for the others
        if number not in [families[x] for x in spec["families"]]:
            f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, number))
wx = mmap.PROT_WRITE | mmap.PROT_EXEC
if spec["mdwe"]:  # MemoryDenyWriteExecute=: no W+X mappings, no turning memory executable
    for prot in (0, mmap.PROT_WRITE, mmap.PROT_EXEC):
        f.add_rule(seccomp.ALLOW, "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, wx, prot))
    for call in ("mprotect", "pkey_mprotect"):
        f.add_rule(seccomp.ALLOW, call, seccomp.Arg(2, seccomp.MASKED_EQ, mmap.PROT_EXEC, 0))
else:
    for call in ("mmap", "mprotect", "pkey_mprotect"):
        f.add_rule(seccomp.ALLOW, call)

resource.setrlimit(resource.RLIMIT_NOFILE, (spec["nofile"], spec["nofile"]))
os.umask(spec["umask"])
os.setgroups([])
os.setgid(spec["uid"])
os.setuid(spec["uid"])
f.load()  # sets no_new_privs too (NoNewPrivileges=yes)
os.execv(argv[0], argv)
'''


def sandbox_spec(unit: dict[str, list[str]], uid: int) -> dict:
    one = {k: v[-1] for k, v in unit.items()}
    hard_now = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return {
        "filters": unit["Service.SystemCallFilter"],
        "errno": one.get("Service.SystemCallErrorNumber", "EPERM"),
        "families": words(unit, "Service.RestrictAddressFamilies"),
        "mdwe": one.get("Service.MemoryDenyWriteExecute") == "yes",
        # This container may not raise its hard limit: LimitNOFILE=, or the machine's hard limit if lower.
        "nofile": min(int(one["Service.LimitNOFILE"]), hard_now),
        "umask": int(one["Service.UMask"], 8),
        "uid": uid,
    }


def free_uid() -> int:
    for uid in range(61184, 65519):  # systemd's DynamicUser= range
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise AssertionError("no free uid")


@pytest.fixture(params=["debug", "release"])
def sandbox(request):
    """(argv builder, uid, unit, box) for the debug build and for what scripts/install builds; box is a folder the
    dynamic user can reach (pytest's tmp is root-only)."""
    installed = request.getfixturevalue("installed" if request.param == "debug" else "installed_release")
    if os.geteuid() != 0:
        pytest.skip("re-creating the unit's sandbox needs root (setuid to a dynamic uid)")
    check = subprocess.run(["/usr/bin/python3", "-c", "import seccomp"], capture_output=True, text=True)
    if check.returncode != 0:
        pytest.fail("python3-seccomp is missing: run scripts/setup --test")
    unit = parse_unit(installed / "etc/systemd/system/lanpushd.service")
    uid = free_uid()
    box = Path(tempfile.mkdtemp(prefix="lanpush-sandbox-", dir="/tmp"))
    box.chmod(0o711)
    binary = box / "lanpushd"
    shutil.copy2(installed / "usr/local/bin/lanpushd", binary)
    spec = box / "sandbox.json"
    spec.write_text(json.dumps(sandbox_spec(unit, uid)))
    script = box / "sandbox.py"
    script.write_text(SANDBOX)
    for f in (binary, spec, script):
        f.chmod(0o755)

    def argv(*args: str, program: str | None = None) -> list[str]:
        return ["/usr/bin/python3", str(script), str(spec), "--", program or str(binary), *args]

    try:
        yield argv, uid, unit, box
    finally:
        shutil.rmtree(box, ignore_errors=True)


def test_daemon_runs_inside_the_units_sandbox(sandbox):
    argv, uid, unit, tmp_path = sandbox
    # StateDirectory= (owned by the dynamic user, 0700) and LoadCredential= (a private read-only copy).
    state = tmp_path / "var-lib-lanpush"
    state.mkdir(mode=0o700)
    os.chown(state, uid, uid)
    creds = tmp_path / "credentials"
    creds.mkdir(mode=0o500)
    port = free_port()
    token = "sandbox-device-token-0123"
    # TLS on: making the certificate in the state folder and OpenSSL serving it must fit the sandbox too.
    config = write_config(creds, port, token, extra="tls: {enabled: true}\n")
    config.chmod(0o400)
    os.chown(config, uid, uid)
    os.chown(creds, uid, uid)
    listener = NotifyListener(tmp_path, abstract=False)
    os.chmod(listener.address, 0o777)  # systemd's notify socket is writable by the service's user

    pre = subprocess.run(argv("--check-config", "--config", str(config)), capture_output=True, text=True, timeout=30)
    assert pre.returncode == 0 and "configuration OK" in pre.stdout, pre.stdout + pre.stderr

    env = {"PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "2000000",
           "STATE_DIRECTORY": str(state), "CREDENTIALS_DIRECTORY": str(creds)}
    log_path = tmp_path / "lanpushd.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(argv("--config", str(config)), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        assert listener.wait_for("READY=1", 20), log_path.read_text()
        assert healthz(port) == 200
        assert proc_limits(proc.pid)[0] == sandbox_spec(unit, uid)["nofile"]
        # A device session and an update through it: sockets, the store and the loop all work sandboxed.
        with wsclient.connect(f"ws://127.0.0.1:{port}/v1/stream", subprotocols=["lanpush.v1"],
                              open_timeout=10) as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "auth_required"
            ws.send(json.dumps({"type": "auth", "token": token}))
            assert json.loads(ws.recv(timeout=10))["type"] == "auth_ok"
            ws.send(json.dumps({"type": "subscribe"}))
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            body = json.dumps({"targets": ["hall"], "title": "Washer", "message": "Rinsing",
                               "data": {"tag": "washer", "live_update": True, "progress": 5, "progress_max": 10}})
            conn.request("POST", "/v1/push", body=body, headers={
                "Authorization": "Bearer systemd-test-admin-token-0123456789", "Content-Type": "application/json"})
            assert conn.getresponse().status == 202
            conn.close()
            frames = []
            while not any(f.get("type") == "start" for f in frames):
                frames.append(json.loads(ws.recv(timeout=10)))
            start = next(f for f in frames if f["type"] == "start")
            assert start["tag"] == "washer" and start["state"]["progress"] == 5, start
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
        # The sync client's reader thread races TLS 1.3's session tickets (test_tls.wss_context).
        tls.maximum_version = ssl.TLSVersion.TLSv1_2
        with wsclient.connect(f"wss://127.0.0.1:{port}/v1/stream", subprotocols=["lanpush.v1"], ssl=tls,
                              open_timeout=10) as ws:
            served = hashlib.sha256(ws.socket.getpeercert(binary_form=True)).hexdigest()
            assert json.loads(ws.recv(timeout=10))["type"] == "auth_required"
        generated = ssl.PEM_cert_to_DER_cert((state / "tls" / "cert.pem").read_text())
        assert hashlib.sha256(generated).hexdigest() == served
        assert listener.wait_for("WATCHDOG=1", 3)
        proc.send_signal(signal.SIGTERM)
        assert listener.wait_for("STOPPING=1", 10)
        assert proc.wait(10) == 0, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        listener.close()
        log.close()
    text = log_path.read_text()
    for complaint in ("getifaddrs", "Operation not permitted", "Permission denied", "Bad system call"):
        assert complaint not in text, f"{complaint!r} in the sandboxed daemon's log:\n{text}"
    created = [p for p in state.rglob("*")]
    assert created and all(p.stat().st_uid == uid for p in created)
    assert all(p.stat().st_mode & 0o077 == 0 for p in created if p.is_file()), "UMask=0077 not honoured"


def test_sandbox_emulation_is_strict(sandbox):
    """Control: the emulated filter does bite (a socket family the unit does not allow is refused)."""
    argv, uid, unit, box = sandbox
    probe = box / "probe.py"
    probe.write_text("import socket, sys\ntry:\n    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
                     "except OSError as e:\n    print(e.errno)\n    sys.exit(0)\nsys.exit(1)\n")
    probe.chmod(0o644)
    result = subprocess.run(argv(str(probe), program="/usr/bin/python3"), capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and result.stdout.strip() == "97", result.stdout + result.stderr  # EAFNOSUPPORT


def test_file_footprint_fits_protect_system_and_proc_subset(lanpushd: Path, tmp_path: Path):
    """ProtectSystem=strict, ProcSubset=pid, PrivateTmp=: the daemon writes only its state folder and reads only
    /proc/self (strace of a full start, a session and a stop)."""
    if shutil.which("strace") is None:
        pytest.fail("strace is missing: run scripts/setup --test")
    port = free_port()
    config = write_config(tmp_path, port, "footprint-device-token-1")
    state = tmp_path / "state"
    trace = tmp_path / "trace.txt"
    proc = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=%file", "-o", str(trace), str(lanpushd),
                             "--config", str(config), "--state-dir", str(state)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while True:
            try:
                if healthz(port) == 200:
                    break
            except OSError:
                assert time.time() < deadline and proc.poll() is None, "lanpushd did not start under strace"
                time.sleep(0.1)
        with wsclient.connect(f"ws://127.0.0.1:{port}/v1/stream", subprotocols=["lanpush.v1"], open_timeout=10) as ws:
            ws.recv(timeout=10)
    finally:
        stop_traced(proc)
    writes, proc_reads = set(), set()
    call = re.compile(r'^\d+\s+(\w+)\((?:AT_FDCWD|\d+), "([^"]*)", ([A-Z_|]+)')
    for line in trace.read_text().splitlines():
        m = call.match(line)
        if not m or "= -1" in line:
            continue
        name, path, flags = m.groups()
        if name in ("openat", "open") and re.search(r"O_WRONLY|O_RDWR|O_CREAT", flags):
            writes.add(path)
        if path.startswith("/proc/"):
            proc_reads.add(path)
    for line in trace.read_text().splitlines():
        for name in ("mkdir", "mkdirat", "rename", "renameat", "renameat2", "unlink", "unlinkat"):
            if re.match(rf"^\d+\s+{name}\(", line) and "= -1" not in line:
                writes.update(re.findall(r'"([^"]+)"', line))
    outside = sorted(p for p in writes if not (os.path.abspath(os.path.join(str(state), p)).startswith(str(state))
                                               or p == "/dev/null"))
    assert not outside, f"writes outside the state folder (read-only under ProtectSystem=strict): {outside}"
    assert all(p.startswith("/proc/self/") or re.match(r"/proc/\d+/", p) for p in proc_reads), \
        f"/proc reads beyond the process's own (hidden by ProcSubset=pid): {sorted(proc_reads)}"
