"""Which protocol version the client asks for, and that it works with whichever the gateway answers: over the
scripted socket, and over the real `websockets` transport against local stand-in gateways that pick the first
offered subprotocol they speak (one speaks v2 and v1, one only v1, as a gateway from before v2 does)."""
import asyncio
import json

import pytest
from websockets.asyncio.server import serve

from fakes import FakeConnector, eventually, handshake, settle
from lanpush import LanpushClient

URL = "ws://gw.test/v1/stream"
ATTRIBUTES = {"tag": "a", "title": "A", "started_at": 1_700_000_000}


def make(connector, **options):
    return LanpushClient(URL, "secret", connector=connector, keepalive_interval=None, **options)


async def test_the_client_offers_v2_then_v1_and_names_v2_in_its_auth_frame():
    for options, auth in [
        ({}, {"type": "auth", "token": "secret", "version": "lanpush.v2"}),
        ({"role": "observer", "device": "phone"},
         {"type": "auth", "token": "secret", "version": "lanpush.v2", "role": "observer", "device": "phone"}),
    ]:
        connector = FakeConnector()
        c = make(connector, **options)
        c.start()
        t = await handshake(connector, version="lanpush.v2")
        assert t.subprotocols == ["lanpush.v2", "lanpush.v1"]
        assert t.sent[0] == auth
        await c.stop()


@pytest.mark.parametrize("version", ["lanpush.v1", "lanpush.v2"])
async def test_either_form_is_read_whatever_the_session_speaks(version):
    connector = FakeConnector()
    c = make(connector)
    c.start()
    t = await handshake(connector, version=version)
    t.receive({"type": "snapshot", "epoch": "e", "seq": 0, "activities": []})
    t.receive(["start", 1, "a", {"message": "one"}, {"attributes": ATTRIBUTES}])
    t.receive({"type": "update", "seq": 2, "tag": "a", "patch": {"progress": 1}, "phase": "active"})
    t.receive(["update", 3, "a", {"progress": 2}, {"phase": "stale"}])
    t.receive({"type": "lifecycle", "seq": 4, "tag": "a", "phase": "active"})
    t.receive(["end", 5, "a", {"message": "done"}, {"dismissal_date": 4_000_000_000}])
    await eventually(lambda: _assert(t.sent_of("ack") and t.sent_of("ack")[-1]["seq"] == 5))
    assert c.state["activities"]["a"] == {"tag": "a", "attributes": ATTRIBUTES, "phase": "ended",
                                          "state": {"message": "done", "progress": 2}, "dismissal_date": 4_000_000_000}
    await c.stop()


async def skipping(unreadable):
    """What a session shows of one unreadable message between two good frames: events, frames sent, state, close."""
    connector = FakeConnector()
    c = make(connector)
    seen = []
    c.on("*", lambda e: seen.append(e.type))
    c.start()
    t = await handshake(connector, version="lanpush.v2")
    t.receive({"type": "snapshot", "epoch": "e", "seq": 0, "activities": []})
    t.receive(["start", 1, "a", {"message": "one"}, {"attributes": ATTRIBUTES}])
    t.receive_text(unreadable)
    t.receive(["update", 2, "a", {"message": "two"}])
    await eventually(lambda: _assert(t.sent_of("ack") and t.sent_of("ack")[-1]["seq"] == 2))
    await settle()
    outcome = (seen, list(t.sent), c.state, t.closed, c.status)
    await c.stop()
    return outcome


@pytest.mark.parametrize("unreadable", ['["update", 9, "a", "two"]', '["update", 9, "a"]',
                                        '["update", "9", "a", {}]', '["update", 9, "a", {}, []]',
                                        '["notification", 9, "a", {}]'])
async def test_a_malformed_array_is_skipped_exactly_as_invalid_json_is(unreadable):
    invalid_json = await skipping('{"type": "update", "seq": 9,')
    malformed = await skipping(unreadable)
    assert malformed == invalid_json
    seen, sent, state, closed, _ = malformed
    assert "error" not in seen and closed is None, "skipped, not an error nor a reason to reconnect"
    assert [f["seq"] for f in sent if f["type"] == "ack"] == [2] and state["seq"] == 2


def v2_form(frame):
    """The gateway's side of v2: the frames about one activity as arrays."""
    body = {"start": "state", "update": "patch", "end": "patch", "lifecycle": "phase"}.get(frame["type"])
    if body is None:
        return frame
    extras = {k: v for k, v in frame.items() if k not in ("type", "seq", "tag", body)}
    if frame["type"] == "update" and extras.get("phase") == "active":
        del extras["phase"]
    return [frame["type"], frame["seq"], frame["tag"], frame[body]] + ([extras] if extras else [])


class StandInGateway:
    """Just enough of the protocol over ws:// to get a client live and send it one activity, in the version the
    upgrade chose; keeps the subprotocol header it was offered and what the client sent."""

    def __init__(self, speaks):
        self.speaks = speaks
        self.offered = []
        self.spoken = []
        self.received = []

    def process_request(self, connection, request):
        self.offered.append(request.headers.get("Sec-WebSocket-Protocol"))
        return None

    def select_subprotocol(self, connection, offered):
        return next((p for p in offered if p in self.speaks), None)

    async def handler(self, ws):
        version = ws.subprotocol
        self.spoken.append(version)

        async def send(frame):
            await ws.send(json.dumps(v2_form(frame) if version == "lanpush.v2" else frame))

        async def recv():
            self.received.append(json.loads(await ws.recv()))
            return self.received[-1]

        await send({"type": "auth_required", "version": version})
        assert (await recv())["type"] == "auth"
        await send({"type": "auth_ok", "device_id": "pi", "epoch": "e", "seq": 0, "version": version})
        assert (await recv())["type"] == "subscribe"
        await send({"type": "snapshot", "epoch": "e", "seq": 0, "activities": []})
        await send({"type": "synced", "seq": 0})
        await send({"type": "start", "seq": 1, "tag": "a", "attributes": ATTRIBUTES, "state": {"message": "one"}})
        await send({"type": "update", "seq": 2, "tag": "a", "patch": {"progress": 5}, "phase": "active"})
        async for message in ws:
            self.received.append(json.loads(message))


@pytest.mark.parametrize("speaks, spoken", [(("lanpush.v1", "lanpush.v2"), "lanpush.v2"),
                                            (("lanpush.v1",), "lanpush.v1")])
async def test_over_websockets_v2_is_offered_first_and_either_answer_works(speaks, spoken):
    gw = StandInGateway(speaks)
    async with serve(gw.handler, "127.0.0.1", 0, process_request=gw.process_request,
                     select_subprotocol=gw.select_subprotocol) as server:
        port = server.sockets[0].getsockname()[1]
        async with LanpushClient(f"ws://127.0.0.1:{port}/v1/stream", "tok", keepalive_interval=None) as client:
            await eventually(lambda: _assert(client.state["activities"].get("a", {}).get("state", {}).get("progress")
                                             == 5), 5)
            await eventually(lambda: _assert({"type": "ack", "seq": 2} in gw.received), 5)
    assert gw.offered == ["lanpush.v2, lanpush.v1"] and gw.spoken == [spoken]
    assert client.state["activities"]["a"] == {"tag": "a", "attributes": ATTRIBUTES, "phase": "active",
                                               "state": {"message": "one", "progress": 5}}


def _assert(value):
    assert value
