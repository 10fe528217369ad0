"""A real Home Assistant on loopback, for the HA-native tests.

The venv is built once, outside the repository, and reused: `${LANPUSH_HA_VENV}` or
`${XDG_CACHE_HOME:-~/.cache}/lanpush/ha-2025.4.4`. HA 2025.4.x runs on Python 3.13 (pyenv's on these machines);
the requirements of every integration HA loads at start-up are pre-installed so it never installs at run time
(`--skip-pip`): PyNaCl for mobile_app, the frontend (without it HA starts in recovery mode), hass-nabucasa (cloud,
an after-dependency of mobile_app), zeroconf, PyTurboJPEG and ha-ffmpeg (camera / ffmpeg, pulled in by defaults).
The `rest` integration's two (jsonpath, xmltodict) are added to an existing venv when missing (the README's `rest`
sensor example runs in HA).

Run `python Tests/integration/home_assistant.py` to build (or check) the cached venv ahead of a test run.
"""
from __future__ import annotations

import fcntl
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import websockets.sync.client as wsclient

HA_VERSION = "2025.4.4"
REQUIREMENTS = [
    f"homeassistant=={HA_VERSION}", "home-assistant-frontend==20250411.0", "hass-nabucasa==0.94.0",
    "zeroconf==0.146.0", "PyNaCl==1.5.0", "PyTurboJPEG==1.7.5", "ha-ffmpeg==3.2.2",
]
# The `rest` integration's requirements (its manifest.json in 2025.4.4): installed into a venv built without them.
EXTRAS = ["jsonpath==0.82.2", "xmltodict==0.13.0"]
READY_MARK = ".lanpush-ready"
USER, PASSWORD = "tester", "secretpass"


def venv_path() -> Path:
    if os.environ.get("LANPUSH_HA_VENV"):
        return Path(os.environ["LANPUSH_HA_VENV"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "lanpush" / f"ha-{HA_VERSION}"


def find_python313() -> str:
    candidates = [os.environ.get("LANPUSH_HA_PYTHON"), str(Path.home() / ".pyenv/versions/3.13.0/bin/python"),
                  "/root/.pyenv/versions/3.13.0/bin/python", shutil.which("python3.13")]
    pyenv = Path.home() / ".pyenv/versions"
    if pyenv.is_dir():
        candidates += [str(p / "bin/python") for p in sorted(pyenv.glob("3.13.*"), reverse=True)]
    for c in candidates:
        if c and Path(c).exists():
            return c
    raise RuntimeError("Home Assistant 2025.4 needs Python 3.13: set LANPUSH_HA_PYTHON or install it with pyenv")


def _ready(venv: Path) -> bool:
    python = venv / "bin" / "python"
    if not (venv / READY_MARK).exists() or not python.exists():
        return False
    check = "import homeassistant.const as c, nacl, hass_frontend; assert c.__version__ == %r" % HA_VERSION
    return subprocess.run([str(python), "-c", check], capture_output=True).returncode == 0


def ensure_venv(log=print) -> Path:
    """Returns the cached venv, building it first if needed (a few minutes from PyPI; a lock file keeps
    concurrent test runs from building it twice)."""
    venv = venv_path()
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _ready(venv):
            _ensure_extras(venv, log)
            return venv
        log(f"building the Home Assistant {HA_VERSION} venv in {venv} (once; several minutes)")
        started = time.time()
        if venv.exists():
            shutil.rmtree(venv)
        subprocess.run([find_python313(), "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run(pip + ["--upgrade", "pip", "wheel"], check=True)
        subprocess.run(pip + REQUIREMENTS, check=True)
        (venv / READY_MARK).write_text(" ".join(REQUIREMENTS) + "\n")
        if not _ready(venv):
            raise RuntimeError(f"the Home Assistant venv in {venv} does not import")
        _ensure_extras(venv, log)
        log(f"Home Assistant venv ready in {time.time() - started:.0f} s")
        return venv


def _ensure_extras(venv: Path, log) -> None:
    python = str(venv / "bin" / "python")
    if subprocess.run([python, "-c", "import jsonpath, xmltodict"], capture_output=True).returncode == 0:
        return
    log(f"adding {' '.join(EXTRAS)} to the Home Assistant venv")
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *EXTRAS], check=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CONFIGURATION = """\
homeassistant:
  name: lanpush test
  unit_system: metric
  time_zone: UTC
  latitude: 0
  longitude: 0
  elevation: 0
  country: US
http:
  server_host: 127.0.0.1
  server_port: {port}
api:
mobile_app:
logger:
  default: warning
  logs:
    # HA logs this line each time it delivers a notification through a device's push_url instead of its
    # local push channel (log_rate_limits in mobile_app/notify.py): the tests' witness of a fallback.
    homeassistant.components.mobile_app.notify: info
"""


class HomeAssistant:
    """One Home Assistant process with its own config folder, user and long-lived token."""

    def __init__(self, venv: Path, port: int | None = None, extra_config: str = "", secrets: dict | None = None):
        """`extra_config`: YAML appended to configuration.yaml; `secrets`: secrets.yaml (for `!secret`)."""
        self.venv = venv
        self.python = str(venv / "bin" / "python")
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="lanpush-ha-"))
        self.config = self.dir / "config"
        self.config.mkdir()
        (self.config / "configuration.yaml").write_text(CONFIGURATION.format(port=self.port) + extra_config)
        if secrets:
            (self.config / "secrets.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in secrets.items()))
        subprocess.run([self.python, "-m", "homeassistant", "--script", "auth", "-c", str(self.config), "add", USER,
                        PASSWORD], check=True, capture_output=True)
        self.proc = None
        self.log = None
        self.starts = 0
        self.token = None
        self.url = f"http://127.0.0.1:{self.port}"

    # Process

    def start(self, timeout=180):
        """Starts HA and waits until it is RUNNING (every integration set up). Returns seconds taken."""
        started = time.time()
        self.starts += 1
        self.log = open(self.dir / f"home-assistant-{self.starts}.log", "wb")
        self.proc = subprocess.Popen([self.python, "-m", "homeassistant", "-c", str(self.config), "--skip-pip"],
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = started + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("Home Assistant exited:\n" + self.logtext())
            try:
                if self.token is None:
                    self.token = self.create_token()
                status, config = self.rest("GET", "/api/config")
                if status == 200 and config.get("state") == "RUNNING":
                    return time.time() - started
            except (OSError, http.client.HTTPException, ValueError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"Home Assistant did not start in {timeout} s:\n" + self.logtext())

    def stop(self, timeout=60):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.log:
            self.log.close()
            self.log = None

    def logtext(self, every=False) -> str:
        """This run's log (every run's with `every`)."""
        if self.log:
            self.log.flush()
        files = sorted(self.dir.glob("home-assistant-*.log"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
        if not every:
            files = files[-1:]
        return "".join(f.read_text(errors="replace") for f in files)

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    # Auth: the login flow gives a short-lived access token; it asks the websocket API for a long-lived one
    # (what a user would paste into lanpush's config).

    def create_token(self) -> str:
        client_id = f"{self.url}/"
        status, flow = self.rest("POST", "/auth/login_flow", {
            "client_id": client_id, "handler": ["homeassistant", None], "redirect_uri": client_id}, auth=False)
        if status != 200:
            raise ValueError(f"login_flow: {status} {flow}")
        status, done = self.rest("POST", f"/auth/login_flow/{flow['flow_id']}", {
            "client_id": client_id, "username": USER, "password": PASSWORD}, auth=False)
        if status != 200 or done.get("type") != "create_entry":
            raise ValueError(f"login: {status} {done}")
        form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": done["result"],
                                       "client_id": client_id})
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("POST", "/auth/token", body=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
        r = c.getresponse()
        grant = json.loads(r.read())
        c.close()
        if r.status != 200:
            raise ValueError(f"token: {r.status} {grant}")
        with self.websocket(grant["access_token"]) as ws:
            return ws.call("auth/long_lived_access_token", client_name="lanpush test", lifespan=30)

    # HTTP and websocket API

    def rest(self, method, path, body=None, auth=True, timeout=15):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        c.request(method, path, body=data, headers=headers)
        r = c.getresponse()
        text = r.read()
        c.close()
        try:
            return r.status, json.loads(text) if text else None
        except ValueError:
            return r.status, text.decode(errors="replace")

    def websocket(self, token=None) -> "HAWebSocket":
        return HAWebSocket(f"ws://127.0.0.1:{self.port}/api/websocket", token or self.token)

    def notify_services(self) -> set[str]:
        status, services = self.rest("GET", "/api/services")
        assert status == 200, services
        for domain in services:
            if domain["domain"] == "notify":
                return set(domain["services"])
        return set()

    def notify(self, service: str, title=None, message=None, data=None):
        body = {"message": message}
        if title is not None:
            body["title"] = title
        if data is not None:
            body["data"] = data
        return self.rest("POST", f"/api/services/notify/{service}", body)

    def entities(self, platform="mobile_app"):
        """The entity registry's entries of `platform`."""
        with self.websocket() as ws:
            return [e for e in ws.call("config/entity_registry/list") if e["platform"] == platform]

    def state(self, entity_id):
        status, body = self.rest("GET", f"/api/states/{entity_id}")
        return body if status == 200 else None

    def stored_config_entries(self, domain="mobile_app"):
        """Config entries as HA stored them (with their data, which no API shows): `.storage/core.config_entries`."""
        path = self.config / ".storage" / "core.config_entries"
        return [e for e in json.loads(path.read_text())["data"]["entries"] if e["domain"] == domain]

    def registry(self):
        """(mobile_app devices of the device registry, mobile_app config entries)."""
        with self.websocket() as ws:
            devices = [d for d in ws.call("config/device_registry/list")
                       if any(i[0] == "mobile_app" for i in d["identifiers"])]
            entries = ws.call("config_entries/get", domain="mobile_app")
        return devices, entries


class HAWebSocket:
    """A plain client of HA's /api/websocket (Python websockets): an independent witness."""

    def __init__(self, url, token):
        self.ws = wsclient.connect(url, open_timeout=10, max_size=None)
        assert json.loads(self.ws.recv(timeout=10))["type"] == "auth_required"
        self.ws.send(json.dumps({"type": "auth", "access_token": token}))
        answer = json.loads(self.ws.recv(timeout=10))
        assert answer["type"] == "auth_ok", answer
        self.next_id = 1

    def send(self, type_, **fields) -> int:
        ident = self.next_id
        self.next_id += 1
        self.ws.send(json.dumps({"id": ident, "type": type_, **fields}))
        return ident

    def recv(self, timeout=10):
        return json.loads(self.ws.recv(timeout=timeout))

    def call(self, type_, **fields):
        ident = self.send(type_, **fields)
        deadline = time.time() + 15
        while time.time() < deadline:
            msg = self.recv(timeout=max(0.1, deadline - time.time()))
            if msg.get("id") == ident and msg.get("type") == "result":
                if not msg["success"]:
                    raise RuntimeError(f"{type_}: {msg['error']}")
                return msg["result"]
        raise TimeoutError(type_)

    def close(self):
        self.ws.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


if __name__ == "__main__":
    print(ensure_venv())
    sys.exit(0)
