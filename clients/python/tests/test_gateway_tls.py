"""Pinning against lanpushd's own TLS (`tls: {enabled: true}`: wss:// and https:// on its one port, a self-signed
certificate made at first start, its fingerprint in the pairing URL). A lanpushd without TLS serving (before main's
TLS commit) puts no `fp` in the pairing URL: these tests are skipped then; test_tls.py covers the same logic
against local self-signed servers either way."""
import asyncio
from urllib.parse import parse_qs, urlsplit

import pytest

from fakes import eventually
from lanpush import Backoff, LanpushClient, MemoryStore, PairingURL, pair
from live import converged, live, push
from payloads import ev


async def tls_pairing(gateway, device):
    gw = gateway(devices=("phone",), extra="tls: {enabled: true, plain: false}\n")
    status, made = await asyncio.to_thread(gw.request, "POST", "/v1/pairings", {"device": device}, gw.admin_headers())
    assert status == 201, made
    if "fp" not in parse_qs(urlsplit(made["url"]).query):
        pytest.skip("this lanpushd serves no TLS (no fp in its pairing URL)")
    return gw, made["url"]


async def test_a_paired_client_pins_lanpushds_certificate_and_streams_over_wss(gateway):
    gw, url = await tls_pairing(gateway, "eink-pi")
    pinned = PairingURL.parse(url).fingerprint
    credentials = await pair(url)  # over https://, pinned to the URL's fp
    assert credentials.fingerprint == pinned
    assert credentials.stream_url == f"wss://127.0.0.1:{gw.port}/v1/stream"
    async with LanpushClient.from_credentials(credentials, store=MemoryStore()) as client:
        await live(client)
        await push(gw, "eink-pi", ev(60))
        await converged(client, gw, device="eink-pi")


async def test_a_client_pinning_another_fingerprint_never_gets_in(gateway):
    gw, url = await tls_pairing(gateway, "eink-pi")
    credentials = await pair(url)
    wrong = ("0" if credentials.fingerprint[0] != "0" else "1") + credentials.fingerprint[1:]
    client = LanpushClient(credentials.stream_url, credentials.token, fingerprint=wrong, store=MemoryStore(),
                           backoff=Backoff(initial=0.05, maximum=0.1))
    errors = []
    client.on("error", errors.append)
    async with client:
        await eventually(lambda: _assert(len(errors) >= 2), 5)
        assert client.status != "live"
    assert all("not the pinned" in e.message for e in errors), errors
    listed = next(d for d in gw.get("/v1/devices")[1]["devices"] if d["id"] == "eink-pi")
    assert not listed["connected"]


def _assert(value):
    assert value
