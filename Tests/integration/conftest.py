import subprocess

import pytest

from gateway import BINARY, ROOT, Gateway


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
