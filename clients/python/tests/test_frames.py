"""Reading a server frame: lanpush.v2's arrays become lanpush.v1's objects right after parsing, objects stay as they
are, and an array that is no v2 frame is unreadable, as text that is not JSON is."""
import json

import pytest

from lanpush.frames import parse_frame

ATTRIBUTES = {"started_at": 1700000000, "tag": "ev", "title": "EV"}

# The v1 object and its v2 array, as PROTOCOL.md's lanpush.v2 section shows them.
DOCUMENTED = [
    ({"patch": {"progress": 35}, "phase": "active", "seq": 12, "tag": "ev", "type": "update"},
     ["update", 12, "ev", {"progress": 35}]),
    ({"patch": {}, "phase": "stale", "seq": 13, "silent": True, "tag": "ev", "type": "update"},
     ["update", 13, "ev", {}, {"phase": "stale", "silent": True}]),
    ({"dismissal_date": 1700000900, "patch": {"message": "done"}, "seq": 14, "tag": "ev", "type": "end"},
     ["end", 14, "ev", {"message": "done"}, {"dismissal_date": 1700000900}]),
    ({"attributes": ATTRIBUTES, "seq": 1, "state": {"message": "hi"}, "tag": "ev", "type": "start"},
     ["start", 1, "ev", {"message": "hi"}, {"attributes": ATTRIBUTES}]),
    ({"phase": "stale", "seq": 15, "tag": "ev", "type": "lifecycle"},
     ["lifecycle", 15, "ev", "stale"]),
]

# Every form with its extras: each body member, the members that only some frames carry, an observer's device_id.
FORMS = [
    ({"type": "start", "seq": 2, "tag": "w", "state": {"message": "m", "progress": 1}, "phase": "ended",
      "attributes": {"tag": "w", "title": "W", "started_at": 1}, "dismissal_date": 9, "stale_date": 8,
      "relevance_score": 0.5, "alert": {"title": "a"}, "device_id": "phone"},
     ["start", 2, "w", {"message": "m", "progress": 1},
      {"phase": "ended", "attributes": {"tag": "w", "title": "W", "started_at": 1}, "dismissal_date": 9,
       "stale_date": 8, "relevance_score": 0.5, "alert": {"title": "a"}, "device_id": "phone"}]),
    ({"type": "update", "seq": 3, "tag": "w", "patch": {"progress": None}, "phase": "active", "stale_date": None,
      "relevance_score": 2, "alert": {"sound": "default"}},
     ["update", 3, "w", {"progress": None}, {"stale_date": None, "relevance_score": 2, "alert": {"sound": "default"}}]),
    ({"type": "end", "seq": 4.0, "tag": "w", "patch": {}, "phase": "dismissed", "dismissal_date": 1700000000},
     ["end", 4.0, "w", {}, {"phase": "dismissed", "dismissal_date": 1700000000}]),
    ({"type": "lifecycle", "seq": 5, "tag": "w", "phase": "dismissed", "device_id": "tablet"},
     ["lifecycle", 5, "w", "dismissed", {"device_id": "tablet"}]),
    ({"type": "update", "seq": 6, "tag": "w", "patch": {"a": 1}, "phase": "active"},
     ["update", 6, "w", {"a": 1}, {}]),
]

MALFORMED = [
    [],
    ["update"],
    ["update", 12, "ev"],  # fewer than 4
    ["update", 12, "ev", {}, {}, {}],  # more than five
    ["notification", 12, "ev", {}],  # only the four activity frames are arrays
    ["snapshot", 12, "ev", {}],
    ["Update", 12, "ev", {}],
    [12, "update", "ev", {}],
    [None, 12, "ev", {}],
    ["update", "12", "ev", {}],  # seq not a number
    ["update", None, "ev", {}],
    ["update", True, "ev", {}],
    ["update", [12], "ev", {}],
    ["update", 12, 7, {}],  # tag not a string
    ["update", 12, None, {}],
    ["update", 12, "ev", {}, []],  # extras not an object
    ["update", 12, "ev", {}, None],
    ["update", 12, "ev", {}, "stale"],
    ["start", 1, "ev", "hi", {"attributes": ATTRIBUTES}],  # body of the wrong JSON type
    ["start", 1, "ev", None, {"attributes": ATTRIBUTES}],
    ["update", 12, "ev", [1]],
    ["update", 12, "ev", None],
    ["end", 14, "ev", "done"],
    ["lifecycle", 15, "ev", {"phase": "stale"}],
    ["lifecycle", 15, "ev", None],
    [["update", 12, "ev", {}]],
]


def read(value):
    return parse_frame(json.dumps(value))


@pytest.mark.parametrize("v1, v2", DOCUMENTED, ids=lambda v: json.dumps(v)[:40])
def test_the_documented_arrays_read_as_their_v1_objects(v1, v2):
    assert read(v2) == v1


@pytest.mark.parametrize("v1, v2", FORMS, ids=lambda v: json.dumps(v)[:40])
def test_every_form_reads_as_its_v1_object(v1, v2):
    assert read(v2) == v1


def test_an_update_without_a_phase_is_active_and_one_with_a_phase_keeps_it():
    assert read(["update", 1, "t", {}])["phase"] == "active"
    assert read(["update", 1, "t", {}, {"phase": "stale"}])["phase"] == "stale"
    assert "phase" not in read(["start", 1, "t", {}, {"attributes": ATTRIBUTES}]), "start: absent means active"


def test_extras_never_overwrite_the_positional_members():
    frame = read(["update", 7, "a", {"x": 1}, {"type": "notification", "seq": 99, "tag": "b", "patch": {"y": 2}}])
    assert frame == {"type": "update", "seq": 7, "tag": "a", "patch": {"x": 1}, "phase": "active"}


@pytest.mark.parametrize("v2", MALFORMED, ids=lambda v: json.dumps(v))
def test_an_array_that_is_no_v2_frame_is_unreadable_like_invalid_json(v2):
    assert read(v2) is None


@pytest.mark.parametrize("text", ["not json", "{", "", "null", "12", '"update"', "{}", '{"type": 1}'])
def test_what_was_unreadable_in_v1_still_is(text):
    assert parse_frame(text) is None


def test_objects_are_read_as_they_are_in_either_version():
    for frame in [v1 for v1, _ in DOCUMENTED] + [
            {"type": "auth_ok", "device_id": "phone", "epoch": "e", "seq": 0, "version": "lanpush.v2"},
            {"type": "snapshot", "epoch": "e", "seq": 3, "activities": []},
            {"type": "notification", "seq": 4, "title": "t", "data": {}}]:
        assert parse_frame(json.dumps(frame)) == frame
