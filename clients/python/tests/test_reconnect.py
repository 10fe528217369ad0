"""How the client comes back (docs/CLIENTS.md "Reconnecting"): each close code's delay, read off the client's own
`sleep` so no test waits for real."""
import asyncio

import pytest

from fakes import FakeConnector, eventually, handshake
from lanpush import Backoff, LanpushClient, MemoryStore

URL = "ws://gw.test/v1/stream"


def make(connector, delays, **options):
    async def sleep(seconds):
        delays.append(seconds)
        await asyncio.sleep(0)

    options.setdefault("keepalive_interval", None)
    return LanpushClient(URL, "secret", connector=connector, sleep=sleep, **options)


async def synced(t, seq=3, epoch="e1"):
    t.receive({"type": "snapshot", "epoch": epoch, "seq": seq, "activities": []})
    t.receive({"type": "synced", "seq": seq})


@pytest.mark.parametrize("close", [(4001, "auth invalid"), (None, None)], ids=["4001", "auth_invalid-without-code"])
async def test_a_refused_token_stops_the_client_for_good(close):
    connector, delays = FakeConnector(), []
    c = make(connector, delays)
    rejected = []
    c.on("auth_rejected", rejected.append)
    task = c.start()
    await eventually(lambda: _assert(connector.transports))
    t = connector.last
    t.receive({"type": "auth_required"})
    t.receive({"type": "auth_invalid", "message": "invalid token"})
    t.server_close(*close)
    await asyncio.wait_for(task, 2)
    assert connector.attempts == 1 and delays == [], "never retried"
    assert c.status == "auth_rejected"
    assert [(r.message, r.code) for r in rejected] == [("invalid token", close[0])]


@pytest.mark.parametrize("code", [1001, 4002, 4003])
async def test_reconnects_at_once_after_an_authenticated_session_and_resumes(code):
    connector, delays = FakeConnector(), []
    c = make(connector, delays, store=MemoryStore())
    c.start()
    t = await handshake(connector)
    await synced(t)
    await eventually(lambda: _assert(c.status == "live"))
    t.server_close(code, "bye")
    t2 = await handshake(connector, 2)
    assert delays == [], "no wait"
    assert t2.sent_of("subscribe") == [{"type": "subscribe", "epoch": "e1", "seq": 3}]
    await c.stop()


async def test_4029_waits_the_seconds_the_gateway_names():
    connector, delays = FakeConnector(), []
    c = make(connector, delays)
    statuses = []
    c.on("status", statuses.append)
    c.start()
    await eventually(lambda: _assert(connector.transports))
    connector.last.receive({"type": "auth_required"})
    connector.last.server_close(4029, "try again in 7 s")
    await handshake(connector, 2)
    assert len(delays) == 1 and 7 <= delays[0] <= 7.7, delays
    offline = next(s for s in statuses if s.status == "offline")
    assert (offline.code, offline.retry_in) == (4029, delays[0])
    await c.stop()


async def test_1013_too_many_sessions_backs_off_at_least_5_s():
    connector, delays = FakeConnector(), []
    c = make(connector, delays, backoff=Backoff(initial=0.1))
    c.start()
    await eventually(lambda: _assert(connector.transports))
    connector.last.server_close(1013, "too many sessions")
    await handshake(connector, 2)
    assert len(delays) == 1 and delays[0] >= 5
    await c.stop()


async def test_failed_attempts_back_off_exponentially_and_a_live_session_resets_it():
    connector, delays = FakeConnector(), []
    connector.refuse = 4
    # random() = 1: every delay is the lower bound, half the ceiling.
    c = make(connector, delays, backoff=Backoff(initial=0.5, maximum=3, random=lambda: 1.0))
    c.start()
    t = await handshake(connector, 1)
    assert delays == [0.25, 0.5, 1.0, 1.5]
    await synced(t)
    await eventually(lambda: _assert(c.status == "live"))
    t.server_close(1006)  # dropped, no close frame: backoff from the start again
    await handshake(connector, 2)
    assert delays[4:] == [0.25]
    await c.stop()


async def test_an_attempt_without_auth_ok_is_given_up_after_the_handshake_timeout():
    connector, delays = FakeConnector(), []
    c = make(connector, delays, handshake_timeout=0.2)
    statuses = []
    c.on("status", statuses.append)
    c.start()
    await eventually(lambda: _assert(len(connector.transports) >= 2), 3)
    assert connector.transports[0].closed == (None, None), "a link that never answers is dropped, not closed"
    assert any(s.reason == "handshake timeout" for s in statuses)
    await c.stop()


def test_backoff_doubles_to_its_ceiling_with_jitter_below_each_delay():
    draws = iter([0.0, 0.5, 1.0, 0.0, 0.0])
    b = Backoff(initial=0.5, maximum=2, random=lambda: next(draws))
    assert [b.next() for _ in range(5)] == [0.5, 0.75, 1.0, 2.0, 2.0]
    b.reset()
    assert b.attempts == 0


def _assert(value):
    assert value
