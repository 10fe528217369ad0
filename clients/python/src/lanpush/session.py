"""One connection to the gateway: the frames read off it, in order, and its acknowledgement bookkeeping.

A task of its own reads the socket into an inbox, so the client always knows whether more frames wait (acks are
batched while they do) and a close is noticed while a handler is still busy. Frames received before a close are
still handled: they are valid, and acknowledging them spares a replay.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, Optional

from .close_codes import CloseInfo
from .frames import parse_frame
from .transport import Transport, TransportClosed


class Session:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.inbox: "asyncio.Queue[Optional[Dict[str, Any]]]" = asyncio.Queue()
        self.queued = 0  # frames in the inbox (the close marker aside)
        self.authed = False
        self.closed = False
        self.auth_invalid: Optional[str] = None
        self.last_error: Optional[str] = None
        self.close_code: Optional[int] = None
        self.close_reason: Optional[str] = None
        # Highest seq handled on this session, the highest acknowledged, and handled frames awaiting an ack.
        self.ackable = 0
        self.acked = 0
        self.pending_acks = 0
        # The stream stopped matching the state (resync): later frames of this session are ignored.
        self.discard = False
        self._reader: "Optional[asyncio.Task[None]]" = None

    def start_reading(self) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                frame = parse_frame(await self.transport.recv())
                if frame is not None:
                    self.queued += 1
                    self.inbox.put_nowait(frame)
        except TransportClosed as closed:
            # A link we dropped ourselves (handshake or keepalive timeout) ends without a close frame: keep our
            # reason then.
            if closed.code is not None or self.close_reason is None:
                self.close_code, self.close_reason = closed.code, closed.reason
        except Exception as error:  # anything else ends the session too: reconnect with backoff
            self.close_reason = self.close_reason or f"{type(error).__name__}: {error}"
        finally:
            self.closed = True
            self.inbox.put_nowait(None)

    async def next_frame(self, timeout: Optional[float]) -> Optional[Dict[str, Any]]:
        """The next frame; None once the connection ended. Raises `asyncio.TimeoutError` after `timeout`."""
        item = await asyncio.wait_for(self.inbox.get(), timeout) if timeout is not None else await self.inbox.get()
        if item is not None:
            self.queued -= 1
        return item

    async def send(self, frame: Dict[str, Any]) -> bool:
        if self.closed:
            return False
        try:
            await self.transport.send(json.dumps(frame, separators=(",", ":")))
            return True
        except TransportClosed:
            return False
        except Exception:  # a socket error: the reader notices the end
            return False

    async def close(self, reason: str, abort: bool = False) -> None:
        """Ends the session from this side; `abort` drops a link that stopped answering without a handshake."""
        if self.close_reason is None:
            self.close_reason = reason
        if abort:
            self.transport.abort()
            return
        try:
            await self.transport.close(1000, reason)
        except Exception:
            self.transport.abort()

    async def finish(self) -> None:
        """Stops reading (the connection is over or abandoned)."""
        if self._reader is not None and not self._reader.done():
            self.transport.abort()
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass

    def close_info(self) -> CloseInfo:
        return CloseInfo(authed=self.authed, code=self.close_code, reason=self.close_reason,
                         auth_invalid=self.auth_invalid, last_error=self.last_error)
