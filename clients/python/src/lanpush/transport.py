"""The WebSocket under the client, behind a small interface so tests (and other transports) can stand in for it.

The default is the `websockets` library's asyncio client. It answers the gateway's keepalive pings by itself and
sends its own (`keepalive_interval`), so a dead link is noticed even while the app's handler is busy: frames are
read off the socket by a task of their own, never paced by the handler (the gateway's credit window bounds how
many can pile up).
"""
from __future__ import annotations

import inspect
import ssl
from typing import Awaitable, Callable, Optional, Protocol, Sequence, Tuple

from .tls import check_peer

# Newest first: the gateway answers with the first it speaks, so an older gateway still gets a v1 session.
SUBPROTOCOLS: Tuple[str, ...] = ("lanpush.v2", "lanpush.v1")


class TransportClosed(Exception):
    """The connection ended: the close code and reason the peer sent, when it sent any."""

    def __init__(self, code: Optional[int], reason: Optional[str]) -> None:
        super().__init__(f"closed ({code}) {reason or ''}".strip())
        self.code = code
        self.reason = reason


class Transport(Protocol):
    async def recv(self) -> str:
        """The next text message; raises `TransportClosed` once the connection ended."""
        ...

    async def send(self, text: str) -> None:
        """Raises `TransportClosed` when the connection is gone."""
        ...

    async def close(self, code: int = 1000, reason: str = "") -> None: ...

    def abort(self) -> None:
        """Drops the connection at once (a link that stopped answering gets no close handshake)."""
        ...


# Opens one connection: url, subprotocols, TLS context (None for ws://), how long the upgrade may take.
Connector = Callable[[str, Sequence[str], Optional[ssl.SSLContext], float], Awaitable[Transport]]


class WebSocketsTransport:
    def __init__(self, ws: object) -> None:
        self.ws = ws

    async def recv(self) -> str:
        from websockets.exceptions import ConnectionClosed

        while True:
            try:
                message = await self.ws.recv()  # type: ignore[attr-defined]
            except ConnectionClosed as closed:
                raise TransportClosed(*_close_of(closed)) from None
            if isinstance(message, str):
                return message
            # Binary messages are not part of the protocol: skip them.

    async def send(self, text: str) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self.ws.send(text)  # type: ignore[attr-defined]
        except ConnectionClosed as closed:
            raise TransportClosed(*_close_of(closed)) from None

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await self.ws.close(code, reason)  # type: ignore[attr-defined]

    def abort(self) -> None:
        transport = getattr(self.ws, "transport", None)
        if transport is not None:
            transport.abort()


def _close_of(closed: Exception) -> Tuple[Optional[int], Optional[str]]:
    rcvd = getattr(closed, "rcvd", None)
    if rcvd is not None:
        return rcvd.code, rcvd.reason
    return None, None  # no close frame: the link dropped (1006)


def websockets_connector(keepalive_interval: Optional[float] = 30.0, keepalive_timeout: Optional[float] = 10.0,
                         close_timeout: float = 2.0) -> Connector:
    """Connections through `websockets.asyncio.client.connect`, without compression (lanpushd does not offer
    it) and without an HTTP proxy from the environment (the gateway is on the LAN)."""
    from websockets.asyncio.client import connect

    accepts_proxy = "proxy" in inspect.signature(connect.__init__).parameters

    async def open_connection(url: str, subprotocols: Sequence[str], context: Optional[ssl.SSLContext],
                              timeout: float) -> Transport:
        kwargs = dict(
            subprotocols=list(subprotocols), open_timeout=timeout, compression=None, max_size=None, max_queue=None,
            ping_interval=keepalive_interval, ping_timeout=keepalive_timeout, close_timeout=close_timeout,
        )
        if accepts_proxy:
            kwargs["proxy"] = None
        if context is not None:
            kwargs["ssl"] = context
        ws = await connect(url, **kwargs)  # type: ignore[arg-type]
        pin = getattr(context, "lanpush_fingerprint", None)
        if pin is not None:
            # The pinned context already checked the certificate during the handshake; check again here so a
            # TLS stack that bypassed the context's SSLObject class still fails closed.
            try:
                check_peer(ws.transport.get_extra_info("ssl_object"), pin)
            except Exception:
                ws.transport.abort()
                raise
        return WebSocketsTransport(ws)

    return open_connection
