"""The e-ink example (examples/eink.py, eink_render.py), checked by reading pixels back: bars fill their share of
the width, segments and hatching are where the template says, and an unchanged picture is never redrawn."""
import asyncio
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import eink  # noqa: E402
from eink_render import HEIGHT, WIDTH, render  # noqa: E402
from fakes import eventually  # noqa: E402
from lanpush import Backoff, LanpushClient, MemoryStore  # noqa: E402
from live import push  # noqa: E402
from payloads import WASHER, ev, segmented  # noqa: E402

NOW = 1_700_000_000


def activity(tag, state, title="Title", phase="active", **extra):
    return {"tag": tag, "attributes": {"tag": tag, "title": title, "started_at": NOW}, "state": state,
            "phase": phase, **extra}


def row(image, box):
    """The pixels along the middle row of `box`, black as True."""
    y = (box[1] + box[3]) // 2
    return [image.getpixel((x, y)) == 0 for x in range(box[0], box[2] + 1)]


def filled_share(image, box):
    """The black run from the left inside a bar's 2-pixel outline, as a share of the inner width."""
    inner = row(image, (box[0] + 2, box[1], box[2] - 2, box[3]))
    run = next((i for i, black in enumerate(inner) if not black), len(inner))
    return run / len(inner)


def test_a_bar_at_25_percent_fills_a_quarter_of_its_width_and_the_percentage_replaces_critical_text():
    out = render([activity("ev", {"message": "Charging", "progress": 25, "progress_max": 100,
                                  "critical_text": "25 kW"})], NOW)
    assert out.image.mode == "1" and out.image.size == (WIDTH, HEIGHT)
    bar = out.regions["card0.bar"].box
    assert filled_share(out.image, bar) == pytest.approx(0.25, abs=0.005)
    assert all(row(out.image, (bar[0], bar[1], bar[0] + 1, bar[3]))), "the outline is drawn"
    assert out.regions["card0.title_right"].text == "25%"
    assert out.regions["card0.message"].text == "Charging"
    without_bar = render([activity("ev", {"message": "Charging", "critical_text": "25 kW"})], NOW)
    assert without_bar.regions["card0.title_right"].text == "25 kW" and "card0.bar" not in without_bar.regions


def test_chronometer_replaces_the_message_with_a_countdown_in_whole_minutes():
    state = {"message": "Rinsing", "chronometer": True, "countdown_end": NOW + 2700}
    assert render([activity("w", state)], NOW).regions["card0.message"].text == "45 min left"
    assert render([activity("w", state)], NOW + 2690).regions["card0.message"].text == "1 min left"
    assert render([activity("w", state)], NOW + 2700 + 180).regions["card0.message"].text == "+3 min"
    assert render([activity("w", state)], NOW + 1).image.tobytes() == render([activity("w", state)], NOW + 30).image.tobytes(), \
        "the picture does not change within a minute"


def test_the_aivi_layered_segmented_bar_fills_to_its_value_and_hatches_the_extended_track():
    t = segmented(0.9)["data"]["template"]
    out = render([activity("sc", {"message": "Charging", "template": t}, title="Supercharger")], NOW)
    whole = out.regions["card0.bar"].box
    first, second = out.regions["card0.bar.segment0"].box, out.regions["card0.bar.segment1"].box
    assert (first[2] - whole[0]) / (whole[2] - whole[0]) == pytest.approx(0.8, abs=0.01), "Standard is 80 % wide"
    assert out.regions["card0.bar.segment0"].text == "100%" and out.regions["card0.bar.segment1"].text == "50%"
    assert out.regions["card0.header"].text == "90%" and out.regions["card0.header_right"].text == "3 min left"
    assert out.regions["card0.footer_right"].text == "Est. $4.85"
    pixels = row(out.image, (second[0] + 3, second[1], second[2] - 3, second[3]))
    half = len(pixels) // 2
    assert all(pixels[:half - 2]), "the Extended segment's first half is filled"
    rest = pixels[half + 2:]
    assert 0.1 < sum(rest) / len(rest) < 0.3, "its unfilled rest is hatched, not solid and not empty"
    plain = render([activity("sc", {"template": {**t, "progress": {**t["progress"], "segments": [
        {**s, "track_fill": "solid"} for s in t["progress"]["segments"]]}}})], NOW)
    rest = row(plain.image, (second[0] + 3, second[1], second[2] - 3, second[3]))[half + 2:]
    assert not any(rest), "a solid track is an outline with nothing inside"


def test_split_segments_leave_gaps_between_them():
    t = segmented(0.5)["data"]["template"]
    t["progress"]["display"] = "split"
    out = render([activity("sc", {"template": t})], NOW)
    first, second = out.regions["card0.bar.segment0"].box, out.regions["card0.bar.segment1"].box
    assert second[0] - first[2] >= 6
    assert not any(row(out.image, (first[2] + 2, first[1], second[0] - 2, first[3]))), "the gap is white"
    assert filled_share(out.image, first) == pytest.approx(0.5 / 0.8, abs=0.01)


def test_an_ended_activity_shows_until_its_dismissal_date_and_more_than_three_are_counted():
    ended = activity("w", {"message": "Done"}, phase="ended", dismissal_date=NOW + 60)
    assert render([ended], NOW).regions["card0.message_right"].text == "Ended"
    assert "empty" in render([ended], NOW + 60).regions
    many = render([activity(f"t{i}", {"message": str(i)}) for i in range(5)], NOW)
    assert many.regions["more"].text == "+2 more" and "card3.title" not in many.regions


class CountingPanel:
    def __init__(self):
        self.images = []

    def show(self, image):
        self.images.append(image.tobytes())


async def test_the_redrawer_skips_unchanged_pictures_and_merges_changes_within_the_interval():
    panel = CountingPanel()
    r = eink.Redrawer(panel, min_interval=0.3)
    a, b, c = (render([activity("ev", {"progress": p, "progress_max": 100})], NOW).image for p in (10, 20, 30))
    r.offer(a)
    r.offer(a)
    assert len(panel.images) == 1, "the same picture again: no refresh"
    r.offer(b)
    r.offer(c)
    assert len(panel.images) == 1, "too soon: held back"
    await asyncio.sleep(0.4)
    assert panel.images == [a.tobytes(), c.tobytes()], "then only the latest is drawn"
    r.offer(c)
    await asyncio.sleep(0.4)
    assert len(panel.images) == 2


async def test_the_example_against_the_gateway_writes_a_png_only_when_the_picture_changes(gateway, tmp_path):
    gw = gateway()
    out = tmp_path / "screen.png"
    panel = eink.PNGPanel(out)
    client = LanpushClient(f"ws://127.0.0.1:{gw.port}/v1/stream", gw.tokens["phone"], store=MemoryStore(),
                           backoff=Backoff(initial=0.1, maximum=0.5))
    running = asyncio.ensure_future(eink.run(client, eink.Redrawer(panel, min_interval=0.2), tick=0.1))
    await eventually(lambda: _assert(client.status == "live" and panel.writes == 1), 10)  # "No activities"
    await push(gw, "phone", ev(25))
    await eventually(lambda: _assert(panel.writes == 2), 5)
    image = Image.open(out)
    assert image.mode == "1" and image.size == (800, 480)
    bar = render(client.activities(), time.time()).regions["card0.bar"].box
    assert filled_share(image, bar) == pytest.approx(0.25, abs=0.005)
    await push(gw, "phone", ev(25))  # the same content again, and ticks: nothing new to draw
    await asyncio.sleep(0.6)
    assert panel.writes == 2
    await push(gw, "phone", WASHER[0])
    await eventually(lambda: _assert(panel.writes == 3), 5)
    await client.stop()
    await asyncio.wait_for(running, 5)


async def test_the_command_line_pairs_once_then_keeps_a_png_current(gateway, tmp_path):
    """As clients/python/README.md has a Pi run it: `--pair URL --once`, then `--out FILE`."""
    gw = gateway()
    status, made = gw.request("POST", "/v1/pairings", {"device": "eink-pi"}, gw.admin_headers())
    assert status == 201
    script = str(Path(eink.__file__))
    files = ["--credentials", str(tmp_path / "credentials.json"), "--state-dir", str(tmp_path / "state")]
    paired = await asyncio.create_subprocess_exec(sys.executable, script, "--pair", made["url"], "--once", *files,
                                                  stdout=asyncio.subprocess.PIPE)
    out, _ = await paired.communicate()
    assert paired.returncode == 0 and b"paired as 'eink-pi'" in out
    await push(gw, "eink-pi", ev(40))
    screen = tmp_path / "screen.png"
    running = await asyncio.create_subprocess_exec(sys.executable, script, "--out", str(screen), *files,
                                                   stderr=asyncio.subprocess.DEVNULL)
    try:
        await eventually(lambda: _assert(screen.exists()), 10)
        image = Image.open(screen)
        expected = render([{"tag": "ev-charging", "attributes": {"title": "EV Charging"}, "phase": "active",
                            "state": {"message": "Charging · 40%", "progress": 40, "progress_max": 100}}], NOW)
        assert filled_share(image, expected.regions["card0.bar"].box) == pytest.approx(0.4, abs=0.005)
    finally:
        running.terminate()
        await running.wait()
    assert list((tmp_path / "state").iterdir()), "the resume point was kept"


def _assert(value):
    assert value
