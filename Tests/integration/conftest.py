import subprocess

import pytest

from gateway import BINARY, ROOT, Gateway


def pytest_configure(config):
    # test_home_assistant.py runs a real Home Assistant (a cached venv, ~1-2 min a run): the quick local loop
    # skips it with `-m "not home_assistant"`; CI runs everything.
    config.addinivalue_line("markers", "home_assistant: starts a real Home Assistant on loopback (slow)")


def pytest_sessionstart(session):
    if not BINARY.exists():
        subprocess.run(["swift", "build", "--product", "lanpushd"], cwd=ROOT, check=True)


@pytest.fixture
def gateway():
    gws = []

    def make(**kw):
        gw = Gateway(**kw).start()
        gws.append(gw)
        return gw

    yield make
    for gw in gws:
        gw.stop()
