"""Handing events to the app: callbacks (`client.on(...)`) and `async for` loops.

Both are awaited: an event counts as handled once every callback returned (async ones awaited) and every
`async for` loop came back for the next event. The client acknowledges a frame only after all of its events were
handled, so a slow app slows the stream — the gateway merges what piles up — instead of losing anything.
"""
from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple, Type, Union

from .events import EVENT_TYPES, Event

Handler = Callable[[Any], Any]
EventKey = Union[str, Type[Any]]
ALL = "*"


def event_type(key: EventKey) -> str:
    """`"activity"`, `ActivityChanged` or `"*"` (every event) → the event type name."""
    name = key if isinstance(key, str) else getattr(key, "type", None)
    if not isinstance(name, str) or (name != ALL and name not in EVENT_TYPES):
        raise ValueError(f"unknown event type {key!r}: one of {sorted(EVENT_TYPES)} or '*'")
    return name


class Subscription:
    """One `async for` loop's queue. Each event carries a future the loop resolves when it asks for the next one."""

    def __init__(self) -> None:
        self.queue: "asyncio.Queue[Optional[Tuple[Event, asyncio.Future[None]]]]" = asyncio.Queue()
        self.closed = False
        self.current: "Optional[asyncio.Future[None]]" = None

    async def deliver(self, event: Event) -> None:
        if self.closed:
            return
        done: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((event, done))
        await done

    def close(self) -> None:
        """Ends the loop (after the events already queued) and releases whoever waits on it."""
        if self.closed:
            return
        self.closed = True
        if self.current is not None and not self.current.done():
            self.current.set_result(None)
        pending: List[Tuple[Event, "asyncio.Future[None]"]] = []
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if item is not None:
                pending.append(item)
        for _, done in pending:
            if not done.done():
                done.set_result(None)
        self.queue.put_nowait(None)


class Dispatcher:
    def __init__(self) -> None:
        self._handlers: Dict[str, List[Handler]] = {}
        self._subscriptions: List[Subscription] = []
        self.finished = False

    def on(self, key: EventKey, handler: Handler) -> Callable[[], None]:
        """Calls `handler(event)` for every event of this type (or all, with "*"); returns the unsubscriber."""
        name = event_type(key)
        self._handlers.setdefault(name, []).append(handler)

        def off() -> None:
            handlers = self._handlers.get(name, [])
            if handler in handlers:
                handlers.remove(handler)

        return off

    async def emit(self, event: Event) -> List[BaseException]:
        """Runs the callbacks and feeds the loops; returns what the callbacks raised (the client reports it)."""
        errors: List[BaseException] = []
        for handler in list(self._handlers.get(event.type, ())) + list(self._handlers.get(ALL, ())):
            try:
                result = handler(event)
                # An `async def` handler is awaited; a task or future it hands back is not (a handler that starts
                # `client.stop()` as a task must not wait for the client it stops).
                if inspect.iscoroutine(result):
                    await result
            except Exception as error:  # a failing handler must not stop the stream
                errors.append(error)
        for subscription in list(self._subscriptions):
            await subscription.deliver(event)
        return errors

    def events(self) -> "EventStream":
        """An `async for` loop over every event from now on. The event counts as handled when the loop asks for
        the next one."""
        subscription = Subscription()
        if self.finished:
            subscription.close()
        else:
            self._subscriptions.append(subscription)
        return EventStream(self, subscription)

    def remove(self, subscription: Subscription) -> None:
        subscription.close()
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    def finish(self) -> None:
        """The client stopped for good: every loop ends."""
        self.finished = True
        for subscription in list(self._subscriptions):
            subscription.close()

    def reopen(self) -> None:
        """The client was started again after a stop."""
        self.finished = False


class EventStream:
    """The iterator `client.events()` returns. It is registered at once, so no event is missed between creating
    it and the first `__anext__`; one that is dropped unfinished (a `break`) is closed when it is collected, so the
    client never waits for a loop that is gone."""

    def __init__(self, dispatcher: Dispatcher, subscription: Subscription) -> None:
        self._dispatcher = dispatcher
        self._subscription = subscription
        self._loop = asyncio.get_running_loop()

    def __aiter__(self) -> "EventStream":
        return self

    async def __anext__(self) -> Event:
        subscription = self._subscription
        if subscription.current is not None and not subscription.current.done():
            subscription.current.set_result(None)  # the previous event was handled
        subscription.current = None
        try:
            item = await subscription.queue.get()
        except asyncio.CancelledError:
            self.close()
            raise
        if item is None:
            self.close()
            raise StopAsyncIteration
        event, done = item
        subscription.current = done
        return event

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        if self._subscription.closed:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._dispatcher.remove(self._subscription)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._dispatcher.remove, self._subscription)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
