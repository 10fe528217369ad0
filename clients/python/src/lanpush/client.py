"""The asyncio client: keeps a device's activities and notifications, acknowledges what the app has handled,
resumes after any disconnect and reconnects with backoff. Behaves like the TypeScript library (docs/CLIENTS.md).
"""
from __future__ import annotations

import asyncio
import inspect
import logging
import random as _random
import ssl
import time
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional
from urllib.parse import urlsplit

from .backoff import Backoff
from .close_codes import CloseInfo, classify_close
from .dispatch import Dispatcher, EventKey, EventStream, Handler
from .events import (AUTH_REJECTED, CONNECTING, LIVE, OFFLINE, AuthRejected, ClientError, DeviceChanged, Event,
                     Registered, StatusChanged)
from .reducer import DEFAULT_MAX_NOTIFICATIONS, reduce
from .session import Session
from .state import Activity, DeviceState, empty_state, is_device_state, sorted_activities
from .store import StateStore
from .tls import pinned_context
from .transport import SUBPROTOCOLS, Connector, websockets_connector

log = logging.getLogger("lanpush")

EVENT_FRAMES = frozenset({"snapshot", "replay", "synced", "start", "update", "end", "lifecycle", "notification",
                          "clear", "notifications_dropped"})
# User actions kept while offline (latest per tag): at most this many.
MAX_OUTGOING = 256


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class LanpushClient:
    """A lanpush client: it asks for lanpush.v2 and speaks lanpush.v1 with a gateway that answers that. `url` is
    `ws://HOST:PORT/v1/stream` (or `wss://` with a pinned `fingerprint`); `token` a device token, or an admin /
    viewer token with `role="observer"`.

    Use it as `async with LanpushClient(...) as client: async for event in client: ...`, with callbacks
    (`client.on("activity", handler)` then `await client.run()`), or both.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        role: str = "device",
        device: Optional[str] = None,
        store: Optional[StateStore] = None,
        store_key: Optional[str] = None,
        register: Optional[Mapping[str, Any]] = None,
        supports_live_activities: Optional[bool] = None,
        fingerprint: Optional[str] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        backoff: Optional[Backoff] = None,
        window: int = 32,
        handshake_timeout: float = 5.0,
        keepalive: Optional[int] = None,
        keepalive_interval: Optional[float] = 30.0,
        keepalive_timeout: Optional[float] = 10.0,
        max_notifications: int = DEFAULT_MAX_NOTIFICATIONS,
        connector: Optional[Connector] = None,
        clock: Callable[[], float] = time.time,
        random: Callable[[], float] = _random.random,
        sleep: Optional[Callable[[float], Awaitable[None]]] = None,
    ) -> None:
        if role not in ("device", "observer"):
            raise ValueError("role: 'device' or 'observer'")
        self.url = _stream_url(url)
        if fingerprint is not None and urlsplit(self.url).scheme != "wss":
            raise ValueError("a pinned fingerprint needs a wss:// url")
        self.token = token
        self.role = role
        self.device = device
        self.store = None if role == "observer" else store
        self.store_key = store_key or f"lanpush:{self.url}"
        self.register = dict(register) if register is not None else None
        self.supports_live_activities = supports_live_activities
        self.window = window
        self.handshake_timeout = handshake_timeout
        self.max_notifications = max_notifications
        self._ssl = pinned_context(fingerprint) if fingerprint is not None else ssl_context
        if keepalive is not None and (isinstance(keepalive, bool) or not isinstance(keepalive, int) or keepalive <= 0):
            raise ValueError("keepalive: a whole number of seconds > 0")
        self.keepalive_request = keepalive
        # Asked to be pinged less often (a phone's radio wakes for every ping), the client pings the gateway no more
        # often than every other of the gateway's pings.
        if keepalive is not None and keepalive_interval is not None:
            keepalive_interval = max(keepalive_interval, 2.0 * keepalive)
        self._connector = connector or websockets_connector(keepalive_interval, keepalive_timeout)
        self._keepalive: Optional[int] = None
        self._backoff = backoff or Backoff(random=random)
        self._clock = clock
        self._random = random
        self._sleep = sleep
        self._dispatch = Dispatcher()
        self._state: DeviceState = empty_state()
        self._saved: Optional[DeviceState] = None
        self._observed: Dict[str, DeviceState] = {}
        self._status = OFFLINE
        self._session: Optional[Session] = None
        self._running = False
        self._loaded = False
        self._want_snapshot = False
        self._outgoing: List[Dict[str, Any]] = []
        self._device_id: Optional[str] = None
        self._task: "Optional[asyncio.Task[None]]" = None
        self._wake: Optional[asyncio.Event] = None

    @classmethod
    def from_credentials(cls, credentials: Any, **options: Any) -> "LanpushClient":
        """A client for what `pair()` returned (its stream URL, token and pinned fingerprint)."""
        return cls(credentials.stream_url, credentials.token, fingerprint=credentials.fingerprint, **options)

    # Public surface

    def on(self, key: EventKey, handler: Handler) -> Callable[[], None]:
        """Calls `handler(event)` (sync or async) for every event of a type: a name such as "activity", an event
        class such as `ActivityChanged`, or "*". The frame is acknowledged only after the handler returned."""
        return self._dispatch.on(key, handler)

    @property
    def status(self) -> str:
        return self._status

    @property
    def state(self) -> DeviceState:
        """The device's state (device role)."""
        return self._state

    @property
    def device_id(self) -> Optional[str]:
        """The device this client is (from `auth_ok`), once known."""
        return self._device_id

    @property
    def keepalive(self) -> Optional[int]:
        """The ping interval (seconds) the gateway granted in `auth_ok`; None until then, or from a gateway that
        does not say."""
        return self._keepalive

    @property
    def devices(self) -> Mapping[str, DeviceState]:
        """Observers: every watched device's state."""
        return self._observed

    def activities(self, device: Optional[str] = None) -> List[Activity]:
        """Activities in the order a phone shows them."""
        state = self._state if device is None else self._observed.get(device)
        return sorted_activities(state) if state is not None else []

    def start(self) -> "asyncio.Task[None]":
        """Connects in the background (and keeps connecting) until `stop()` or a rejected token."""
        if self._task is None or self._task.done():
            # Running from now on, not from when the task first runs: a stop() in between is honoured.
            self._running = True
            self._wake = asyncio.Event()
            self._dispatch.reopen()
            self._task = asyncio.get_running_loop().create_task(self._run())
        return self._task

    async def run(self) -> None:
        """Connects and keeps connecting; returns after `stop()` or a rejected token (starts the client if
        `start()` did not)."""
        task = self.start()
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            raise

    async def _run(self) -> None:
        try:
            await self._load()
            while self._running:
                info = await self._attempt()
                if not self._running:
                    break
                delay = await self._after_close(info)
                if delay is None:
                    break
                await self._wait(delay)
        finally:
            self._running = False
            if self._status != AUTH_REJECTED:
                await self._set_status(OFFLINE)
            self._dispatch.finish()

    async def stop(self) -> None:
        """Closes the session and stops reconnecting. Frames not yet handled are left to the next resume."""
        self._running = False
        if self._wake is not None:
            self._wake.set()
        self._dispatch.finish()  # an `async for` loop waiting on us must not hold the stop up
        session = self._session
        if session is not None and not session.closed:
            await session.close("client stopped")
        task = self._task
        if task is not None and task is not asyncio.current_task():
            try:
                await task
            except Exception:
                pass

    async def __aenter__(self) -> "LanpushClient":
        self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def __aiter__(self) -> EventStream:
        return self.events()

    def events(self) -> EventStream:
        """Every event from now on, in order; the loop ends when the client stops. An event counts as handled
        (and its frame may be acknowledged) when the loop asks for the next one — so iterate it: the client waits
        for the loop. Starts the client if it is not running."""
        if (self._task is None or self._task.done()) and self._status != AUTH_REJECTED:
            self._dispatch.reopen()
            iterator = self._dispatch.events()
            self.start()
            return iterator
        return self._dispatch.events()

    async def dismiss(self, tag: str) -> None:
        """The user dismissed the activity: it becomes `dismissed` for every session of the device."""
        await self._send_or_queue({"type": "dismissed", "tag": tag},
                                  lambda o: o["type"] == "dismissed" and o["tag"] == tag)

    async def send_live_activity_token(self, tag: str, token: str, expires_at: Optional[float] = None) -> None:
        frame: Dict[str, Any] = {"type": "live_activity_token", "tag": tag, "token": token}
        if expires_at is not None:
            frame["expires_at"] = expires_at
        await self._send_or_queue(frame, lambda o: o["type"] == "live_activity_token" and o["tag"] == tag)

    async def send_push_to_start_token(self, token: str) -> None:
        await self._send_or_queue({"type": "push_to_start_token", "token": token},
                                  lambda o: o["type"] == "push_to_start_token")

    async def remove_notification(self, seq: int) -> None:
        """Forgets a held plain notification (the user read it); local only."""
        state = dict(self._state)
        state["notifications"] = [n for n in self._state["notifications"] if n["seq"] != seq]
        self._state = state  # type: ignore[assignment]
        await self._persist()

    # Connecting

    @property
    def _observer(self) -> bool:
        return self.role == "observer"

    async def _load(self) -> None:
        if self._loaded or self.store is None:
            return
        self._loaded = True
        stored = await _maybe_await(self.store.load(self.store_key))
        if is_device_state(stored):
            self._state = stored
            self._saved = stored

    async def _attempt(self) -> CloseInfo:
        await self._set_status(CONNECTING)
        try:
            transport = await self._connector(self.url, list(SUBPROTOCOLS), self._ssl, self.handshake_timeout)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            await self._emit(ClientError(f"cannot connect to {self.url}: {error}", error))
            return CloseInfo(reason=str(error) or type(error).__name__)
        session = Session(transport)
        self._session = session
        session.start_reading()
        try:
            if self._running:
                await self._serve(session)
        finally:
            if not session.closed:
                await session.close("client stopped" if not self._running else "session ended")
            await session.finish()
            self._session = None
            if self._state is not self._saved:
                # Whatever was applied is kept with its resume point, acknowledged or not (a later resume
                # from it is safe: the gateway sends what came after).
                await self._persist_quietly()
        return session.close_info()

    async def _serve(self, session: Session) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.handshake_timeout
        while True:
            timeout = None if session.authed else max(0.0, deadline - loop.time())
            try:
                frame = await session.next_frame(timeout)
            except asyncio.TimeoutError:
                # Reconnecting at once after a 1001 may reach the dying process, which never answers (wire detail 11).
                await session.close("handshake timeout", abort=True)
                return
            if frame is None or not self._running:
                return
            try:
                await self._handle(session, frame)
                if not self._observer:
                    await self._maybe_ack(session)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                await self._emit(ClientError(f"handling {frame.get('type')}: {error}", error))

    async def _after_close(self, info: CloseInfo) -> Optional[float]:
        """The delay before the next attempt; None when the client stops for good."""
        action = classify_close(info)
        if action.kind == "auth_rejected":
            self._running = False
            await self._set_status(AUTH_REJECTED, info.code, info.reason)
            await self._emit(AuthRejected(action.message, info.code))
            return None
        if action.kind == "wait":
            delay = action.seconds * (1 + 0.1 * self._random())
        elif (action.kind == "reconnect_now" and info.authed) or self._want_snapshot:
            delay = 0.0
        else:
            delay = max(action.seconds, self._backoff.next())
        await self._set_status(OFFLINE, info.code, info.reason, retry_in=delay)
        return delay

    async def _wait(self, delay: float) -> None:
        if delay <= 0:
            return
        if self._sleep is not None:
            await self._sleep(delay)
            return
        assert self._wake is not None
        try:
            await asyncio.wait_for(self._wake.wait(), delay)
        except asyncio.TimeoutError:
            pass

    async def _set_status(self, status: str, code: Optional[int] = None, reason: Optional[str] = None,
                          retry_in: Optional[float] = None) -> None:
        if status == self._status:
            return
        previous, self._status = self._status, status
        await self._emit(StatusChanged(status, previous, code, reason, retry_in))

    # Frames

    async def _handle(self, session: Session, frame: Dict[str, Any]) -> None:
        kind = frame["type"]
        if kind in EVENT_FRAMES:
            await self._handle_event(session, frame)
        elif kind == "auth_required":
            # A connector of the app's own may not offer subprotocols; the version in the auth frame asks for
            # v2 all the same, and a gateway without v2 ignores it.
            auth: Dict[str, Any] = {"type": "auth", "token": self.token, "version": SUBPROTOCOLS[0]}
            if self.keepalive_request is not None:
                auth["keepalive"] = self.keepalive_request
            if self._observer:
                auth["role"] = "observer"
                if self.device is not None:
                    auth["device"] = self.device
            await session.send(auth)
        elif kind == "auth_ok":
            await self._authenticated(session, frame)
        elif kind == "auth_invalid":
            session.auth_invalid = str(frame.get("message") or "auth invalid")
        elif kind == "registered":
            await self._emit(Registered(frame.get("push_token"), frame.get("supports_live_activities")))
        elif kind == "error":
            session.last_error = str(frame.get("message", ""))
            await self._emit(ClientError(session.last_error))
        elif kind == "device":
            await self._emit(DeviceChanged(str(frame.get("device_id", "")), frame))

    async def _authenticated(self, session: Session, frame: Mapping[str, Any]) -> None:
        session.authed = True
        granted = frame.get("keepalive")
        self._keepalive = granted if isinstance(granted, int) and not isinstance(granted, bool) and granted > 0 else None
        if frame.get("device_id"):
            self._device_id = str(frame["device_id"])
        if not self._observer and (self.register is not None or self.supports_live_activities is not None):
            register: Dict[str, Any] = {"type": "register", **(self.register or {})}
            if self.supports_live_activities is not None:
                register["supports_live_activities"] = self.supports_live_activities
            await session.send(register)
        # The resume point is the client's own (wire detail 2): auth_ok's epoch and seq are the device's.
        subscribe: Dict[str, Any] = {"type": "subscribe"}
        if not self._observer and not self._want_snapshot and self._state["epoch"] is not None:
            subscribe["epoch"] = self._state["epoch"]
            subscribe["seq"] = self._state["seq"]
        self._want_snapshot = False
        await session.send(subscribe)
        outgoing, self._outgoing = self._outgoing, []
        for i, queued in enumerate(outgoing):
            if not await session.send(queued):
                self._outgoing = outgoing[i:] + self._outgoing
                break

    async def _handle_event(self, session: Session, frame: Dict[str, Any]) -> None:
        if session.discard:
            return
        device = str(frame.get("device_id", "")) if self._observer else (self._device_id or "")
        before = self._observed.get(device, empty_state()) if self._observer else self._state
        result = reduce(before, frame, now=self._clock(), device=device, max_notifications=self.max_notifications)
        if result.resync is not None:
            # The stream no longer matches what this client holds: start over from a snapshot (wire detail 8).
            await self._emit(ClientError(f"resynchronizing: {result.resync}"))
            self._want_snapshot = True
            session.discard = True
            await session.close("resync")
            return
        if self._observer:
            self._observed[device] = result.state
        else:
            self._state = result.state
        for event in result.events:
            await self._emit(event)
        if frame["type"] == "synced":
            self._backoff.reset()
            await self._set_status(LIVE)
        if self._observer or result.ack is None:
            return
        session.ackable = max(session.ackable, result.ack)
        session.pending_acks += 1

    async def _maybe_ack(self, session: Session) -> None:
        """Acks when nothing else waits to be handled, or every half window, so credit never runs out; the state
        is saved first (wire detail 9)."""
        half = max(1, self.window // 2)
        if session.pending_acks == 0 or (session.queued > 0 and session.pending_acks < half):
            return
        await self._persist()
        if await session.send({"type": "ack", "seq": session.ackable}):
            session.acked = session.ackable
            session.pending_acks = 0

    async def _persist(self) -> None:
        if self.store is None:
            return
        state = self._state
        await _maybe_await(self.store.save(self.store_key, state))
        self._saved = state

    async def _persist_quietly(self) -> None:
        try:
            await self._persist()
        except Exception as error:
            await self._emit(ClientError(f"saving the state: {error}", error))

    async def _emit(self, event: Event) -> None:
        for error in await self._dispatch.emit(event):
            if isinstance(event, ClientError):
                log.warning("an 'error' handler failed: %r", error)
            else:
                await self._emit(ClientError(f"a '{event.type}' handler failed: {error!r}", error))

    async def _send_or_queue(self, frame: Dict[str, Any], replaces: Callable[[Dict[str, Any]], bool]) -> None:
        session = self._session
        if session is not None and session.authed and await session.send(frame):
            return
        self._outgoing = [o for o in self._outgoing if not replaces(o)] + [frame]
        del self._outgoing[:-MAX_OUTGOING]


def _stream_url(url: str) -> str:
    """`ws://host:port` and `ws://host:port/` mean the stream endpoint, `/v1/stream`."""
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        raise ValueError(f"not a ws:// or wss:// url: {url!r}")
    if parts.path in ("", "/"):
        return url.rstrip("/") + "/v1/stream"
    return url
