"""The wall view (/wall) in headless Chromium (chromium.py): one device's activities full screen, as that device.

It authenticates with the device's token (it acks and counts as connected), keeps the client library's state in
localStorage and resumes from it by replay after a reload, and keeps the last state up, marked, while the gateway
is away.
"""
import contextlib
import json
import time

import websockets.sync.client as wsclient

from chromium import assert_real_icon, browser  # noqa: F401 (the browser fixture)

# HA's Live Activity docs: the washer cycle with progress, timer and icon.
WASHER = {"title": "Washing Machine", "message": "Rinsing · 1 of 2", "data": {
    "tag": "washer_cycle", "live_update": True, "progress": 900, "progress_max": 3600, "chronometer": True,
    "when": 2700, "when_relative": True, "notification_icon": "mdi:washing-machine",
    "notification_icon_color": "#2196F3", "color": "#2196F3"}}
CARD = "[data-region=wall-activities] [data-region=lock-screen][data-tag=washer_cycle]"
STATS = "window.lanpushWall.stats"


def push(gw, body, target="tablet"):
    status, answer = gw.request("POST", "/v1/push", dict(body, targets=[target]), headers=gw.admin_headers())
    assert status == 202, answer


def device(gw, device_id):
    status, answer = gw.get("/v1/devices")
    assert status == 200
    return next(d for d in answer["devices"] if d["id"] == device_id)


@contextlib.contextmanager
def observer(gw):
    """A live-preview-like observer session on the side: it must not make any device count as connected."""
    with wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream", subprotocols=["lanpush.v1"], open_timeout=10) as ws:
        assert json.loads(ws.recv(timeout=5))["type"] == "auth_required"
        ws.send(json.dumps({"type": "auth", "token": gw.admin, "role": "observer"}))
        assert json.loads(ws.recv(timeout=5))["type"] == "auth_ok"
        ws.send(json.dumps({"type": "subscribe"}))
        yield ws


def notes(browser):
    return browser.js("[...document.querySelectorAll('[data-region=notifications] [data-notification]')].map(n => n.textContent)")


def test_wall_view_is_the_device_resumes_and_survives_outages(gateway, browser):
    gw = gateway()
    with observer(gw):
        wall_view_flow(gw, browser)


def wall_view_flow(gw, browser):
    url = f"http://127.0.0.1:{gw.port}/wall"
    browser.open(f"{url}?token={gw.tokens['tablet']}", ready="window.lanpushWall")
    browser.wait("document.body.dataset.connState === 'live'", what="the wall view live")
    assert "token=" not in browser.js("location.href"), "the token stays out of the address bar"

    # The wall view is the device: it counts as connected (the observer does not, for any device).
    tablet = device(gw, "tablet")
    assert tablet["connected"] and tablet["sessions"] == 1 and tablet["path"] == "lan", tablet
    assert not device(gw, "phone")["connected"]

    # HA's washer cycle, large: the card spans the screen and its text reads from across a room.
    push(gw, WASHER)
    browser.wait(f"!!document.querySelector('{CARD}')", what="the washer card")
    size = browser.js(f"""(() => {{ const c = document.querySelector('{CARD} [data-field=card]').getBoundingClientRect();
        const title = getComputedStyle(document.querySelector('{CARD} [data-field=title]'));
        const timer = getComputedStyle(document.querySelector('{CARD} [data-field=timer]'));
        return {{width: c.width, viewport: innerWidth, title: parseFloat(title.fontSize), timer: parseFloat(timer.fontSize),
                 pct: document.querySelector('{CARD} [data-field=trailing]').textContent}}; }})()""")
    assert size["width"] > 0.8 * size["viewport"] and size["title"] >= 32 and size["timer"] >= 44, size
    assert size["pct"] == "25%"
    assert_real_icon(browser, CARD, "washing-machine")
    browser.screenshot("wall")
    push(gw, {"title": "Front door", "message": "Someone is at the door", "data": {"tag": "doorbell"}})
    browser.wait("document.querySelectorAll('[data-notification]').length === 1", what="the notification")
    assert browser.js(STATS)["snapshots"] == 1, "a fresh screen starts from a snapshot"
    browser.wait("!!localStorage.getItem('lanpush.wall.state') && "
                 "JSON.parse(localStorage.getItem('lanpush.wall.state')).notifications.length === 1", what="the state stored")

    # A reload resumes from what the page stored: a replay, no snapshot, nothing shown twice.
    browser.open(url, ready="window.lanpushWall")
    browser.wait("document.body.dataset.connState === 'live'", what="live again after the reload")
    browser.wait(f"!!document.querySelector('{CARD}')", what="the washer card after the reload")
    stats = browser.js(STATS)
    assert stats["snapshots"] == 0 and stats["replays"] >= 1 and stats["notifications"] == 0, stats
    assert len(notes(browser)) == 1 and "Someone is at the door" in notes(browser)[0]
    assert device(gw, "tablet")["sessions"] == 1

    # The gateway goes away: the last state stays up, marked offline since the last time it was live.
    gw.stop()
    browser.wait("!document.querySelector('[data-region=offline]').hidden", what="the offline marker")
    marker = browser.js("(m => ({text: m.textContent, since: +m.dataset.since}))(document.querySelector('[data-region=offline]'))")
    assert marker["text"].strip().startswith("Offline since") and abs(marker["since"] / 1000 - time.time()) < 30, marker
    assert browser.js(f"!!document.querySelector('{CARD}')") and browser.js("document.body.dataset.connState") == "offline"
    browser.screenshot("wall-offline")
    time.sleep(1.0)
    assert browser.js(f"!!document.querySelector('{CARD}')"), "still showing the last state"

    # Back: the wall view resumes on its own, the marker goes, updates flow again, still no duplicate.
    gw.start()
    browser.wait("document.body.dataset.connState === 'live'", timeout=15, what="live after the gateway restart")
    assert browser.js("document.querySelector('[data-region=offline]').hidden")
    push(gw, dict(WASHER, message="Spinning", data=dict(WASHER["data"], progress=2700)))
    browser.wait(f"document.querySelector('{CARD} [data-field=trailing]').textContent === '75%'", what="the update after the restart")
    assert len(notes(browser)) == 1
    assert browser.js(STATS)["snapshots"] == 0, "resumed by replay after the restart too"
    assert device(gw, "tablet")["connected"] and not device(gw, "phone")["connected"]
    assert browser.exceptions == []


def test_wall_view_pairs_with_a_pairing_url_or_the_short_code(gateway, browser):
    gw = gateway()
    status, pairing = gw.request("POST", "/v1/pairings", {"device": "hall", "name": "Hall"}, headers=gw.admin_headers())
    assert status == 201, pairing
    assert pairing["url"].startswith(f"lanpush://127.0.0.1:{gw.port}/pair?code=")
    browser.js("localStorage.clear()")
    browser.open(f"http://127.0.0.1:{gw.port}/wall", ready="window.lanpushWall")
    browser.wait("!document.querySelector('[data-region=pair-form]').hidden", what="the pairing form")
    # A wrong code is refused with a message; the URL from the API pairs.
    browser.js("""(() => { document.querySelector('[data-field=pair-code]').value = 'ZZZZ-ZZZZ';
        document.querySelector('[data-field=pair]').requestSubmit(); })()""")
    browser.wait("!document.querySelector('[data-field=pair-error]').hidden", what="the refusal")
    browser.js(f"""(() => {{ document.querySelector('[data-field=pair-code]').value = {json.dumps(pairing['url'])};
        document.querySelector('[data-field=pair]').requestSubmit(); }})()""")
    browser.wait("document.body.dataset.connState === 'live'", what="paired and live")
    assert device(gw, "hall")["connected"]
    push(gw, WASHER, target="hall")
    browser.wait(f"!!document.querySelector('{CARD}')", what="the hall's washer card")

    # The short code of a second pairing, typed: the same device, a new token (the old one stops working).
    status, again = gw.request("POST", "/v1/pairings", {"device": "hall"}, headers=gw.admin_headers())
    assert status == 201
    browser.open(f"http://127.0.0.1:{gw.port}/wall?pair={again['short_code'].lower()}", ready="window.lanpushWall")
    browser.wait("document.body.dataset.connState === 'live'", what="paired again with the short code")
    browser.wait(f"!!document.querySelector('{CARD}')", what="the card, from a snapshot for the new token")
    assert browser.js("localStorage.getItem('lanpush.wall.device')") == "hall"
    assert browser.exceptions == []


def test_wall_view_says_when_notifications_were_lost_while_it_was_away(gateway, browser):
    # A 4 KiB notification queue: what piles up while the screen is away overflows, and the gateway says so.
    gw = gateway(limits={"notification_queue_bytes": 4096})
    browser.js("localStorage.clear()")
    browser.open(f"http://127.0.0.1:{gw.port}/wall?token={gw.tokens['tablet']}", ready="window.lanpushWall")
    browser.wait("document.body.dataset.connState === 'live'", what="live")
    browser.open("about:blank", ready="true")
    deadline = time.time() + 5
    while device(gw, "tablet")["connected"] and time.time() < deadline:
        time.sleep(0.05)
    for i in range(40):
        push(gw, {"title": f"Note {i}", "message": "x" * 300, "data": {"tag": f"n{i}"}})
    browser.open(f"http://127.0.0.1:{gw.port}/wall", ready="window.lanpushWall")
    browser.wait("document.body.dataset.connState === 'live'", what="live again")
    browser.wait("!!document.querySelector('[data-field=dropped]')", what="the lost notifications reported")
    lost = int(browser.js("document.querySelector('[data-field=dropped]').dataset.count"))
    shown = notes(browser)
    assert 0 < lost < 40 and "Note 39" in shown[0], (lost, shown)
    assert browser.exceptions == []


def test_wall_view_draws_the_content_state_as_the_ios_app_does(gateway, browser):
    """The cards share the preview's renderer and its iOS-app rules: a `decreasing` bar drains, a tap on the card
    opens its `url`, and past a timer's end the app's stale rule marks the card (no frame needed)."""
    gw = gateway()  # a new port: a new origin, nothing stored yet
    browser.open(f"http://127.0.0.1:{gw.port}/wall?token={gw.tokens['tablet']}", ready="window.lanpushWall")
    browser.wait("document.body.dataset.connState === 'live'", what="live")
    push(gw, {"title": "Dryer", "message": "Drying", "data": {
        "tag": "dryer", "live_update": True, "progress": 25, "progress_max": 100, "progress_bar_direction": "decreasing",
        "url": "/lovelace/laundry", "chronometer": True, "when": 2, "when_relative": True}})
    dryer = "[data-region=wall-activities] [data-region=lock-screen][data-tag=dryer]"
    browser.wait(f"!!document.querySelector('{dryer}')", what="the dryer card")
    facts = browser.js(f"""(c => ({{value: c.querySelector('[data-field=progress-bar]').dataset.value,
        trailing: c.querySelector('[data-field=trailing]').textContent,
        href: c.querySelector('[data-field=card]').dataset.tapHref}}))(document.querySelector('{dryer}'))""")
    assert facts == {"value": "0.7500", "trailing": "25%", "href": "homeassistant://navigate/lovelace/laundry"}, facts
    browser.wait(f"document.querySelector('{dryer}').dataset.stale === 'app'", timeout=8, what="stale by the app's rule")
    assert browser.js(f"document.querySelector('{dryer} [data-field=phase-badge]').dataset.source") == "app"
    assert browser.exceptions == []
