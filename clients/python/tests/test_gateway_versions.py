"""The protocol version a session speaks with the real lanpushd: lanpush.v2, chosen by the subprotocols the client
offers, or by its auth frame alone for a transport that offers none. A lanpushd from before v2 (`LANPUSHD=`) fails
these: it answers lanpush.v1 and sends objects."""
import asyncio
import json

from lanpush import LanpushClient, MemoryStore
from lanpush.transport import websockets_connector
from live import CountingConnector, converged, live, push
from payloads import ev

ACTIVITY_FRAMES = ("start", "update", "end", "lifecycle")


async def a_start_an_update_and_an_end(gw, c):
    await live(c)
    await push(gw, "phone", ev(10))
    await converged(c, gw)  # one at a time: frames waiting for an ack would merge into one
    await push(gw, "phone", ev(20))
    await converged(c, gw)
    status, _ = await asyncio.to_thread(gw.request, "DELETE", "/v1/activities/ev-charging?device=phone&dismissal=600",
                                        None, gw.admin_headers())
    assert status in (200, 202)
    await converged(c, gw)
    assert c.state["activities"]["ev-charging"]["phase"] == "ended"


def assert_v2(transport):
    """auth_ok says v2, and every activity frame came as an array on the socket, and none as an object."""
    auth_ok = next(f for f in transport.received if f["type"] == "auth_ok")
    assert auth_ok.get("version") == "lanpush.v2", auth_ok
    messages = [json.loads(text) for text in transport.texts]
    assert [m[0] for m in messages if isinstance(m, list)] == ["start", "update", "end"], transport.texts
    assert not [m for m in messages if isinstance(m, dict) and m.get("type") in ACTIVITY_FRAMES], transport.texts


async def test_a_session_offering_v2_then_v1_speaks_v2(gateway):
    gw = gateway()
    connector = CountingConnector(websockets_connector())
    async with LanpushClient(f"ws://127.0.0.1:{gw.port}/v1/stream", gw.tokens["phone"], store=MemoryStore(),
                             connector=connector) as c:
        await a_start_an_update_and_an_end(gw, c)
    transport = connector.transports[0]
    assert transport.inner.ws.subprotocol == "lanpush.v2"
    assert_v2(transport)


async def test_a_transport_that_offers_no_subprotocol_gets_v2_by_its_auth_frame(gateway):
    gw = gateway()
    plain = websockets_connector()

    async def without_subprotocols(url, subprotocols, context, timeout):
        return await plain(url, [], context, timeout)

    connector = CountingConnector(without_subprotocols)
    async with LanpushClient(f"ws://127.0.0.1:{gw.port}/v1/stream", gw.tokens["phone"], store=MemoryStore(),
                             connector=connector) as c:
        await a_start_an_update_and_an_end(gw, c)
    transport = connector.transports[0]
    assert transport.inner.ws.subprotocol is None
    assert_v2(transport)
