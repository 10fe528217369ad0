"""The Python examples in docs/CLIENTS.md and clients/python/README.md, run as written against the real lanpushd
(only the gateway's address, the token or pairing URL and the state folder are filled in)."""
import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

from live import push
from payloads import ev

ROOT = Path(__file__).resolve().parents[3]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


async def run_until(code, trigger, act, lines_wanted, timeout=15):
    """Runs `code` in a fresh interpreter; calls `act()` once it printed a line with `trigger`; returns its output
    once every wanted line appeared."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-u", "-c", code, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT, env={**os.environ})
    out, acted = [], False
    try:
        async def read():
            nonlocal acted
            while not all(any(w in line for line in out) for w in lines_wanted):
                line = (await proc.stdout.readline()).decode()
                if not line:
                    raise AssertionError("the example ended:\n" + "".join(out))
                out.append(line)
                if not acted and trigger in line:
                    acted = True
                    await act()
        await asyncio.wait_for(read(), timeout)
    finally:
        proc.kill()
        await proc.wait()
    return "".join(out)


async def test_the_clients_md_example_pairs_connects_and_prints_activities(gateway, tmp_path):
    gw = gateway()
    code = next(b for b in python_blocks(ROOT / "docs" / "CLIENTS.md") if "pair(" in b)
    status, made = gw.request("POST", "/v1/pairings", {"device": "kitchen-pi"}, gw.admin_headers())
    assert status == 201
    code = code.replace("lanpush://192.168.1.5:8765/pair?code=…", made["url"])
    code = code.replace("~/.local/state/lanpush", str(tmp_path / "state"))

    async def act():
        await push(gw, "kitchen-pi", ev(30))

    out = await run_until(code, "connection: live", act, ["ev-charging Charging · 30%"])
    assert "connection: connecting" in out
    assert list((tmp_path / "state").iterdir()), "the state was stored"


async def test_the_readme_example_connects_with_a_token_and_prints_activities(gateway, tmp_path):
    gw = gateway()
    code = python_blocks(ROOT / "clients" / "python" / "README.md")[0]
    code = code.replace("ws://192.168.1.5:8765", f"ws://127.0.0.1:{gw.port}").replace("<device token>", gw.tokens["phone"])
    code = code.replace("~/.local/state/lanpush", str(tmp_path / "state"))
    await push(gw, "phone", ev(10))

    async def notify():
        await push(gw, "phone", {"message": "Door open", "data": {"tag": "door"}})

    out = await run_until(code, "ev-charging snapshot", notify, ["notification: Door open"])
    assert "'critical_text': '10%'" in out
