"""A scripted stand-in for the WebSocket: the test plays the gateway, frame by frame, and reads what was sent."""
import asyncio
import json
import time

from lanpush import TransportClosed


class FakeTransport:
    def __init__(self, url, subprotocols):
        self.url = url
        self.subprotocols = list(subprotocols)
        self.incoming = asyncio.Queue()
        self.sent = []
        self.closed = None  # (code, reason) once the client closed it
        self.on_send = None  # a hook called with each frame sent (order checks)

    # The client's side
    async def recv(self):
        item = await self.incoming.get()
        if isinstance(item, TransportClosed):
            self.incoming.put_nowait(item)  # stays closed
            raise item
        return item

    async def send(self, text):
        if self.closed is not None:
            raise TransportClosed(*self.closed)
        frame = json.loads(text)
        if self.on_send:
            self.on_send(frame)
        self.sent.append(frame)

    async def close(self, code=1000, reason=""):
        if self.closed is None:
            self.closed = (code, reason)
            self.incoming.put_nowait(TransportClosed(code, reason))

    def abort(self):
        if self.closed is None:
            self.closed = (None, None)
            self.incoming.put_nowait(TransportClosed(None, None))

    # The gateway's side
    def receive(self, frame):
        self.incoming.put_nowait(json.dumps(frame))

    def receive_text(self, text):
        """A message as sent, JSON or not."""
        self.incoming.put_nowait(text)

    def server_close(self, code, reason=""):
        self.closed = self.closed or (code, reason)
        self.incoming.put_nowait(TransportClosed(code, reason))

    def sent_of(self, kind):
        return [f for f in self.sent if f["type"] == kind]


class FakeConnector:
    """Hands the client a new FakeTransport per attempt; `refuse` makes the next attempts fail to connect."""

    def __init__(self):
        self.transports = []
        self.attempts = 0
        self.refuse = 0
        self.script = []  # frames every new transport receives at once (for tests that cannot feed it later)

    async def __call__(self, url, subprotocols, context, timeout):
        self.attempts += 1
        if self.refuse > 0:
            self.refuse -= 1
            raise ConnectionRefusedError("refused")
        t = FakeTransport(url, subprotocols)
        for frame in self.script:
            t.receive(frame)
        self.transports.append(t)
        return t

    @property
    def last(self):
        return self.transports[-1]


async def eventually(check, timeout=5.0, interval=0.01):
    """Polls `check()` (sync or async; an assertion) until it passes; re-raises its last failure."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
            if asyncio.iscoroutine(result):
                await result
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(interval)


async def settle(rounds=50):
    """Lets every ready task run (the client handles what it was given)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def handshake(connector, nth=1, device="phone", version="lanpush.v1"):
    """Waits for the client's `nth` connection and completes auth (the client then sends register / subscribe)."""
    await eventually(lambda: _assert(len(connector.transports) >= nth))
    t = connector.transports[nth - 1]
    t.receive({"type": "auth_required", "version": version})
    await eventually(lambda: _assert(t.sent_of("auth")))
    t.receive({"type": "auth_ok", "device_id": device, "epoch": "whatever", "seq": 0, "version": version})
    await eventually(lambda: _assert(t.sent_of("subscribe")))
    return t


def _assert(value):
    assert value
