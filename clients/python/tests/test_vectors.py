"""The shared protocol vectors (Tests/Fixtures/protocol, docs/CLIENTS.md "Protocol vectors"), replayed twice: through
the pure reducer, and through LanpushClient over a scripted socket — which also checks the subscribe frames, the
cumulative acks and that the state was saved before each ack. Both recordings are replayed: v1's objects, and v2's
(protocol/v2: the same scenarios with the activity frames as arrays), which must lead to the same states and acks."""
import json
from pathlib import Path

import pytest

from fakes import FakeConnector, eventually, handshake, settle
from lanpush import LanpushClient, MemoryStore, reduce
from lanpush.frames import parse_frame
from lanpush.merge_patch import json_equal

FIXTURES = Path(__file__).resolve().parents[3] / "Tests" / "Fixtures" / "protocol"
V1 = sorted(FIXTURES.glob("*.json"))
V2 = sorted((FIXTURES / "v2").glob("*.json"))
VECTORS = [pytest.param(p, "lanpush.v1", id=p.stem) for p in V1] + \
          [pytest.param(p, "lanpush.v2", id=f"v2-{p.stem}") for p in V2]
NAMES = {"snapshot", "start", "merged-updates", "end", "lifecycle", "notifications", "clear", "replay-after-resume",
         "new-epoch", "out-of-window-merge", "unsafe-resume", "templates"}


def load(path, protocol="lanpush.v1"):
    vector = json.loads(path.read_text())
    assert vector["format"] == 1, f"{path.name}: unknown vector format"
    assert vector.get("protocol", "lanpush.v1") == protocol, f"{path.name}: recorded for {vector.get('protocol')}"
    return vector


def test_every_vector_named_in_clients_md_is_there():
    assert {load(p)["name"] for p in V1} >= NAMES


def test_the_v2_vectors_are_recorded_for_every_v1_scenario():
    # A missing v2 directory would otherwise just parametrize the v2 replays away.
    assert len(V2) >= 10, f"{FIXTURES / 'v2'}: {len(V2)} vectors"
    assert {load(p, "lanpush.v2")["name"] for p in V2} == {load(p)["name"] for p in V1}


def test_the_v2_vectors_send_the_activity_frames_as_arrays():
    arrays = set()
    for path in V2:
        for step in load(path, "lanpush.v2")["steps"]:
            frame = step.get("frame")
            if isinstance(frame, list):
                arrays.add(frame[0])
            elif frame is not None:
                assert frame["type"] not in ("start", "update", "end", "lifecycle"), f"{path.name}: {frame}"
    assert arrays == {"start", "update", "end", "lifecycle"}


def frame_of(step):
    """The step's frame as the client reads it off the socket (a v2 array becomes its v1 object)."""
    frame = parse_frame(json.dumps(step["frame"]))
    assert frame is not None, f"unreadable frame {step['frame']}"
    return frame


def want_subscribe(state):
    if state["epoch"] is None:
        return {"type": "subscribe"}
    return {"type": "subscribe", "epoch": state["epoch"], "seq": state["seq"]}


@pytest.mark.parametrize("path, protocol", VECTORS)
def test_reducer(path, protocol):
    vector = load(path, protocol)
    state = vector["initial"]
    frames = 0
    for i, step in enumerate(vector["steps"]):
        if "subscribe" in step:
            assert step["subscribe"] == want_subscribe(state), f"step {i}: the resume point"
            continue
        frame = frame_of(step)
        result = reduce(state, frame, now=step["now"])
        assert result.resync is None, f"step {i}: {result.resync}"
        assert json_equal(result.state, step["state"]), f"step {i} ({frame['type']}): {result.state}"
        assert result.ack == step["ack"], f"step {i}: ack"
        state = result.state
        frames += 1
    assert frames > 0


@pytest.mark.parametrize("path, protocol", VECTORS)
async def test_client_over_a_socket(path, protocol):
    vector = load(path, protocol)
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
            transport = await handshake(connector, sessions, version=protocol)
            assert transport.subprotocols == ["lanpush.v2", "lanpush.v1"]
            assert transport.sent[0] == {"type": "auth", "token": "t", "version": "lanpush.v2"}
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
            assert len(transport.sent_of("ack")) == acks_before, f"step {i}: no ack for {frame_of(step)['type']}"
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
