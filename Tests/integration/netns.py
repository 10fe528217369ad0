"""Network-namespace test bed for lanpush discovery tests.

Two namespaces joined by a veth pair, with addresses assigned only inside them:

    namespace A  (lp-a-<pid>-<n>)                       namespace B  (lp-b-<pid>-<n>)
      veth lp<pid>a<n>  10.213.7.1/24   <── veth ──>      veth lp<pid>b<n>  10.213.7.2/24
      private dbus-daemon (unix socket in a temp dir)     python-zeroconf: browser / rival publisher
      avahi-daemon  allow-interfaces=<veth A>, private /run
      the process under test (DBUS_SYSTEM_BUS_ADDRESS -> the private bus)
                                                          a lanpush.v1 device client (LAN_CLIENT, `websockets`)

Nothing here runs in, or sends multicast into, the root namespace. avahi-daemon gets a private tmpfs on
/run inside its own mount namespace (the one `ip netns exec` creates), so its pid file and socket never
touch the machine's /run/avahi-daemon and a stale pid file can never block it. Everything is cleaned up
(processes killed, namespaces deleted, temp dir removed) by `TestBed.close()`, also when a test fails.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterable, Sequence

REPO_ROOT = Path(__file__).resolve().parents[2]
ZC_TOOL = Path(__file__).resolve().parent / "zc_tool.py"

_counter = itertools.count(1)


class NetnsUnavailable(Exception):
    """`ip netns add` is not permitted here (not root / no CAP_SYS_ADMIN / no netns support)."""


def _run(argv: Sequence[str], check: bool = True, timeout: float = 20) -> subprocess.CompletedProcess:
    result = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


# --------------------------------------------------------------------------------------------------
# Processes


class ManagedProcess:
    """A child process whose merged stdout/stderr is collected line by line (and mirrored to a log file)."""

    def __init__(self, label: str, argv: Sequence[str], env: dict[str, str] | None, log_path: Path,
                 stdin_pipe: bool = False):
        self.label = label
        self.argv = list(argv)
        self.log_path = log_path
        self._lines: list[str] = []
        self._cond = threading.Condition()
        self._log = open(log_path, "a", encoding="utf-8")
        self._log.write(f"$ {' '.join(self.argv)}\n")
        self._log.flush()
        self.proc = subprocess.Popen(
            self.argv,
            env=env,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
            start_new_session=True,  # its own process group: we can signal it and its children only
        )
        self._reader = threading.Thread(target=self._read, name=f"reader-{label}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            with self._cond:
                self._lines.append(line)
                self._cond.notify_all()
            try:
                self._log.write(line + "\n")
                self._log.flush()
            except ValueError:
                pass
        with self._cond:
            self._cond.notify_all()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def lines(self) -> list[str]:
        with self._cond:
            return list(self._lines)

    def matching(self, pattern: str) -> list[str]:
        rx = re.compile(pattern)
        return [line for line in self.lines() if rx.search(line)]

    def tail(self, n: int = 40) -> str:
        lines = self.lines()[-n:]
        return f"--- last {len(lines)} lines of {self.label} (pid {self.pid}, rc {self.proc.poll()}) ---\n" + \
            "\n".join(lines)

    def wait_for(self, pattern: str, timeout: float, start: int = 0) -> str | None:
        """Waits for a line matching `pattern` (searching from line index `start`); None on timeout or exit."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._cond:
            index = start
            while True:
                while index < len(self._lines):
                    if rx.search(self._lines[index]):
                        return self._lines[index]
                    index += 1
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    return None
                self._cond.wait(min(remaining, 0.2))

    def line_count(self) -> int:
        with self._cond:
            return len(self._lines)

    def send_signal(self, sig: int) -> None:
        if self.alive():
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 8) -> int | None:
        """Signals the process group, waits, then SIGKILLs whatever is left. Returns the exit code."""
        if self.alive():
            self.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.send_signal(signal.SIGKILL)
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
        if self.proc.stdin:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        self._reader.join(2)
        try:
            self._log.close()
        except OSError:
            pass
        return self.proc.poll()


# --------------------------------------------------------------------------------------------------
# The test bed


DBUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- A private system-type bus for one test: the defaults of /usr/share/dbus-1/system.conf plus the
     org.freedesktop.Avahi holes of /usr/share/dbus-1/system.d/avahi-dbus.conf. No <user>, <fork>,
     <pidfile>, <syslog>, service activation or includes. -->
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
    <allow own="org.freedesktop.Avahi"/>
    <allow send_destination="org.freedesktop.Avahi"/>
    <allow receive_sender="org.freedesktop.Avahi"/>
  </policy>
</busconfig>
"""

AVAHI_CONFIG = """[server]
host-name={host_name}
domain-name=local
use-ipv4=yes
use-ipv6=no
allow-interfaces={interface}
enable-dbus=yes
disallow-other-stacks=no
ratelimit-interval-usec=1000000
ratelimit-burst=1000

[wide-area]
enable-wide-area=no

[publish]
publish-addresses=yes
publish-hinfo=no
publish-workstation=no
publish-domain=no
publish-aaaa-on-ipv4=no
publish-a-on-ipv6=no

[reflector]
enable-reflector=no
"""


class TestBed:
    """Namespaces A and B, a veth pair between them, and helpers to run things inside them."""

    __test__ = False  # not a pytest test class

    def __init__(self, subnet: str = "10.213.7", python: str | None = None):
        n = next(_counter)
        pid = os.getpid()
        self.ns_a = f"lp-a-{pid}-{n}"
        self.ns_b = f"lp-b-{pid}-{n}"
        self.veth_a = f"lp{pid}a{n}"[:15]
        self.veth_b = f"lp{pid}b{n}"[:15]
        self.addr_a = f"{subnet}.1"
        self.addr_b = f"{subnet}.2"
        self.host_a = self.ns_a  # avahi-daemon's host name in A: "<ns_a>.local"
        self.python = python or sys.executable
        self.tmp = Path(tempfile.mkdtemp(prefix="lanpush-it-", dir="/tmp"))
        self.bus_socket = self.tmp / "system_bus_socket"
        self.bus_address = f"unix:path={self.bus_socket}"
        self.processes: list[ManagedProcess] = []
        self.dbus: ManagedProcess | None = None
        self.avahi: ManagedProcess | None = None
        self._created: list[str] = []
        (self.tmp / "logs").mkdir()

    # -- lifecycle ---------------------------------------------------------------------------------

    def open(self) -> "TestBed":
        probe = _run(["ip", "netns", "add", self.ns_a], check=False)
        if probe.returncode != 0:
            self.close()
            raise NetnsUnavailable(probe.stderr.strip() or f"ip netns add exited {probe.returncode}")
        self._created.append(self.ns_a)
        try:
            _run(["ip", "netns", "add", self.ns_b])
            self._created.append(self.ns_b)
            # The veth pair is created inside A with its peer directly in B: nothing touches the root namespace.
            _run(["ip", "-n", self.ns_a, "link", "add", self.veth_a, "type", "veth",
                  "peer", "name", self.veth_b, "netns", self.ns_b])
            _run(["ip", "-n", self.ns_a, "addr", "add", f"{self.addr_a}/24", "dev", self.veth_a])
            _run(["ip", "-n", self.ns_b, "addr", "add", f"{self.addr_b}/24", "dev", self.veth_b])
            for ns, dev in ((self.ns_a, self.veth_a), (self.ns_b, self.veth_b)):
                _run(["ip", "-n", ns, "link", "set", "lo", "up"])
                _run(["ip", "-n", ns, "link", "set", dev, "up"])
        except Exception:
            self.close()
            raise
        return self

    def close(self) -> None:
        for proc in reversed(self.processes):
            try:
                proc.stop(timeout=5)
            except Exception:  # noqa: BLE001 - best effort cleanup
                pass
        # Anything still inside our namespaces was started by this test bed: end it.
        for ns in self._created:
            pids = _run(["ip", "netns", "pids", ns], check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
        for ns in reversed(self._created):
            for _ in range(20):
                if _run(["ip", "netns", "del", ns], check=False).returncode == 0:
                    break
                time.sleep(0.1)
        self._created.clear()
        if os.environ.get("LANPUSH_KEEP_TEST_LOGS"):
            print(f"test bed logs kept in {self.tmp}", file=sys.stderr)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> "TestBed":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- running things ----------------------------------------------------------------------------

    def spawn(self, ns: str, label: str, argv: Sequence[str], env: dict[str, str] | None = None,
              stdin_pipe: bool = False) -> ManagedProcess:
        full_env = dict(os.environ)
        full_env.pop("DBUS_SYSTEM_BUS_ADDRESS", None)
        full_env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        if env:
            full_env.update(env)
        proc = ManagedProcess(label, ["ip", "netns", "exec", ns, *argv], full_env,
                              self.tmp / "logs" / f"{label}.log", stdin_pipe=stdin_pipe)
        self.processes.append(proc)
        return proc

    def logs(self) -> str:
        return "\n".join(p.tail() for p in self.processes)

    # -- D-Bus and avahi-daemon in namespace A ------------------------------------------------------

    def start_dbus(self, timeout: float = 10) -> ManagedProcess:
        """Starts the private system-type dbus-daemon in A, listening on `self.bus_socket`."""
        config = self.tmp / "dbus-system.conf"
        config.write_text(DBUS_CONFIG.format(socket=self.bus_socket))
        try:
            self.bus_socket.unlink()
        except FileNotFoundError:
            pass
        self.dbus = self.spawn(self.ns_a, "dbus-daemon", [
            "dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile", "--print-address"])
        if self.dbus.wait_for(r"^unix:", timeout) is None:
            raise RuntimeError("dbus-daemon did not start\n" + self.dbus.tail())
        return self.dbus

    def stop_dbus(self) -> None:
        if self.dbus:
            self.dbus.stop()
            self.dbus = None

    def start_avahi(self, timeout: float = 15) -> ManagedProcess:
        """Starts avahi-daemon in A on the veth only, on the private bus, with a private /run."""
        config = self.tmp / "avahi-daemon.conf"
        config.write_text(AVAHI_CONFIG.format(host_name=self.host_a, interface=self.veth_a))
        # `ip netns exec` gives the command its own mount namespace (slave propagation): the tmpfs on /run
        # is seen by this avahi-daemon only and vanishes with it.
        script = ("mount -t tmpfs -o mode=0755,size=1m lanpush-test-run /run && mkdir -p /run/avahi-daemon && "
                  f"exec avahi-daemon -f '{config}' --no-chroot --no-drop-root --no-rlimits --no-proc-title")
        self.avahi = self.spawn(self.ns_a, "avahi-daemon", ["sh", "-c", script],
                                env={"DBUS_SYSTEM_BUS_ADDRESS": self.bus_address})
        if self.avahi.wait_for(r"Server startup complete", timeout) is None:
            raise RuntimeError("avahi-daemon did not start\n" + self.avahi.tail())
        return self.avahi

    def stop_avahi(self, sig: int = signal.SIGTERM) -> None:
        if self.avahi:
            self.avahi.stop(sig)
            self.avahi = None

    # -- python-zeroconf in namespace B --------------------------------------------------------------

    def zc_browse(self, want: Iterable[str] = (), timeout: float = 15, type_: str = "_lanpush._tcp.local.",
                  gone: str | None = None) -> ManagedProcess:
        """Starts a zeroconf browser in B (see zc_tool.py); read its JSON lines with `zc_results`."""
        argv = [self.python, str(ZC_TOOL), "browse", "--iface-ip", self.addr_b, "--type", type_,
                "--timeout", str(timeout)]
        for name in want:
            argv += ["--want", name]
        if gone:
            argv += ["--gone", gone]
        return self.spawn(self.ns_b, f"zc-browse-{next(_counter)}", argv)

    def browse(self, want: Iterable[str] = (), timeout: float = 15,
               type_: str = "_lanpush._tcp.local.") -> dict[str, dict]:
        """Browses from B until every name in `want` resolved (or `timeout`); returns {instance name: info}."""
        proc = self.zc_browse(want, timeout, type_)
        proc.wait_for(r'"event": "done"', timeout + 10)
        proc.stop()
        return zc_services(proc)

    def lan_client(self, addr: str, port: int, path: str, token: str, push: dict | None = None) -> dict:
        """A lanpush.v1 device client in B (see LAN_CLIENT): auth, subscribe, optionally post + receive one update."""
        return lan_client(self, self.ns_b, addr, port, path, token, push)

    def zc_register(self, name: str, port: int, txt: dict[str, str] | None = None,
                    type_: str = "_lanpush._tcp.local.", timeout: float = 15) -> ManagedProcess:
        """Registers a rival service in B with python-zeroconf; it stays until the process is stopped."""
        argv = [self.python, str(ZC_TOOL), "register", "--iface-ip", self.addr_b, "--type", type_,
                "--name", name, "--port", str(port)]
        for key, value in (txt or {}).items():
            argv += ["--txt", f"{key}={value}"]
        proc = self.spawn(self.ns_b, f"zc-register-{next(_counter)}", argv, stdin_pipe=True)
        if proc.wait_for(r'"event": "registered"', timeout) is None:
            raise RuntimeError("zeroconf could not register\n" + proc.tail())
        return proc


# --------------------------------------------------------------------------------------------------
# A lanpush.v1 device client, run inside a namespace (python `websockets`, the test venv's interpreter)

LAN_CLIENT = r'''
"""Connects to ws://ADDR:PORT/PATH as a device, subscribes, optionally posts one live update to the same
ADDR:PORT over HTTP, and prints one JSON line: {"auth", "frames", "start", "push_status"} (or {"error"})."""
import http.client, json, sys, time
import websockets.sync.client as wsclient

args = json.loads(sys.argv[1])
result = {"frames": []}
try:
    url = f"ws://{args['addr']}:{args['port']}{args['path']}"
    with wsclient.connect(url, subprotocols=["lanpush.v1"], open_timeout=10) as ws:
        result["subprotocol"] = ws.subprotocol
        hello = json.loads(ws.recv(timeout=10))
        assert hello["type"] == "auth_required", hello
        ws.send(json.dumps({"type": "auth", "token": args["token"]}))
        result["auth"] = json.loads(ws.recv(timeout=10))
        ws.send(json.dumps({"type": "subscribe"}))
        deadline = time.monotonic() + 10
        while not any(f.get("type") == "synced" for f in result["frames"]):
            result["frames"].append(json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic()))))
        push = args.get("push")
        if push:
            body = json.dumps({"targets": [push["target"]], "title": "Washing Machine", "message": "Rinsing",
                               "data": {"tag": "washer_cycle", "live_update": True, "progress": 900,
                                        "progress_max": 3600}})
            conn = http.client.HTTPConnection(args["addr"], args["port"], timeout=10)
            conn.request("POST", "/v1/push", body=body, headers={
                "Authorization": f"Bearer {push['admin_token']}", "Content-Type": "application/json"})
            response = conn.getresponse()
            result["push_status"] = response.status
            result["push_answer"] = json.loads(response.read() or b"null")
            conn.close()
            deadline = time.monotonic() + 10
            while "start" not in result:
                frame = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
                result["frames"].append(frame)
                if frame.get("type") == "start" and frame.get("tag") == "washer_cycle":
                    result["start"] = frame
                    ws.send(json.dumps({"type": "ack", "seq": frame["seq"]}))
except Exception as exc:  # noqa: BLE001 - reported to the test
    result["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(result), flush=True)
'''


def lan_client(bed: "TestBed", ns: str, addr: str, port: int, path: str, token: str,
               push: dict | None = None, timeout: float = 40) -> dict:
    """Runs LAN_CLIENT in `ns` and returns its result; fails with the client's own error message."""
    import json

    script = bed.tmp / "lan_client.py"
    script.write_text(LAN_CLIENT)
    args = {"addr": addr, "port": port, "path": path, "token": token, "push": push}
    proc = bed.spawn(ns, f"lan-client-{next(_counter)}", [bed.python, str(script), json.dumps(args)])
    line = proc.wait_for(r"^\{", timeout)
    proc.stop()
    if line is None:
        raise AssertionError("the LAN client printed nothing\n" + proc.tail())
    result = json.loads(line)
    if "error" in result:
        raise AssertionError(f"LAN client in {ns}: {result['error']}\nframes: {result['frames']}")
    return result


def zc_events(proc: ManagedProcess) -> list[dict]:
    import json

    events = []
    for line in proc.lines():
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                pass
    return events


def zc_services(proc: ManagedProcess) -> dict[str, dict]:
    """The services a zc_tool browse reported (from its final "done" line, else from its "found" lines)."""
    events = zc_events(proc)
    for event in reversed(events):
        if event.get("event") == "done":
            return {s["name"]: s for s in event["services"]}
    found: dict[str, dict] = {}
    for event in events:
        if event.get("event") == "found":
            found[event["name"]] = event
        elif event.get("event") == "removed":
            found.pop(event["name"], None)
    return found


def netns_permitted() -> tuple[bool, str]:
    """Whether this process may create network namespaces (tries, then deletes, a throw-away one)."""
    if shutil.which("ip") is None:
        raise RuntimeError("iproute2 (`ip`) is not installed: run scripts/setup --test")
    name = f"lp-probe-{os.getpid()}-{next(_counter)}"
    result = _run(["ip", "netns", "add", name], check=False)
    if result.returncode != 0:
        return False, f"`ip netns add` is not permitted here: {result.stderr.strip()}"
    _run(["ip", "netns", "del", name], check=False)
    return True, ""
