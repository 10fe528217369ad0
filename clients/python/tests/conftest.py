"""Shared test set-up: `async def` tests run on a fresh event loop each, and the real lanpushd is started the way
Tests/integration/gateway.py starts it (that module is reused: temp config, loopback, mDNS off, `LANPUSHD=`)."""
import asyncio
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "Tests" / "integration"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gateway import BINARY, Gateway  # noqa: E402  (Tests/integration/gateway.py)

# No test may hang the suite: an async test that takes longer than this fails.
ASYNC_TEST_TIMEOUT = 60


def pytest_pyfunc_call(pyfuncitem):
    """Runs `async def` tests without a plugin (pytest-asyncio would be one more dependency)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(asyncio.wait_for(pyfuncitem.obj(**args), ASYNC_TEST_TIMEOUT))
    return True


@pytest.fixture
def gateway():
    """Starts lanpushd processes (`gateway(session={...})`); every one is stopped after the test."""
    if not BINARY.exists():
        subprocess.run(["swift", "build", "--product", "lanpushd"], cwd=ROOT, check=True)
    started = []

    def make(**kw):
        gw = Gateway(**kw).start()
        started.append(gw)
        return gw

    yield make
    for gw in started:
        gw.stop()
