"""A blocking wrapper for scripts: the asyncio client runs on an event loop in a background thread, and the
script iterates its events with a plain `for` loop.

    with BlockingClient("ws://192.168.1.5:8765/v1/stream", token, store=JSONFileStore("~/.cache/lanpush")) as c:
        for event in c:
            ...

The acknowledgement rule is the asyncio client's: a frame is acknowledged once the `for` body has handled its
events and asked for the next one. Callbacks registered with `on()` run on the background thread.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Callable, Coroutine, Iterator, List, Mapping, Optional, TypeVar

from .client import LanpushClient
from .dispatch import EventKey, Handler
from .events import Event
from .pairing import Credentials
from .state import Activity, DeviceState

T = TypeVar("T")


class BlockingClient:
    """Takes `LanpushClient`'s arguments (or wraps an existing, not yet started one with `client=`)."""

    def __init__(self, *args: Any, client: Optional[LanpushClient] = None, **kwargs: Any) -> None:
        self.client = client if client is not None else LanpushClient(*args, **kwargs)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="lanpush", daemon=True)
        self._thread.start()
        self._closed = False

    @classmethod
    def from_credentials(cls, credentials: Credentials, **options: Any) -> "BlockingClient":
        return cls(client=LanpushClient.from_credentials(credentials, **options))

    def _call(self, coroutine: "Coroutine[Any, Any, T]", timeout: Optional[float] = None) -> T:
        if self._closed:
            coroutine.close()
            raise RuntimeError("the client is closed")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    # Lifecycle

    def start(self) -> None:
        """Connects in the background (idempotent), for callbacks registered with `on()`."""

        async def start() -> None:
            self.client.start()

        self._call(start())

    def stop(self) -> None:
        self._call(self.client.stop())

    def close(self) -> None:
        """Stops the client and its thread."""
        if self._closed:
            return
        self.stop()
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> "BlockingClient":
        # Not started here: iterating (or `run()`, or `start()`) starts it, so no event is missed in between.
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def run(self) -> None:
        """Blocks until the client stops (a rejected token, or `stop()` from a callback or another thread)."""

        self._call(self.client.run())

    # Events

    def on(self, key: EventKey, handler: Handler) -> Callable[[], None]:
        """A callback on the background thread; the frame is acknowledged after it returned."""
        return self.client.on(key, handler)

    def events(self, timeout: Optional[float] = None) -> Iterator[Event]:
        """Every event, in order, until the client stops — or until `timeout` seconds pass without one. Starts the
        client if it is not running."""
        holder: List[Any] = []

        async def open_iterator() -> None:
            holder.append(self.client.events())

        self._call(open_iterator())
        iterator = holder[0]
        try:
            while True:
                future = asyncio.run_coroutine_threadsafe(iterator.__anext__(), self._loop)
                try:
                    event = future.result(timeout)
                except StopAsyncIteration:
                    return
                except concurrent.futures.TimeoutError:
                    future.cancel()  # ends the iterator inside the loop too
                    return
                yield event
        finally:
            if not self._closed:
                try:
                    self._call(iterator.aclose(), 5)
                except (RuntimeError, concurrent.futures.TimeoutError):
                    pass

    def __iter__(self) -> Iterator[Event]:
        return self.events()

    # State and actions

    @property
    def status(self) -> str:
        return self.client.status

    @property
    def state(self) -> DeviceState:
        return self.client.state

    @property
    def device_id(self) -> Optional[str]:
        return self.client.device_id

    @property
    def devices(self) -> Mapping[str, DeviceState]:
        return self.client.devices

    def activities(self, device: Optional[str] = None) -> List[Activity]:
        return self.client.activities(device)

    def dismiss(self, tag: str) -> None:
        self._call(self.client.dismiss(tag))

    def send_live_activity_token(self, tag: str, token: str, expires_at: Optional[float] = None) -> None:
        self._call(self.client.send_live_activity_token(tag, token, expires_at))

    def send_push_to_start_token(self, token: str) -> None:
        self._call(self.client.send_push_to_start_token(token))

    def remove_notification(self, seq: int) -> None:
        self._call(self.client.remove_notification(seq))
