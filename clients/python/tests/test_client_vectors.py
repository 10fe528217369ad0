"""The client rules shared with the TypeScript and Swift libraries (Tests/Fixtures/protocol/client, docs/CLIENTS.md
"Protocol vectors"): what a closed session means for the next attempt, what a pairing URL or a typed code names, and
when the client acks what a read brought."""
import json
from pathlib import Path

import pytest

from fakes import FakeConnector, eventually, handshake, settle
from lanpush import CloseInfo, LanpushClient, PairingURL, classify_close

CLIENT = Path(__file__).resolve().parents[3] / "Tests" / "Fixtures" / "protocol" / "client"


def load(name):
    vector = json.loads((CLIENT / f"{name}.json").read_text())
    assert vector["format"] == 1 and vector["name"] == name, f"{name}.json: format {vector['format']}"
    return vector


CLOSE = load("close-codes")["cases"]
PAIRING = load("pairing")["cases"]
ACKS = load("acks")


def test_every_close_code_the_gateway_sends_has_a_case():
    assert {c["close"]["code"] for c in CLOSE} >= {4001, 4002, 4003, 4029, 1001, 1011, 1013, 1009, 1003, None}


@pytest.mark.parametrize("case", CLOSE, ids=lambda c: f"{c['close']['code']}-{c['close']['reason'] or 'no reason'}")
def test_close_code(case):
    known = case["close"]
    action = classify_close(CloseInfo(code=known["code"], reason=known["reason"],
                                      auth_invalid=known.get("auth_invalid"), last_error=known.get("last_error")))
    assert action.kind == case["action"]
    if case["action"] == "auth_rejected":
        assert action.message == case["message"]
    else:
        assert action.seconds == case["delay"]


@pytest.mark.parametrize("case", PAIRING, ids=lambda c: c["why"])
def test_pairing(case):
    given = case.get("given", {})
    if case.get("error"):
        with pytest.raises(ValueError):
            PairingURL.read(case["input"], **given)
        return
    read = PairingURL.read(case["input"], **given)
    hosts = read.hosts
    assert {"address": hosts[0], "alternates": hosts[1:], "code": read.code, "fingerprint": read.fingerprint} \
        == case["read"]


@pytest.mark.parametrize("case", ACKS["cases"], ids=lambda c: c["name"])
async def test_acks(case):
    connector = FakeConnector()
    client = LanpushClient("ws://gateway.test/v1/stream", "t", connector=connector, window=ACKS["window"],
                           clock=lambda: ACKS["now"], keepalive_interval=None)
    client.start()
    transport = await handshake(connector)
    assert transport.sent_of("subscribe") == [{"type": "subscribe"}]
    for i, read in enumerate(case["reads"]):
        before = len(transport.sent_of("ack"))
        for frame in read["frames"]:  # one read: all of it arrives before the client handles the first
            transport.receive(frame)
        await eventually(lambda: _assert(len(transport.sent_of("ack")) - before >= len(read["acks"])))
        await settle()  # an ack too many would be out by now
        assert [a["seq"] for a in transport.sent_of("ack")[before:]] == read["acks"], f"read {i}"
    await client.stop()


def _assert(value):
    assert value
