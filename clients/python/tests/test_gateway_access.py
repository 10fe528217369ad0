"""Getting in, against the real lanpushd: pairing (the library redeems the URL and connects), a token replaced by
a new pairing (4001 for the old session), and a rate-limited address (4029: wait, then the same token works)."""
import asyncio
import json
import os
import stat

import pytest
import websockets

from fakes import eventually
from lanpush import Backoff, Credentials, LanpushClient, MemoryStore, PairingError, PairingURL, pair
from live import converged, live, push
from payloads import ev


async def new_pairing(gw, device):
    status, body = await asyncio.to_thread(gw.request, "POST", "/v1/pairings", {"device": device, "name": "Kitchen Pi"},
                                           gw.admin_headers())
    assert status == 201, body
    return body


async def test_pairing_redeems_the_url_stores_the_token_and_connects(gateway, tmp_path):
    gw = gateway()
    made = await new_pairing(gw, "kitchen-pi")
    url = PairingURL.parse(made["url"])
    assert url.host == f"127.0.0.1:{gw.port}" and url.fingerprint is None, made["url"]  # TLS is off here
    credentials = await pair(made["url"])
    assert credentials.device_id == "kitchen-pi" and credentials.stream_url == f"ws://127.0.0.1:{gw.port}/v1/stream"
    path = tmp_path / "lanpush" / "credentials.json"
    credentials.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, "the token is a password: readable by this user only"
    assert Credentials.load(path) == credentials
    # The code is used up.
    with pytest.raises(PairingError) as refused:
        await pair(made["url"])
    assert refused.value.status == 403

    client = LanpushClient.from_credentials(Credentials.load(path), store=MemoryStore())
    async with client:
        await live(client)
        assert client.device_id == "kitchen-pi"
        await push(gw, "kitchen-pi", ev(30))
        await converged(client, gw, device="kitchen-pi")


async def test_the_short_code_typed_by_hand_works_too(gateway):
    gw = gateway()
    made = await new_pairing(gw, "hall-pi")
    typed = made["short_code"].lower().replace("-", " ")  # case and separators do not matter
    credentials = await pair(PairingURL(f"127.0.0.1:{gw.port}", typed))
    assert credentials.device_id == "hall-pi"


async def test_pairing_the_device_again_rejects_the_old_token_with_4001(gateway):
    gw = gateway()
    first = await pair((await new_pairing(gw, "desk-pi"))["url"])
    client = LanpushClient.from_credentials(first, backoff=Backoff(initial=0.05, maximum=0.1))
    rejected = []
    client.on("auth_rejected", rejected.append)
    task = client.start()
    await live(client)
    second = await pair((await new_pairing(gw, "desk-pi"))["url"])
    assert second.token != first.token
    await asyncio.wait_for(task, 5)  # the old session closed with 4001: the client stops by itself
    assert client.status == "auth_rejected" and [r.code for r in rejected] == [4001]


async def test_a_rate_limited_address_gets_4029_the_client_waits_and_gets_in(gateway):
    gw = gateway(limits={"auth_failures": 2, "auth_window": 2})
    for _ in range(2):  # two failed authentications from 127.0.0.1
        async with websockets.connect(f"ws://127.0.0.1:{gw.port}/v1/stream") as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "auth", "token": "wrong"}))
            assert json.loads(await ws.recv())["type"] == "auth_invalid"
    client = LanpushClient(f"ws://127.0.0.1:{gw.port}/v1/stream", gw.tokens["phone"],
                           backoff=Backoff(initial=0.05, maximum=0.1))
    statuses = []
    client.on("status", statuses.append)
    async with client:
        await eventually(lambda: _offline_4029(statuses), 5)
        waited = next(s for s in statuses if s.code == 4029)
        assert 0 < waited.retry_in <= 2 * 1.1, f"waited as told: {waited}"
        await live(client, timeout=10)  # the same token, once the window passed


def _offline_4029(statuses):
    assert any(s.status == "offline" and s.code == 4029 for s in statuses), statuses
