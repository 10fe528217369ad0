"""The shared protocol vectors (Tests/Fixtures/protocol, docs/CLIENTS.md "Protocol vectors"), replayed twice: through
the pure reducer, and through LanpushClient over a scripted socket — which also checks the subscribe frames, the
cumulative acks and that the state was saved before each ack."""
import json
from pathlib import Path

import pytest

from fakes import FakeConnector, eventually, handshake, settle
from lanpush import LanpushClient, MemoryStore, reduce
from lanpush.merge_patch import json_equal

VECTORS = sorted((Path(__file__).resolve().parents[3] / "Tests" / "Fixtures" / "protocol").glob("*.json"))


def load(path):
    vector = json.loads(path.read_text())
    assert vector["format"] == 1, f"{path.name}: unknown vector format"
    return vector


def test_every_vector_named_in_clients_md_is_there():
    names = {load(p)["name"] for p in VECTORS}
    assert names >= {"snapshot", "start", "merged-updates", "end", "lifecycle", "notifications", "clear",
                     "replay-after-resume", "new-epoch", "out-of-window-merge", "unsafe-resume", "templates"}


def want_subscribe(state):
    if state["epoch"] is None:
        return {"type": "subscribe"}
    return {"type": "subscribe", "epoch": state["epoch"], "seq": state["seq"]}


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_reducer(path):
    vector = load(path)
    state = vector["initial"]
    frames = 0
    for i, step in enumerate(vector["steps"]):
        if "subscribe" in step:
            assert step["subscribe"] == want_subscribe(state), f"step {i}: the resume point"
            continue
        result = reduce(state, step["frame"], now=step["now"])
        assert result.resync is None, f"step {i}: {result.resync}"
        assert json_equal(result.state, step["state"]), f"step {i} ({step['frame']['type']}): {result.state}"
        assert result.ack == step["ack"], f"step {i}: ack"
        state = result.state
        frames += 1
    assert frames > 0


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
async def test_client_over_a_socket(path):
    vector = load(path)
    connector = FakeConnector()
    store = MemoryStore()
    store.save("vector", vector["initial"])
    now = [0.0]
    client = LanpushClient("ws://gateway.test/v1/stream", "t", store=store, store_key="vector", connector=connector,
                           clock=lambda: now[0], keepalive_interval=None)
    client.start()
    transport = None
    highest_ack = -1
    sessions = 0
    for i, step in enumerate(vector["steps"]):
        now[0] = step["now"]
        if "subscribe" in step:
            if transport is not None:
                transport.server_close(1001, "going away")
            sessions += 1
            transport = await handshake(connector, sessions)
            assert transport.subprotocols == ["lanpush.v1"]
            assert transport.sent[0] == {"type": "auth", "token": "t"}
            assert transport.sent_of("subscribe") == [step["subscribe"]], f"step {i}: subscribe"
            highest_ack = -1
            continue
        acks_before = len(transport.sent_of("ack"))
        saved = []
        transport.on_send = lambda f: saved.append(store.load("vector")) if f["type"] == "ack" else None
        transport.receive(step["frame"])
        if step["ack"] is None:
            await eventually(lambda: json_equal(client.state, step["state"]) or _fail(client.state))
            await settle()  # an ack, if one were (wrongly) sent, would be out by now
            assert len(transport.sent_of("ack")) == acks_before, f"step {i}: no ack for {step['frame']['type']}"
        else:
            highest_ack = max(highest_ack, step["ack"])
            await eventually(lambda: _assert(len(transport.sent_of("ack")) > acks_before))
            assert transport.sent_of("ack")[-1] == {"type": "ack", "seq": highest_ack}, f"step {i}: cumulative ack"
            assert json_equal(client.state, step["state"]), f"step {i}: state {client.state}"
            assert json_equal(saved[-1], step["state"]), f"step {i}: saved before the ack"
    await client.stop()


def _assert(value):
    assert value


def _fail(state):
    raise AssertionError(f"state {state}")
