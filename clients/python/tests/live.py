"""Helpers for the tests against the real lanpushd: pushing through its HTTP API, its own picture of a device
(`GET /v1/activities`), a socket relay the test can cut, and a transport that counts unacknowledged frames."""
import asyncio
import json

from fakes import eventually
from lanpush.frames import parse_frame
from lanpush.merge_patch import json_equal


async def push(gw, device, payload):
    """Notify service data to one device (`POST /v1/push`, admin token), off the event loop."""
    status, body = await asyncio.to_thread(gw.request, "POST", "/v1/push", {"targets": [device], **payload},
                                           gw.admin_headers())
    assert status == 202, body


async def gateway_view(gw, device):
    """The gateway's own picture, by tag, in the fields a client holds (it adds bookkeeping like updated_at)."""
    status, body = await asyncio.to_thread(gw.get, f"/v1/activities?device={device}")
    assert status == 200, body
    out = {}
    for a in body["activities"]:
        view = {"tag": a["tag"], "attributes": a["attributes"], "state": a["state"], "phase": a["phase"]}
        for key in ("stale_date", "relevance_score", "dismissal_date"):
            if key in a:
                view[key] = a[key]
        out[a["tag"]] = view
    return out


async def converged(client, gw, device="phone", timeout=15.0, activities=None):
    """Until the client's activities equal the gateway's (`activities`: another holder, e.g. an observer's)."""

    async def check():
        want = await gateway_view(gw, device)
        got = activities() if activities else client.state["activities"]
        assert json_equal(got, want), f"client {got}\n gateway {want}"

    await eventually(check, timeout, interval=0.05)


async def live(client, timeout=10.0):
    await eventually(lambda: _assert(client.status == "live", client.status), timeout)


def _assert(value, detail=None):
    assert value, detail


class CountingTransport:
    """Wraps a real transport: the messages received as sent (`texts`) and as the client reads them (`received`, v1
    objects), the highest ack sent, and the most event frames ever held unacknowledged (the gateway's credit window
    bounds it; snapshot and synced do not count, as on the gateway)."""

    def __init__(self, inner):
        self.inner = inner
        self.texts = []
        self.received = []
        self.acked = 0
        self.max_unacked = 0

    @property
    def unacked(self):
        return sum(1 for f in self.received if isinstance(f.get("seq"), int) and f["type"] not in ("synced", "snapshot")
                   and f["seq"] > self.acked)

    async def recv(self):
        text = await self.inner.recv()
        self.texts.append(text)
        frame = parse_frame(text)
        if frame is not None:
            self.received.append(frame)
        self.max_unacked = max(self.max_unacked, self.unacked)
        return text

    async def send(self, text):
        frame = json.loads(text)
        if frame["type"] == "ack":
            self.acked = max(self.acked, frame["seq"])
        await self.inner.send(text)

    async def close(self, code=1000, reason=""):
        await self.inner.close(code, reason)

    def abort(self):
        self.inner.abort()


class CountingConnector:
    def __init__(self, inner):
        self.inner = inner
        self.transports = []

    async def __call__(self, url, subprotocols, context, timeout):
        t = CountingTransport(await self.inner(url, subprotocols, context, timeout))
        self.transports.append(t)
        return t


class CuttableProxy:
    """A TCP relay between the client and the gateway that the test can cut, like a Wi-Fi drop (no close frame)."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.pairs = []
        self.server = None
        self.port = 0

    async def listen(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def _serve(self, reader, writer):
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.pairs.append((writer, up_writer))

        async def pipe(src, dst):
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self):
        """Drops every connection at once; returns how many there were."""
        pairs, self.pairs = self.pairs, []
        for a, b in pairs:
            a.transport.abort()
            b.transport.abort()
        return len(pairs)

    async def close(self):
        self.cut()
        self.server.close()
