"""Small pieces: RFC 7386 merge patches, the JSON-file store, pairing URLs and the blocking wrapper."""
import json
import time

import pytest

from fakes import FakeConnector
from lanpush import BlockingClient, Credentials, JSONFileStore, LanpushClient, PairingURL, merge_patch, reduce
from lanpush.merge_patch import json_equal

# RFC 7386, Appendix A: target, patch, result.
RFC_7386_CASES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize("target, patch, result", RFC_7386_CASES)
def test_merge_patch_rfc_7386_appendix_a(target, patch, result):
    before = json.dumps(target)
    assert merge_patch(target, patch) == result
    assert json.dumps(target) == before, "the target is never modified"


def test_json_equality_compares_numbers_by_value_but_never_a_boolean_with_a_number():
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal({"a": True}, {"a": 1})
    assert not json_equal({"a": 1}, {"a": 1, "b": None})


def test_a_null_stale_date_or_relevance_in_an_update_removes_it():
    held = {"epoch": "e", "seq": 1, "notifications": [], "activities": {"a": {
        "tag": "a", "attributes": {"tag": "a", "title": "A"}, "state": {}, "phase": "stale", "stale_date": 5,
        "relevance_score": 2}}}
    frame = {"type": "update", "seq": 2, "tag": "a", "patch": {}, "phase": "active", "stale_date": None,
             "relevance_score": 3}
    after = reduce(held, frame, now=10).state["activities"]["a"]
    assert after == {"tag": "a", "attributes": {"tag": "a", "title": "A"}, "state": {}, "phase": "active",
                     "relevance_score": 3}


def test_the_json_file_store_round_trips_replaces_atomically_and_ignores_junk(tmp_path):
    store = JSONFileStore(tmp_path / "state")
    assert store.load("lanpush:ws://gw/v1/stream") is None
    state = {"epoch": "e", "seq": 7, "activities": {"a": {"tag": "a", "attributes": {"tag": "a", "title": "Ä"},
                                                          "state": {"message": "·"}, "phase": "active"}},
             "notifications": []}
    store.save("lanpush:ws://gw/v1/stream", state)
    assert store.load("lanpush:ws://gw/v1/stream") == state
    assert store.load("lanpush:ws://other/v1/stream") is None, "one file per key"
    assert [p.name for p in (tmp_path / "state").iterdir()] == [store.path("lanpush:ws://gw/v1/stream").name]
    store.path("k").write_text('{"epoch": 3}')  # another version's file, or a torn one
    assert store.load("k") is None
    store.clear("lanpush:ws://gw/v1/stream")
    assert store.load("lanpush:ws://gw/v1/stream") is None


def test_pairing_urls():
    p = PairingURL.parse("lanpush://192.168.1.5:8765/pair?code=0123456789ABCDEF&fp=" + "AB" * 32
                         + "&alt=10.0.0.2:8765&alt=[fd00::2]:8765")
    assert p.host == "192.168.1.5:8765" and p.code == "0123456789ABCDEF" and p.fingerprint == "ab" * 32
    assert p.hosts == ["192.168.1.5:8765", "10.0.0.2:8765", "[fd00::2]:8765"]
    for bad in ("https://x/pair?code=1", "lanpush://x/pair", "lanpush://x/other?code=1"):
        with pytest.raises(ValueError):
            PairingURL.parse(bad)
    plain = Credentials("pi", "t", "gw:1")
    assert plain.stream_url == "ws://gw:1/v1/stream"
    assert Credentials.from_json(Credentials("pi", "t", "gw:1", "cd" * 32).to_json()).stream_url == "wss://gw:1/v1/stream"


def test_the_stream_path_is_added_to_a_bare_gateway_url():
    assert LanpushClient("ws://gw:8765", "t").url == "ws://gw:8765/v1/stream"
    assert LanpushClient("ws://gw:8765/", "t").url == "ws://gw:8765/v1/stream"
    with pytest.raises(ValueError):
        LanpushClient("http://gw:8765", "t")


def test_the_blocking_wrapper_iterates_events_and_acks_after_each_loop_body():
    connector = FakeConnector()
    connector.script = [
        {"type": "auth_required"}, {"type": "auth_ok", "device_id": "pi"},
        {"type": "snapshot", "epoch": "e", "seq": 1, "activities": []}, {"type": "synced", "seq": 1},
        {"type": "start", "seq": 2, "tag": "a", "state": {"message": "m"},
         "attributes": {"tag": "a", "title": "A", "started_at": 1}},
    ]
    seen = []
    with BlockingClient("ws://gw.test/v1/stream", "t", connector=connector, keepalive_interval=None) as client:
        events = client.events(timeout=5)
        assert next(events).status == "connecting", "nothing is missed before the loop starts"
        for event in events:
            seen.append(event.type)
            if event.type == "activity":
                t = connector.last
                assert t.sent_of("ack") == [], "nothing is acknowledged while the loop body runs"
                break
        assert client.state["activities"]["a"]["state"] == {"message": "m"}
        events.close()  # done with the loop: the client no longer waits for it
        deadline = time.monotonic() + 5
        while not t.sent_of("ack") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert t.sent_of("ack") == [{"type": "ack", "seq": 2}], "acknowledged once the loop moved on"
        client.dismiss("a")
    assert seen == ["snapshot", "synced", "status", "activity"]
    assert t.sent[-1] == {"type": "dismissed", "tag": "a"} and t.closed == (1000, "client stopped")
