"""The client against the real lanpushd: every final state must equal the gateway's own `GET /v1/activities`."""
import asyncio
import signal
import time

from fakes import eventually
from lanpush import Backoff, JSONFileStore, LanpushClient, MemoryStore
from lanpush.transport import websockets_connector
from live import CountingConnector, CuttableProxy, converged, live, push
from payloads import WASHER, WASHER_CLEAR, ev, segmented


def make_client(gw, device="phone", port=None, **options):
    options.setdefault("store", MemoryStore())
    options.setdefault("backoff", Backoff(initial=0.1, maximum=1.0))
    options.setdefault("handshake_timeout", 2.0)
    token = options.pop("token", None) or gw.tokens[device]
    return LanpushClient(f"ws://127.0.0.1:{port or gw.port}/v1/stream", token, **options)


def record(client, kind):
    seen = []
    client.on(kind, seen.append)
    return seen


async def test_the_washer_cycle_start_patches_end_and_the_final_state_is_the_gateways(gateway):
    gw = gateway()
    async with make_client(gw) as c:
        changes, ended, dismissed = record(c, "activity"), record(c, "ended"), record(c, "dismissed")
        await live(c)
        for payload in WASHER:
            await push(gw, "phone", payload)
        await push(gw, "phone", WASHER_CLEAR)
        await eventually(lambda: len(dismissed) == 1 or _fail(dismissed))
        await converged(c, gw)
        assert [e.cause for e in changes] == ["start", "update", "update", "end"]
        rinse = changes[1].current
        assert rinse["state"]["chronometer"] is True
        assert abs(rinse["state"]["countdown_end"] - (time.time() + 2700)) < 30, "when_relative became absolute"
        # clear_notification ends the activity and dismisses it at once ("phase":"dismissed"): the client holds
        # nothing, the `ended` event carried the final view and `activity` says it is gone.
        assert "washer_cycle" not in c.state["activities"]
        assert changes[-1].current is None and changes[-1].previous["phase"] == "active"
        final = ended[0].activity
        assert final["attributes"]["title"] == "Washing Machine"
        assert final["state"] == {"message": "Cycle complete", "title": "Washing Machine", "progress": 3600,
                                  "progress_max": 3600, "icon": "mdi:washing-machine", "color": "#4CAF50"}
        assert dismissed[0].activity == final


async def test_ev_charging_and_an_aivi_segmented_bar_updated_together_converge(gateway):
    gw = gateway()
    async with make_client(gw) as c:
        await live(c)
        for p in range(0, 101, 5):
            await push(gw, "phone", ev(p))
            await push(gw, "phone", segmented(min(1, p / 100)))
        await converged(c, gw)
        assert c.state["activities"]["ev-charging"]["state"]["critical_text"] == "100%"
        template = c.state["activities"]["supercharger"]["state"]["template"]
        assert template["progress"]["value"] == 1
        assert template["progress"]["segments"][1]["track_fill"] == "hatched"


async def test_a_connection_cut_mid_stream_resumes_by_replay_and_converges(gateway):
    gw = gateway()
    proxy = await CuttableProxy(gw.port).listen()
    async with make_client(gw, port=proxy.port) as c:
        replays = record(c, "replay")
        await live(c)
        for i in range(120):
            await push(gw, "phone", {"title": "T", "message": f"m{i}",
                                     "data": {"tag": f"t{i % 4}", "live_update": True, "progress": i, "progress_max": 120}})
            if i in (40, 80):
                await live(c)
                assert proxy.cut() > 0
        await converged(c, gw)
        assert len(replays) >= 2, f"resumed by replay ({len(replays)})"
    await proxy.close()


async def test_a_clean_restart_sigterm_gets_1001_and_resumes_in_the_same_epoch(gateway):
    gw = gateway()
    async with make_client(gw) as c:
        replays, statuses = record(c, "replay"), record(c, "status")
        await live(c)
        for payload in WASHER[:2]:
            await push(gw, "phone", payload)
        await converged(c, gw)
        epoch, seq = c.state["epoch"], c.state["seq"]
        await asyncio.to_thread(gw.stop, signal.SIGTERM)
        await eventually(lambda: any(s.status == "offline" and s.code == 1001 for s in statuses) or _fail(statuses))
        await asyncio.to_thread(gw.start)
        # The gateway keeps no resume history across a restart: a caught-up client replays (nothing).
        await eventually(lambda: any(r.from_seq == seq for r in replays) or _fail(replays), 10)
        await push(gw, "phone", WASHER[2])
        await converged(c, gw)
        assert c.state["epoch"] == epoch, "a clean stop keeps the epoch"


async def test_a_kill_9_restart_brings_a_new_epoch_a_snapshot_and_the_same_picture(gateway):
    gw = gateway()
    async with make_client(gw) as c:
        snapshots = record(c, "snapshot")
        await live(c)
        await push(gw, "phone", ev(40))
        await push(gw, "phone", WASHER[0])
        await converged(c, gw)
        epoch = c.state["epoch"]
        await asyncio.to_thread(gw.stop, signal.SIGKILL)
        await asyncio.to_thread(gw.start)
        await push(gw, "phone", ev(45))
        await converged(c, gw)
        assert c.state["epoch"] != epoch
        assert snapshots[-1].epoch == c.state["epoch"]
        assert c.state["activities"]["ev-charging"]["state"]["progress"] == 45


async def test_a_restarted_client_resumes_from_its_json_file_store_by_replay(gateway, tmp_path):
    gw = gateway()
    async with make_client(gw, store=JSONFileStore(tmp_path)) as first:
        await live(first)
        await push(gw, "phone", WASHER[0])
        await converged(first, gw)
        held = first.state["seq"]
    await push(gw, "phone", WASHER[1])  # while no client runs
    async with make_client(gw, store=JSONFileStore(tmp_path)) as second:
        replays, snapshots = record(second, "replay"), record(second, "snapshot")
        await converged(second, gw)
        assert [r.from_seq for r in replays] == [held] and snapshots == []
        assert second.state["activities"]["washer_cycle"]["state"]["message"] == "Rinsing · 1 of 2"


async def test_4001_a_wrong_token_stops_the_client_for_good(gateway):
    gw = gateway()
    connector = CountingConnector(websockets_connector())
    c = make_client(gw, token="not-a-token", connector=connector, backoff=Backoff(initial=0.05, maximum=0.1))
    rejected = record(c, "auth_rejected")
    task = c.start()
    await asyncio.wait_for(task, 5)  # run() returns: the client stopped by itself
    assert c.status == "auth_rejected"
    await asyncio.sleep(1.0)
    assert len(connector.transports) == 1, "one attempt, no retry"
    assert len(rejected) == 1 and rejected[0].code == 4001


async def test_a_handler_taking_100_ms_per_event_slows_the_flow_within_the_window_and_converges(gateway):
    gw = gateway(session={"window": 32})
    connector = CountingConnector(websockets_connector())
    c = make_client(gw, connector=connector)
    handled = []

    async def slow(event):
        handled.append(event)
        await asyncio.sleep(0.1)

    c.on("activity", slow)
    async with c:
        await live(c)
        updates = 150
        for i in range(updates):
            await push(gw, "phone", {"title": "Slow", "message": f"m{i}", "data": {
                "tag": f"s{i % 3}", "live_update": True, "progress": i, "progress_max": updates}})
        await converged(c, gw, timeout=30)
        assert len(connector.transports) == 1, "the session was never closed (no ack timeout)"
        assert connector.transports[0].max_unacked <= 32, f"held {connector.transports[0].max_unacked} unacked"
        assert connector.transports[0].max_unacked > 1, "acks were held back while the handler worked"
        assert len(handled) < updates, f"merged while the handler was busy: {len(handled)} events for {updates}"


async def test_register_with_supports_live_activities_and_an_observer_that_never_acks(gateway):
    gw = gateway()
    observer_connector = CountingConnector(websockets_connector())
    observer = make_client(gw, role="observer", token=gw.admin, device="phone", connector=observer_connector)
    devices, seen = record(observer, "device"), record(observer, "activity")
    async with observer:
        await live(observer)
        c = make_client(gw, register={"push_token": "tok-phone", "push_url": "https://relay.invalid/relay"},
                        supports_live_activities=True)
        registered = record(c, "registered")
        async with c:
            await live(c)
            await eventually(lambda: [r.push_token for r in registered] == ["tok-phone"] or _fail(registered))
            assert registered[0].supports_live_activities is True
            await push(gw, "phone", ev(70))
            await converged(c, gw)
            await converged(observer, gw, activities=lambda: observer.devices["phone"]["activities"])
            assert any(e.device == "phone" and e.current and e.current["state"]["progress"] == 70 for e in seen)
            await eventually(lambda: any(d.device == "phone" and d.info.get("connected") for d in devices)
                             or _fail(devices))
            listed = next(d for d in gw.get("/v1/devices")[1]["devices"] if d["id"] == "phone")
            assert listed["sessions"] == 1, "the observer does not count as a session of the device"
            assert listed.get("supports_live_activities") is True
    assert observer_connector.transports[0].acked == 0, "observers never ack"


async def test_a_dismissal_from_the_client_reaches_the_gateway(gateway):
    gw = gateway()
    async with make_client(gw) as c:
        await live(c)
        await push(gw, "phone", ev(10))
        await converged(c, gw)
        await c.dismiss("ev-charging")
        await converged(c, gw)
        assert "ev-charging" not in c.state["activities"]


def _fail(detail):
    raise AssertionError(detail)


async def test_a_longer_keepalive_is_asked_for_in_auth_and_the_granted_one_is_known(gateway):
    gw = gateway()
    async with make_client(gw, keepalive=120) as c:
        await live(c)
        assert c.keepalive == 120
    # Past the gateway's bounds (session.keepalive_max, 300 s by default): what it granted, not what was asked.
    async with make_client(gw, keepalive=3600) as c:
        await live(c)
        assert c.keepalive == 300
    async with make_client(gw) as c:
        await live(c)
        assert c.keepalive == 10  # the gateway's session.ping_interval, said in auth_ok all the same
