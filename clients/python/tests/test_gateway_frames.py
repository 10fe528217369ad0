"""The less common frames, against the real lanpushd: an overflowing notification queue (`notifications_dropped`),
an ended activity dismissed again (an `end` with a new dismissal date), and the client's own reports reaching
the gateway (`live_activity_token`, `push_to_start_token`, sent at once or kept while offline)."""
import asyncio
import time

import pytest

from fakes import eventually
from lanpush import LanpushClient, MemoryStore
from live import converged, live, push
from payloads import ev


def client_for(gw, **options):
    return LanpushClient(f"ws://127.0.0.1:{gw.port}/v1/stream", gw.tokens["phone"], store=MemoryStore(), **options)


async def test_an_overflowing_notification_queue_is_reported_in_band_and_the_rest_arrives(gateway):
    gw = gateway(session={"window": 2}, limits={"notification_queue_bytes": 4096})
    c = client_for(gw)
    release = asyncio.Event()
    notifications, dropped = [], []

    async def slow(event):
        notifications.append(event.notification["message"])
        await release.wait()  # the app is busy: nothing is acknowledged, the queue fills

    c.on("notification", slow)
    c.on("notifications_dropped", dropped.append)
    async with c:
        await live(c)
        for i in range(40):  # ~250 bytes each: far more than 4 KiB
            await push(gw, "phone", {"title": "Doorbell", "message": f"ring {i:02d} " + "x" * 200,
                                     "data": {"tag": f"ring-{i}"}})
        release.set()
        await eventually(lambda: _assert(notifications and notifications[-1].startswith("ring 39")), 10)
    # One frame per drop as it happens (each naming the seq it went up to), never an ack or a seq of its own.
    lost = sum(d.count for d in dropped)
    assert lost > 0 and [d.through for d in dropped] == sorted(d.through for d in dropped), dropped
    got = [int(m.split()[1]) for m in notifications]
    assert got == sorted(got) and len(got) + lost == 40, (got, dropped)
    assert c.state["seq"] >= dropped[-1].through


async def test_an_ended_activity_dismissed_again_takes_the_new_dismissal_date(gateway):
    gw = gateway()
    c = client_for(gw)
    ended = []
    c.on("ended", ended.append)
    async with c:
        await live(c)
        await push(gw, "phone", ev(50))
        await converged(c, gw)
        status, _ = await asyncio.to_thread(gw.request, "DELETE", "/v1/activities/ev-charging?device=phone",
                                            None, gw.admin_headers())
        assert status in (200, 202)
        await eventually(lambda: _assert(len(ended) == 1))
        assert abs(ended[0].activity["dismissal_date"] - (time.time() + 4 * 3600)) < 60, "default: up to 4 h"
        status, _ = await asyncio.to_thread(gw.request, "DELETE", "/v1/activities/ev-charging?device=phone&dismissal=120",
                                            None, gw.admin_headers())
        assert status in (200, 202)
        await eventually(lambda: _assert(len(ended) == 2))
        assert abs(ended[1].activity["dismissal_date"] - (time.time() + 120)) < 30
        assert c.state["activities"]["ev-charging"]["phase"] == "ended"
        await converged(c, gw)


async def test_tokens_reported_online_and_offline_reach_the_gateway(gateway):
    gw = gateway()
    c = client_for(gw, supports_live_activities=True)
    await c.send_push_to_start_token("pts-1")  # not started yet: kept, sent once authenticated
    async with c:
        await live(c)
        await c.send_live_activity_token("ev-charging", "la-1", expires_at=int(time.time()) + 3600)

        def reported():
            device = next(d for d in gw.get("/v1/devices")[1]["devices"] if d["id"] == "phone")
            # The report says that there are tokens, not what they are.
            assert device.get("push_to_start_token") is True, device
            assert device.get("live_activity_tokens") == 1, device
            assert device.get("supports_live_activities") is True

        await eventually(reported, 5)


async def test_an_update_without_a_stale_date_clears_the_one_the_activity_had(gateway):
    gw = gateway()
    async with client_for(gw) as c:
        await live(c)
        await push(gw, "phone", {"title": "A", "message": "one",
                                 "data": {"tag": "a", "live_update": True, "stale_date": int(time.time()) + 3600}})
        await push(gw, "phone", {"title": "A", "message": "two", "data": {"tag": "a", "live_update": True}})
        await converged(c, gw, timeout=3)


def _assert(value):
    assert value
