"""Discovery: the gateway's `_lanpush._tcp` service as an independent client sees it.

Every test builds its own pair of network namespaces (see netns.py): the publisher, a private dbus-daemon and
avahi-daemon run in A; python-zeroconf (the mDNS library Home Assistant uses) browses — or publishes a
rival service — from B. Run as root:

    .venv-test/bin/python -m pytest -v Tests/integration/test_discovery.py

The last test is the point of it all: a device client in B connects to the address and port zeroconf resolved
and receives an update posted to that address.

The process under test is chosen by PUBLISHER below: the `integrationPublisher` Swift test (a thin wrapper
around LanpushAvahi.ServicePublisher) until lanpushd exists, then lanpushd itself.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from netns import REPO_ROOT, ManagedProcess, NetnsUnavailable, TestBed, netns_permitted, zc_events

SERVICE_TYPE = "_lanpush._tcp.local."
# lanpushd's config in namespace A: the admin token the LAN client in B posts with, and the device it logs in as.
ADMIN_TOKEN = "integration-test-admin-token-0123456"
DEVICE_ID = "discovery-client"
DEVICE_TOKEN = "discovery-test-device-token-0123"


@dataclass
class Service:
    name: str
    port: int
    # What the probe publishes; lanpushd builds its own TXT and must produce the same keys.
    txt: list[tuple[str, str]] = field(default_factory=lambda: [
        ("txtvers", "1"),
        ("id", uuid.uuid4().hex[:16]),
        ("proto", "lanpush.v1"),
        ("path", "/v1/stream"),
        ("version", "0.0.0-test"),
        ("tls", "0"),
    ])


def _swift_build(args: list[str]) -> None:
    scratch = os.environ.get("LANPUSH_SCRATCH_PATH", ".build")
    subprocess.run(["swift", "build", "--scratch-path", scratch, *args], cwd=REPO_ROOT, check=True,
                   timeout=1800)


def _scratch() -> Path:
    return (REPO_ROOT / os.environ.get("LANPUSH_SCRATCH_PATH", ".build")).resolve()


class ProbePublisher:
    """Tests/LanpushAvahiTests `integrationPublisher`: publishes via ServicePublisher until SIGTERM."""

    retry_interval = 1.0  # seconds before the first D-Bus retry (lanpushd uses ServicePublisher's default, 5 s)

    @staticmethod
    def prepare() -> None:
        if os.environ.get("LANPUSH_AVAHI_PROBE_BINARY"):
            return
        if os.environ.get("LANPUSH_REBUILD") or not (_scratch() / "debug" / "lanpushPackageTests.xctest").exists():
            _swift_build(["--build-tests"])

    @staticmethod
    def binary() -> str:
        explicit = os.environ.get("LANPUSH_AVAHI_PROBE_BINARY")
        path = Path(explicit) if explicit else _scratch() / "debug" / "lanpushPackageTests.xctest"
        if not path.exists():
            pytest.fail(f"test bundle {path} not found: build with `swift build --build-tests`")
        return str(path)

    def command(self, bed: TestBed, service: Service, workdir: Path) -> tuple[list[str], dict[str, str]]:
        env = {
            "LANPUSH_AVAHI_TEST_SERVICE_NAME": service.name,
            "LANPUSH_AVAHI_TEST_PORT": str(service.port),
            "LANPUSH_AVAHI_TEST_TXT": "\n".join(f"{k}={v}" for k, v in service.txt),
            "LANPUSH_AVAHI_TEST_RETRY": str(self.retry_interval),
            "LANPUSH_AVAHI_TEST_SECONDS": "300",
        }
        argv = [self.binary(), "--testing-library", "swift-testing", "--filter", "integrationPublisher"]
        return argv, env


class LanpushdPublisher:
    """lanpushd itself, listening on namespace A's veth address, with mDNS on under the given name."""

    retry_interval = 5.0
    extra_args: list[str] = []  # e.g. flags that turn off whatever the discovery tests do not need

    @staticmethod
    def prepare() -> None:
        if os.environ.get("LANPUSHD_BINARY"):
            return
        if os.environ.get("LANPUSH_REBUILD") or not (_scratch() / "debug" / "lanpushd").exists():
            _swift_build(["--product", "lanpushd"])

    @staticmethod
    def binary() -> str:
        explicit = os.environ.get("LANPUSHD_BINARY")
        path = Path(explicit) if explicit else _scratch() / "debug" / "lanpushd"
        if not path.exists():
            pytest.fail(f"{path} not found: build with `swift build --product lanpushd`")
        return str(path)

    def command(self, bed: TestBed, service: Service, workdir: Path) -> tuple[list[str], dict[str, str]]:
        state = workdir / "state"
        state.mkdir(parents=True, exist_ok=True)
        config = workdir / "lanpushd.yaml"
        config.write_text(
            f'listen: "{bed.addr_a}:{service.port}"\n'
            f'admin_token: "{ADMIN_TOKEN}"\n'
            f"log_level: debug\n"
            f"mdns:\n  enabled: true\n  name: \"{service.name}\"\n"
            f'devices:\n  - {{id: {DEVICE_ID}, name: Discovery client, token: "{DEVICE_TOKEN}"}}\n'
        )
        argv = [self.binary(), *self.extra_args, "--listen", f"{bed.addr_a}:{service.port}",
                "--state-dir", str(state), "--config", str(config)]
        return argv, {}


# The process under test: lanpushd itself (ProbePublisher runs the Swift test bundle instead).
PUBLISHER = LanpushdPublisher()


# --------------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="session")
def publisher_ready() -> None:
    ok, why = netns_permitted()
    if not ok:
        pytest.skip(f"discovery tests need network namespaces: {why}")
    PUBLISHER.prepare()


@pytest.fixture
def bed(publisher_ready):
    try:
        testbed = TestBed(python=sys.executable).open()  # zc_tool.py runs with this (venv) interpreter
    except NetnsUnavailable as exc:
        pytest.skip(f"`ip netns add` is not permitted here: {exc}")
    try:
        yield testbed
    finally:
        print(testbed.logs())  # pytest shows it for failing tests only
        testbed.close()


def start_publisher(bed: TestBed, service: Service, bus_address: str | None = None) -> ManagedProcess:
    workdir = bed.tmp / f"publisher-{service.port}"
    workdir.mkdir(exist_ok=True)
    argv, env = PUBLISHER.command(bed, service, workdir)
    env["DBUS_SYSTEM_BUS_ADDRESS"] = bus_address or bed.bus_address
    return bed.spawn(bed.ns_a, "publisher", argv, env)


def assert_ours(info: dict, bed: TestBed, service: Service) -> None:
    assert info["port"] == service.port, info
    assert bed.addr_a in info["addresses"], info
    assert info["server"] == f"{bed.host_a}.local.", info
    txt = info["txt"]
    for key in ("txtvers", "id", "proto", "path", "version", "tls"):
        assert txt.get(key), f"TXT lacks {key}: {info['txt_raw']}"
    assert txt["txtvers"] == "1"
    assert txt["proto"] == "lanpush.v1"
    assert txt["path"] == "/v1/stream"
    assert info["txt_raw"][0].startswith("txtvers="), f"txtvers should come first: {info['txt_raw']}"


def found(bed: TestBed, names: list[str], timeout: float = 20) -> dict[str, dict]:
    services = bed.browse(want=names, timeout=timeout)
    missing = [n for n in names if n not in services]
    assert not missing, f"zeroconf in B did not resolve {missing}; saw {sorted(services)}\n{bed.logs()}"
    return services


def wait_until_gone(bed: TestBed, name: str, timeout: float = 10) -> None:
    """Asserts that a fresh browser in B no longer finds `name`."""
    deadline = time.monotonic() + timeout
    while True:
        services = bed.browse(timeout=3)
        if name not in services:
            return
        assert time.monotonic() < deadline, f"{name} still announced: {services[name]}"


# --------------------------------------------------------------------------------------------------
# Tests


def test_zeroconf_resolves_service_with_txt(bed: TestBed):
    bed.start_dbus()
    bed.start_avahi()
    service = Service(name=f"Lanpush Test {os.getpid()}", port=18765)
    publisher = start_publisher(bed, service)

    services = found(bed, [service.name])
    assert_ours(services[service.name], bed, service)
    if isinstance(PUBLISHER, ProbePublisher):
        assert services[service.name]["txt"] == dict(service.txt)
        assert services[service.name]["txt_raw"] == [f"{k}={v}" for k, v in service.txt]
    assert publisher.alive(), publisher.tail()


def test_republishes_after_avahi_daemon_restart(bed: TestBed):
    bed.start_dbus()
    bed.start_avahi()
    service = Service(name="Restart Test", port=18766)
    publisher = start_publisher(bed, service)
    found(bed, [service.name])

    for sig in (signal.SIGTERM, signal.SIGKILL):  # a clean stop, then a crash (no goodbye packets)
        mark = publisher.line_count()
        bed.stop_avahi(sig)
        assert publisher.wait_for(r"lost avahi-daemon", 10, start=mark), publisher.tail()
        if sig == signal.SIGTERM:
            wait_until_gone(bed, service.name)  # avahi-daemon sent goodbyes: really withdrawn
        bed.start_avahi()
        services = found(bed, [service.name])
        assert_ours(services[service.name], bed, service)
        assert publisher.wait_for(r"avahi-daemon is available again", 10, start=mark), publisher.tail()
        assert publisher.alive(), publisher.tail()


def test_publisher_started_before_avahi_daemon(bed: TestBed):
    bed.start_dbus()
    service = Service(name="Early Bird", port=18767)
    publisher = start_publisher(bed, service)
    assert publisher.wait_for(r"avahi-daemon is not running", 15), publisher.tail()
    time.sleep(1.5)
    bed.start_avahi()
    services = found(bed, [service.name])
    assert_ours(services[service.name], bed, service)
    assert len(publisher.matching(r"avahi-daemon is not running")) == 1, publisher.tail()


def test_name_collision_takes_alternative_name(bed: TestBed):
    bed.start_dbus()
    bed.start_avahi()
    name = "Collision Test"
    rival = bed.zc_register(name, port=9999, txt={"rival": "zeroconf"})

    service = Service(name=name, port=18768)
    publisher = start_publisher(bed, service)
    alternative = f"{name} #2"
    services = found(bed, [name, alternative])

    assert services[name]["port"] == 9999 and services[name]["addresses"] == [bed.addr_b], services[name]
    assert_ours(services[alternative], bed, service)
    assert publisher.wait_for(rf"publishing as '{alternative}'", 5), publisher.tail()
    assert rival.alive() and publisher.alive()


def test_without_dbus_publisher_keeps_retrying(bed: TestBed):
    # No bus at all yet: avahi_client_new fails even with AVAHI_CLIENT_NO_FAIL.
    service = Service(name="No Bus Test", port=18769)
    publisher = start_publisher(bed, service)
    assert publisher.wait_for(r"cannot reach the D-Bus system bus", 15), publisher.tail()
    # The retries back off, doubling from retry_interval: attempts at 0, 1, 3, 7, 15 intervals after the first.
    time.sleep(3 * PUBLISHER.retry_interval + 1)  # two retries
    assert publisher.alive(), publisher.tail()
    assert len(publisher.matching(r"cannot reach the D-Bus system bus")) == 1, \
        "one warning per outage, not one per retry\n" + publisher.tail()
    assert not publisher.matching(r"still unreachable"), publisher.tail()

    # The bus and the daemon appear: the next retry (the third, at most 4 intervals away) publishes.
    bed.start_dbus()
    bed.start_avahi()
    services = found(bed, [service.name], timeout=4 * PUBLISHER.retry_interval + 20)
    assert_ours(services[service.name], bed, service)
    assert len(publisher.matching(r"cannot reach the D-Bus system bus")) == 1, publisher.tail()
    assert len(publisher.matching(r"D-Bus system bus reachable again")) == 1, publisher.tail()


def test_stop_withdraws_service(bed: TestBed):
    bed.start_dbus()
    bed.start_avahi()
    service = Service(name="Goodbye Test", port=18770)
    publisher = start_publisher(bed, service)

    watcher = bed.zc_browse(want=[service.name], gone=service.name, timeout=40)
    assert watcher.wait_for(r'"event": "found"', 20), watcher.tail()
    rc = publisher.stop(signal.SIGTERM)
    assert rc == 0, publisher.tail()
    assert watcher.wait_for(r'"event": "removed"', 10), \
        f"no goodbye seen by zeroconf\n{watcher.tail()}\n{publisher.tail()}"
    assert any(e.get("event") == "removed" and e.get("name") == service.name for e in zc_events(watcher))


def test_service_browser_finds_zeroconf_service(bed: TestBed):
    """LanpushAvahi.ServiceBrowser (behind `lanpush discover`) in A finds a service zeroconf publishes in B."""
    bed.start_dbus()
    bed.start_avahi()
    rival = bed.zc_register("Zeroconf Peer", port=4321, txt={"txtvers": "1", "proto": "lanpush.v1", "bare": ""})
    env = {
        "DBUS_SYSTEM_BUS_ADDRESS": bed.bus_address,
        "LANPUSH_AVAHI_TEST_BROWSE": "1",
        "LANPUSH_AVAHI_TEST_BROWSE_TIMEOUT": "10",
    }
    argv = [ProbePublisher.binary(), "--testing-library", "swift-testing", "--filter", "integrationBrowse"]
    browser = bed.spawn(bed.ns_a, "service-browser", argv, env)
    line = browser.wait_for(r"^lanpush-browse: ", 30)
    assert line, browser.tail()
    result = json.loads(line.split(": ", 1)[1])
    assert "error" not in result, result
    services = {s["name"]: s for s in result["services"]}
    assert "Zeroconf Peer" in services, result
    peer = services["Zeroconf Peer"]
    assert peer["address"] == bed.addr_b and peer["port"] == 4321, peer
    assert peer["type"] == "_lanpush._tcp" and peer["domain"] == "local", peer
    assert peer["host_name"] == "lanpush-zc-peer.local", peer
    assert peer["txt"] == {"txtvers": "1", "proto": "lanpush.v1", "bare": ""}, peer
    assert result["elapsed"] < 9, f"browse should end at all-for-now, not at the timeout: {result['elapsed']} s"
    assert browser.stop() == 0 or not browser.alive()
    assert rival.alive()


def test_service_browser_without_daemon_reports_error(bed: TestBed):
    bed.start_dbus()  # a bus, but no avahi-daemon on it
    env = {"DBUS_SYSTEM_BUS_ADDRESS": bed.bus_address, "LANPUSH_AVAHI_TEST_BROWSE": "1"}
    argv = [ProbePublisher.binary(), "--testing-library", "swift-testing", "--filter", "integrationBrowse"]
    browser = bed.spawn(bed.ns_a, "service-browser", argv, env)
    line = browser.wait_for(r"^lanpush-browse: ", 30)
    assert line, browser.tail()
    result = json.loads(line.split(": ", 1)[1])
    assert "error" in result and result["elapsed"] < 3, result


def test_client_in_b_uses_the_advertised_address_and_receives_an_update(bed: TestBed):
    """The whole point of discovery: a client in B knows nothing but what zeroconf resolved (address, port, TXT
    path and proto), connects there, logs in as a configured device and gets an update posted to that address."""
    if not isinstance(PUBLISHER, LanpushdPublisher):
        pytest.skip("the probe publisher serves no WebSocket: this step needs lanpushd")
    bed.start_dbus()
    bed.start_avahi()
    service = Service(name="Client Test", port=18771)
    publisher = start_publisher(bed, service)
    info = found(bed, [service.name])[service.name]
    assert_ours(info, bed, service)
    address, port, txt = info["addresses"][0], info["port"], info["txt"]

    result = bed.lan_client(address, port, txt["path"], DEVICE_TOKEN,
                            push={"admin_token": ADMIN_TOKEN, "target": DEVICE_ID})
    assert result["subprotocol"] == txt["proto"] == "lanpush.v1", result
    assert result["auth"]["type"] == "auth_ok" and result["auth"]["device_id"] == DEVICE_ID, result
    assert result["push_status"] == 202, result
    assert result["push_answer"]["results"] == [{"target": DEVICE_ID, "result": "delivered"}], result
    start = result["start"]
    assert start["attributes"]["title"] == "Washing Machine", start
    assert start["state"]["message"] == "Rinsing", start
    assert start["state"]["progress"] == 900 and start["state"]["progress_max"] == 3600, start
    # It came live, after the subscription was synced (not in a snapshot).
    kinds = [f["type"] for f in result["frames"]]
    assert kinds.index("synced") < kinds.index("start"), kinds
    assert publisher.alive(), publisher.tail()
