"""LanpushClient over a scripted socket: the handshake, when acks go out, persistence before acks, resync, and
queued user actions. Reconnect timing is in test_reconnect.py."""
import asyncio

from fakes import FakeConnector, eventually, handshake, settle
from lanpush import LanpushClient, MemoryStore

URL = "ws://gw.test/v1/stream"
KEY = f"lanpush:{URL}"


def attrs(tag):
    return {"tag": tag, "title": tag.upper(), "started_at": 1_700_000_000}


def start(seq, tag, state=None):
    return {"type": "start", "seq": seq, "tag": tag, "attributes": attrs(tag), "state": state or {"message": "hi"}}


def make(connector, **options):
    options.setdefault("keepalive_interval", None)
    return LanpushClient(URL, "secret", connector=connector, **options)


async def test_handshake_auth_register_with_supports_live_activities_and_the_stored_resume_point():
    connector, store = FakeConnector(), MemoryStore()
    store.save(KEY, {"epoch": "e1", "seq": 41, "activities": {}, "notifications": []})
    c = make(connector, store=store, register={"push_token": "tok", "push_url": "http://ha/relay"},
             supports_live_activities=True)
    c.start()
    t = await handshake(connector)
    assert t.subprotocols == ["lanpush.v2", "lanpush.v1"]
    assert t.sent == [
        {"type": "auth", "token": "secret", "version": "lanpush.v2"},
        {"type": "register", "push_token": "tok", "push_url": "http://ha/relay", "supports_live_activities": True},
        {"type": "subscribe", "epoch": "e1", "seq": 41},
    ]
    assert c.status == "connecting"
    t.receive({"type": "replay", "from": 41, "epoch": "e1"})
    t.receive({"type": "synced", "seq": 41})
    await eventually(lambda: _assert(c.status == "live"))
    assert t.sent_of("ack") == [], "replay and synced need no ack"
    await c.stop()
    assert c.status == "offline" and t.closed == (1000, "client stopped")


async def test_supports_live_activities_alone_is_registered_without_relay_credentials():
    connector = FakeConnector()
    c = make(connector, supports_live_activities=False)
    c.start()
    t = await handshake(connector)
    assert t.sent_of("register") == [{"type": "register", "supports_live_activities": False}]
    await c.stop()


async def test_acks_follow_the_handler_and_frames_wait_in_order():
    connector = FakeConnector()
    c = make(connector)
    seen, release = [], asyncio.Event()

    async def handler(event):
        seen.append(event.tag)
        if event.tag == "a":
            await release.wait()

    c.on("activity", handler)
    c.start()
    t = await handshake(connector)
    t.receive(start(1, "a"))
    t.receive(start(2, "b"))
    await settle()
    assert t.sent_of("ack") == [], "no ack while the handler of seq 1 runs"
    assert seen == ["a"], "seq 2 waits for seq 1's handler"
    release.set()
    await eventually(lambda: _assert(t.sent_of("ack")))
    assert t.sent_of("ack") == [{"type": "ack", "seq": 2}], "one cumulative ack once the queue drained"
    await c.stop()


async def test_acks_go_out_at_least_every_half_window_while_frames_keep_coming():
    connector = FakeConnector()
    c = make(connector, window=8)
    c.start()
    t = await handshake(connector)
    for i in range(1, 21):
        t.receive(start(i, f"t{i}"))
    await eventually(lambda: _assert(t.sent_of("ack") and t.sent_of("ack")[-1]["seq"] == 20))
    assert [a["seq"] for a in t.sent_of("ack")] == [4, 8, 12, 16, 20]
    await c.stop()


async def test_an_async_for_loop_is_a_handler_too_the_ack_waits_for_its_body():
    connector = FakeConnector()
    c = make(connector)
    bodies_done = []

    async def consume():
        async for event in c:
            if event.type == "activity":
                await asyncio.sleep(0.05)
                assert connector.last.sent_of("ack") == [], "not acked while the loop body runs"
                bodies_done.append(event.tag)

    consumer = asyncio.ensure_future(consume())
    t = await handshake(connector)
    t.receive(start(1, "a"))
    await eventually(lambda: _assert(t.sent_of("ack") == [{"type": "ack", "seq": 1}]))
    assert bodies_done == ["a"]
    await c.stop()
    await asyncio.wait_for(consumer, 2)  # the loop ends when the client stops


async def test_the_state_is_saved_before_the_ack_that_covers_it():
    order = []

    class SlowStore(MemoryStore):
        async def save(self, key, state):
            await asyncio.sleep(0.01)
            order.append(f"save {state['seq']}")
            super().save(key, state)

    connector = FakeConnector()
    c = make(connector, store=SlowStore())
    c.start()
    t = await handshake(connector)
    t.on_send = lambda f: order.append(f"ack {f['seq']}") if f["type"] == "ack" else None
    t.receive(start(1, "a"))
    await eventually(lambda: _assert("ack 1" in order))
    assert order == ["save 1", "ack 1"]
    await c.stop()


async def test_a_failing_store_holds_the_ack_back_and_says_so():
    class BrokenStore(MemoryStore):
        def save(self, key, state):
            raise OSError("disk full")

    connector = FakeConnector()
    c = make(connector, store=BrokenStore())
    errors = []
    c.on("error", errors.append)
    c.start()
    t = await handshake(connector)
    t.receive(start(1, "a"))
    await eventually(lambda: _assert(errors))
    assert "disk full" in errors[0].message and t.sent_of("ack") == []
    await c.stop()


async def test_an_update_of_an_activity_never_seen_drops_the_resume_point_and_asks_for_a_snapshot():
    connector = FakeConnector()
    c = make(connector)
    errors = []
    c.on("error", errors.append)
    c.start()
    t = await handshake(connector)
    t.receive({"type": "snapshot", "epoch": "e1", "seq": 5, "activities": []})
    t.receive({"type": "update", "seq": 7, "tag": "ghost", "patch": {"message": "?"}, "phase": "active"})
    t.receive(start(8, "after"))  # later frames of that session are ignored
    t2 = await handshake(connector, 2)
    assert t.closed == (1000, "resync")
    assert t2.sent_of("subscribe") == [{"type": "subscribe"}], "no resume point: a snapshot comes"
    assert "after" not in c.state["activities"] and "resynchronizing" in errors[0].message
    await c.stop()


async def test_actions_taken_offline_are_kept_latest_per_tag_and_sent_once_authenticated():
    connector = FakeConnector()
    c = make(connector)
    await c.dismiss("washer")
    await c.send_live_activity_token("washer", "old")
    await c.send_live_activity_token("washer", "new", expires_at=1_800_000_000)
    await c.send_push_to_start_token("pts")
    await c.dismiss("washer")
    c.start()
    t = await handshake(connector)
    await eventually(lambda: _assert(len(t.sent) == 5))
    assert t.sent[2:] == [
        {"type": "live_activity_token", "tag": "washer", "token": "new", "expires_at": 1_800_000_000},
        {"type": "push_to_start_token", "token": "pts"},
        {"type": "dismissed", "tag": "washer"},
    ]
    await c.dismiss("dryer")  # online: straight out
    assert t.sent[-1] == {"type": "dismissed", "tag": "dryer"}
    await c.stop()


async def test_an_observer_sends_its_role_and_device_keeps_per_device_state_and_never_acks():
    connector = FakeConnector()
    store = MemoryStore()
    c = LanpushClient(URL, "admin", role="observer", device="phone", store=store, connector=connector,
                      keepalive_interval=None)
    seen = []
    c.on("activity", seen.append)
    c.start()
    t = await handshake(connector)
    assert t.sent[:2] == [{"type": "auth", "token": "admin", "version": "lanpush.v2", "role": "observer",
                           "device": "phone"},
                          {"type": "subscribe"}]
    t.receive({"type": "snapshot", "epoch": "e", "seq": 3, "activities": [], "device_id": "phone"})
    t.receive({**start(4, "a"), "device_id": "phone"})
    t.receive({"type": "device", "device_id": "phone", "connected": True, "sessions": 1})
    await eventually(lambda: _assert(seen))
    assert seen[0].device == "phone" and "a" in c.devices["phone"]["activities"]
    await settle()
    assert t.sent_of("ack") == [] and store.load(f"lanpush:{URL}") is None, "observers never ack nor store"
    await c.stop()


async def test_a_failing_handler_is_reported_and_the_stream_goes_on():
    connector = FakeConnector()
    c = make(connector)
    errors = []
    c.on("activity", lambda e: 1 / 0)
    c.on("error", errors.append)
    c.start()
    t = await handshake(connector)
    t.receive(start(1, "a"))
    await eventually(lambda: _assert(t.sent_of("ack") == [{"type": "ack", "seq": 1}]))
    assert "ZeroDivisionError" in errors[0].message
    await c.stop()


async def test_remove_notification_is_local_and_persisted():
    connector, store = FakeConnector(), MemoryStore()
    c = make(connector, store=store)
    c.start()
    t = await handshake(connector)
    t.receive({"type": "notification", "seq": 1, "message": "door", "data": {"tag": "door"}})
    await eventually(lambda: _assert(c.state["notifications"]))
    await c.remove_notification(1)
    assert c.state["notifications"] == [] and store.load(KEY)["notifications"] == []
    await c.stop()


async def test_a_stop_right_after_start_is_honoured_and_run_returns_after_a_stop_from_a_handler():
    connector = FakeConnector()
    c = make(connector)
    c.start()
    await c.stop()
    assert connector.attempts == 0 and c.status == "offline"
    c.on("activity", lambda e: asyncio.ensure_future(c.stop()))
    running = asyncio.ensure_future(c.run())
    t = await handshake(connector)
    t.receive(start(1, "a"))
    await asyncio.wait_for(running, 2)
    assert t.closed == (1000, "client stopped")


def _assert(value):
    assert value
