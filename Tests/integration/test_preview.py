"""The live preview page, in Debian's headless Chromium driven over the DevTools protocol (chromium.py).

The browser is an independent lanpush.v1 client (its own WebSocket and JSON); the assertions read the DOM's
stable data-* attributes and computed styles. Screenshots land in test-artifacts/ (gitignored).
"""
import gzip
import http.client
import json
import os
import re
import threading
import time
from pathlib import Path

import gateway as gateway_module
from chromium import assert_real_icon, browser  # noqa: F401 (the browser fixture)

# A lanpushd built elsewhere (e.g. `swift build --scratch-path .build-x`) can be tested with LANPUSHD=path.
if os.environ.get("LANPUSHD"):
    gateway_module.BINARY = Path(os.environ["LANPUSHD"]).resolve()


def push(gw, body, target="phone"):
    status, answer = gw.request("POST", "/v1/push", dict(body, targets=[target]), headers=gw.admin_headers())
    assert status == 202, answer
    return answer


def card(tag, device="phone"):
    return f"[data-region=lock-screen][data-device-id={device}][data-tag={tag}]"


def pres(tag, device="phone"):
    return f"[data-activity-presentations][data-device-id={device}][data-tag={tag}]"


FACTS = """(sel => {
  const root = document.querySelector(sel);
  if (!root) return null;
  const q = s => root.querySelector(s);
  const text = s => (q(s) || {}).textContent ?? null;
  const style = (s, p) => q(s) ? getComputedStyle(q(s))[p] : null;
  return {
    phase: root.dataset.phase, template: root.dataset.template, text: root.textContent,
    title: text('[data-field=title]'), message: text('[data-field=message]'), timer: text('[data-field=timer]'),
    trailing: text('[data-field=trailing]'), trailingSource: (q('[data-field=trailing]') || {dataset: {}}).dataset.source,
    iconColor: style('[data-field=icon]', 'color'), iconAttr: (q('[data-field=icon]') || {dataset: {}}).dataset.iconColor,
    iconGlyph: (q('[data-field=icon]') || {dataset: {}}).dataset.iconGlyph,
    fillColor: style('[data-field=progress-fill]', 'backgroundColor'),
    fillShare: q('[data-field=progress-fill]') ? q('[data-field=progress-fill]').style.width : null,
    background: style('[data-field=card]', 'backgroundColor'), textColor: style('[data-field=card]', 'color'),
    filter: getComputedStyle(root).filter, opacity: getComputedStyle(root).opacity,
    badge: text('[data-field=phase-badge]'),
  };
})"""

ALL_FIELDS_UPDATE = {"title": "All Fields", "message": "Almost done",
                     "data": {"tag": "debug-all", "live_update": True, "critical_text": "1 min", "progress": 80,
                              "progress_max": 100, "notification_icon": "mdi:home-assistant",
                              "notification_icon_color": "#FF9800"}}

AIVI_LAYERED = {"title": "Supercharger", "data": {"tag": "aivi-charging", "live_update": True, "template": {
    "template": "progress", "icon": "bolt.car", "header_left": {"value": "90%", "text_color": "green"},
    "header_right": {"value": "3 min left"},
    "progress": {"style": "segmented", "value": 0.90, "display": "layered", "segments": [
        {"value": 0.8, "fill_color": "green", "track_color": "gray", "label": "Standard"},
        {"value": 0.2, "fill_color": "green", "track_color": "gray", "track_fill": "hatched", "label": "Extended"}]},
    "footer_left": {"value": "Supercharger", "text_color": "gray"}, "footer_right": {"value": "Est. $4.85"},
    "compact_value": {"value": "90%"}}}}

AIVI_SPLIT = {"title": "Dishwasher", "data": {"tag": "aivi-dishwasher", "live_update": True, "template": {
    "template": "progress", "icon": "dishwasher", "header_left": {"value": "Rinsing"},
    "progress": {"style": "segmented", "value": 0.6, "display": "split", "segments": [
        {"value": 0.5, "fill_color": "cyan", "label": "Wash"},
        {"value": 0.25, "fill_color": "teal", "label": "Rinse"},
        {"value": 0.25, "fill_color": "orange", "track_color": "orange", "track_fill": "hatched", "label": "Dry"}]}}}}


def test_page_is_self_contained(gateway):
    gw = gateway()
    external = re.compile(r"""(src|href)\s*=\s*["']?(https?:)?//|url\(\s*["']?(https?:)?//|@import|(fetch|WebSocket)\(\s*["']https?:""")
    for path in ("/", "/preview", "/wall"):
        status, html = gw.request("GET", path)
        assert status == 200 and html.startswith("<!doctype html>"), (status, str(html)[:200])
        # Offline: nothing is loaded from anywhere but lanpushd itself, and everything the page names is there.
        assert not external.search(html)
        for ref in re.findall(r'(?:src|href)="(/preview/[^"]+)"', html):
            status, body = gw.request("GET", ref)
            assert status == 200 and body, ref
            assert not external.search(body), ref
    # Served from the binary with validators: a browser that has the bytes gets a 304.
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=10)
    conn.request("GET", "/preview/preview.js")
    r = conn.getresponse()
    body, etag = r.read(), r.getheader("ETag")
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/javascript") and etag and len(body) > 10000
    conn.request("GET", "/preview/preview.js", headers={"If-None-Match": etag})
    r = conn.getresponse()
    assert r.status == 304 and r.read() == b""
    # The icon set: gzip-encoded JSON, every MDI icon (not Debian's 1.6.50 font, which has no washing-machine).
    conn.request("GET", "/preview/mdi.json", headers={"Accept-Encoding": "gzip"})
    r = conn.getresponse()
    assert r.status == 200 and r.getheader("Content-Encoding") == "gzip"
    icons = json.loads(gzip.decompress(r.read()))
    assert icons["version"] == "7.4.47" and icons["count"] == len(icons["icons"]) > 7000
    for slug in ("washing-machine", "dishwasher", "home-assistant", "ev-station"):
        assert icons["icons"][slug].startswith("M"), slug
    conn.request("GET", "/preview/licenses.txt")
    r = conn.getresponse()
    notices = r.read().decode()
    assert r.status == 200 and "qrcode-generator" in notices and "Kazuhiko Arase" in notices and "Pictogrammers" in notices
    conn.close()


def test_cards_follow_display_rules_and_lifecycle(gateway, browser):
    gw = gateway()
    browser.open(f"http://127.0.0.1:{gw.port}/?token={gw.admin}")
    browser.wait("document.body.dataset.connState === 'open'", what="connected")
    browser.wait("document.querySelectorAll('section.device').length === 2 && !!document.body.dataset.mdi",
                 what="both devices and the icon map")
    assert "token=" not in browser.js("location.href"), "the token stays out of the address bar"
    # Not a speed figure (a debug build on a busy CI machine): a page that waited on a resource it cannot get, or on
    # a timeout, would take seconds longer than this.
    loaded = browser.js("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
    assert loaded < 5000, f"the page took {loaded} ms to load"

    # An observer never makes a device count as connected.
    status, devices = gw.get("/v1/devices")
    assert status == 200 and all(not d["connected"] and d["sessions"] == 0 for d in devices["devices"])
    browser.wait("document.querySelector('[data-region=device-status][data-device-id=phone]').dataset.path === 'none'",
                 what="the device's path shown")

    # "All Fields" through the page's own send panel (the real ingest path).
    browser.js("""(() => { const s = document.querySelector('[data-field=sample]'); s.value = 'all-fields';
        s.dispatchEvent(new Event('change')); const t = document.querySelector('[data-field=target]'); t.value = 'phone';
        document.querySelector('[data-action=send]').click(); })()""")
    browser.wait("document.querySelector('[data-field=send-result]').dataset.status === '202'", what="202 from /v1/push")
    browser.wait(f"!!document.querySelector('{card('debug-all')}')", what="the All Fields card")
    f = browser.js(f"{FACTS}('{card('debug-all')}')")
    assert f["title"] == "All Fields"
    assert f["message"] is None and "All content state fields active" not in f["text"], "chronometer replaces the message"
    assert re.fullmatch(r"[45]:\d\d", f["timer"]), f["timer"]
    assert f["trailing"] == "42%" and f["trailingSource"] == "progress" and "5 min" not in f["text"]
    assert f["iconColor"] == "rgb(3, 169, 244)" and f["iconAttr"] == "#03a9f4"
    has_glyph = browser.js("!!(window.lanpushPreview.model.mdi && window.lanpushPreview.model.mdi.icons['home-assistant'])")
    assert has_glyph and f["iconGlyph"] == "svg", "MDI 7.4.47 has home-assistant: a real icon, not initials"
    assert f["fillColor"] == "rgb(3, 169, 244)", "progress bar falls back to the icon color"
    assert float(f["fillShare"].rstrip("%")) == 42
    assert f["background"] == "rgb(0, 0, 0)" and f["textColor"] == "rgb(255, 255, 255)"
    compact = browser.js(f"document.querySelector('{pres('debug-all')} [data-region=island-compact] [data-field=compact-trailing]').textContent")
    assert compact == "5 min", "the compact Dynamic Island always shows critical_text"
    for region in ("island-minimal", "island-expanded"):
        assert browser.js(f"!!document.querySelector('{pres('debug-all')} [data-region={region}]')")
    first = f["timer"]
    browser.wait(f"document.querySelector('{card('debug-all')} [data-field=timer]').textContent !== '{first}'",
                 timeout=3, what="the timer ticking on the page")

    # A segmented Aivi progress payload (Aivi's layered example) and a split one with a hatched track.
    push(gw, AIVI_LAYERED)
    push(gw, AIVI_SPLIT)
    browser.wait(f"!!document.querySelector('{card('aivi-dishwasher')}')", what="the Aivi cards")
    seg = browser.js(f"""(() => {{
      const root = document.querySelector('{card('aivi-charging')}');
      const bar = root.querySelector('[data-field=segments]');
      return {{ template: root.dataset.template, display: bar.dataset.display, count: +bar.dataset.count,
        segments: [...bar.querySelectorAll('[data-segment]')].map(s => [s.dataset.share, s.dataset.trackFill, s.dataset.fillColor]),
        labels: [...root.querySelectorAll('[data-field=segment-label]')].map(l => l.textContent),
        clip: root.querySelector('.fills').style.clipPath,
        header: root.querySelector('[data-field=header-left]').textContent,
        headerColor: getComputedStyle(root.querySelector('[data-field=header-left]')).color }}; }})()""")
    assert seg["template"] == "progress" and seg["display"] == "layered" and seg["count"] == 2
    assert seg["segments"] == [["0.8", "solid", "#30d158"], ["0.2", "hatched", "#30d158"]]
    assert seg["labels"] == ["Standard", "Extended"]
    assert seg["clip"] == "inset(0px 10% 0px 0px)"
    assert seg["header"] == "90%" and seg["headerColor"] == "rgb(48, 209, 88)"
    split = browser.js(f"""[...document.querySelectorAll('{card('aivi-dishwasher')} [data-segment]')]
        .map(s => [s.dataset.filled, s.dataset.trackFill])""")
    assert split == [["1.000", "solid"], ["0.400", "solid"], ["0.000", "hatched"]]
    assert browser.js(f"document.querySelector('{pres('aivi-charging')} [data-field=compact-trailing]').textContent") == "90%"
    browser.screenshot("preview-page")
    browser.screenshot("preview-phone", "[data-region=phone][data-device-id=phone]", scale=2)

    # Relevance order, and the island shows the most relevant one.
    push(gw, {"title": "EV Charging", "message": "Charging", "data": {
        "tag": "ev-charging", "live_update": True, "critical_text": "45%", "progress": 45, "progress_max": 100,
        "notification_icon": "mdi:ev-station", "notification_icon_color": "#4CAF50", "relevance_score": 0.9}})
    browser.wait("document.querySelector('[data-region=lock-stack]').firstElementChild.dataset.tag === 'ev-charging'",
                 what="ev-charging first by relevance")
    assert browser.js("document.querySelector('[data-region=island] [data-region=island-live-compact]').dataset.tag") == "ev-charging"

    # An update changes the card: the message comes back (no chronometer), 80%, the new icon color.
    push(gw, ALL_FIELDS_UPDATE)
    browser.wait(f"({FACTS}('{card('debug-all')}') || {{}}).trailing === '80%'", what="the update")
    f = browser.js(f"{FACTS}('{card('debug-all')}')")
    assert f["message"] == "Almost done" and f["timer"] is None
    assert f["iconColor"] == "rgb(255, 152, 0)" and f["fillColor"] == "rgb(255, 152, 0)" and float(f["fillShare"].rstrip("%")) == 80
    assert f["title"] == "All Fields" and f["phase"] == "active"

    # An end that names a later dismissal greys it out until then; a dismissal removes it. (A clear_notification
    # without one ends and dismisses at once, as on the phone.)
    push(gw, {"message": "clear_notification", "data": {"tag": "debug-all", "dismissal_date": int(time.time()) + 3600}})
    browser.wait(f"document.querySelector('{card('debug-all')}').dataset.phase === 'ended'", what="ended")
    browser.wait(f"getComputedStyle(document.querySelector('{card('debug-all')}')).opacity === '0.5'",
                 what="the greying transition")
    f = browser.js(f"{FACTS}('{card('debug-all')}')")
    assert "grayscale(1)" in f["filter"] and float(f["opacity"]) < 0.7 and f["badge"].startswith("Ended")
    browser.screenshot("preview-ended", card("debug-all"), scale=2)
    status, _ = gw.request("DELETE", "/v1/activities/aivi-charging?dismissal=immediate&device=phone",
                           headers=gw.admin_headers())
    assert status in (200, 202), status
    browser.wait(f"!document.querySelector('{card('aivi-charging')}')", timeout=5, what="dismissed removed")

    # Stale: past its stale date the gateway says so, and the card shows it.
    push(gw, {"title": "Dryer", "message": "Drying", "data": {"tag": "dryer", "live_update": True,
                                                               "stale_date": int(time.time()) + 1}})
    browser.wait(f"(document.querySelector('{card('dryer')}') || {{dataset: {{}}}}).dataset.phase === 'stale'",
                 timeout=6, what="stale")

    log = browser.js("[...document.querySelectorAll('[data-region=event-log][data-device-id=phone] [data-log-entry]')]"
                     ".map(e => e.dataset.type)")
    assert {"snapshot", "start", "update", "end"} <= set(log) and len(log) <= 30
    assert browser.exceptions == []


def test_cards_draw_the_content_state_as_the_ios_app_does(gateway, browser):
    """The iOS companion app's rules (home-assistant/iOS HALiveActivityAttributes.swift, HALockScreenView.swift,
    HAActivityTimerProgressBar.swift, LiveActivityRegistry.swift): `decreasing` drains the bar while the percentage
    keeps counting up, a tap opens the `url` (an HA path in the companion app), a countdown without progress has a
    bar of its own and counts up once past its end, and the app marks an activity stale 2 s after its timer's end."""
    gw = gateway()
    browser.open(f"http://127.0.0.1:{gw.port}/?token={gw.admin}")
    browser.wait("document.body.dataset.connState === 'open'", what="connected")
    push(gw, {"title": "Dryer", "message": "Drying", "data": {
        "tag": "dryer", "live_update": True, "progress": 30, "progress_max": 100,
        "progress_bar_direction": "decreasing", "url": "/lovelace/laundry"}})
    browser.wait(f"!!document.querySelector('{card('dryer')}')", what="the dryer card")
    bar = browser.js(f"""(b => ({{value: b.dataset.value, direction: b.dataset.direction,
        width: b.querySelector('[data-field=progress-fill]').style.width}}))
        (document.querySelector('{card('dryer')} [data-field=progress-bar]'))""")
    assert bar == {"value": "0.7000", "direction": "decreasing", "width": "70%"}, bar
    f = browser.js(f"{FACTS}('{card('dryer')}')")
    assert f["trailing"] == "30%", "the percentage is the progress, whichever way the bar runs"
    tap = browser.js(f"(c => ({{tap: c.dataset.tap, url: c.dataset.url, href: c.dataset.tapHref}}))"
                     f"(document.querySelector('{card('dryer')} [data-field=card]'))")
    assert tap == {"tap": "path", "url": "/lovelace/laundry", "href": "homeassistant://navigate/lovelace/laundry"}, tap
    push(gw, {"title": "Dryer", "message": "Drying", "data": {
        "tag": "dryer", "live_update": True, "progress": 40, "progress_max": 100, "url": "https://example.com/dryer"}})
    browser.wait(f"document.querySelector('{card('dryer')} [data-field=card]').dataset.tap === 'url'", what="a web URL")
    assert browser.js(f"document.querySelector('{card('dryer')} [data-field=card]').dataset.tapHref") == "https://example.com/dryer"
    assert browser.js(f"document.querySelector('{card('dryer')} [data-field=progress-bar]').dataset.direction") is None

    # A title an update carries is the header (the content state's `title`).
    push(gw, {"title": "Dryer (eco)", "message": "Drying", "data": {"tag": "dryer", "live_update": True}})
    browser.wait(f"document.querySelector('{card('dryer')} [data-field=title]').textContent === 'Dryer (eco)'",
                 what="the new title")

    # A 3 s countdown with no progress: its own draining bar, then a count-up, then stale by the app's rule.
    push(gw, {"title": "Egg timer", "message": "Boiling", "data": {
        "tag": "eggs", "live_update": True, "chronometer": True, "when": 3, "when_relative": True}})
    browser.wait(f"!!document.querySelector('{card('eggs')} [data-field=timer-bar]')", what="the timer's bar")
    tb = browser.js(f"(b => ({{drains: b.dataset.drains, to: +b.dataset.to, value: +b.dataset.value}}))"
                    f"(document.querySelector('{card('eggs')} [data-field=timer-bar]'))")
    assert tb["drains"] == "true" and abs(tb["to"] / 1000 - time.time() - 3) < 2 and 0 < tb["value"] <= 1, tb
    assert browser.js(f"document.querySelector('{card('eggs')} [data-field=timer]').dataset.kind") == "countdown"
    browser.wait(f"document.querySelector('{card('eggs')} [data-field=timer]').dataset.counting === 'up'",
                 timeout=6, what="counting up once past its end")
    browser.wait(f"document.querySelector('{card('eggs')}').dataset.stale === 'app'", timeout=6,
                 what="stale 2 s after the end, by the app's rule")
    badge = browser.js(f"(b => b && {{source: b.dataset.source, text: b.textContent}})"
                       f"(document.querySelector('{card('eggs')} [data-field=phase-badge]'))")
    assert badge == {"source": "app", "text": "Stale · waiting for an update"}, badge
    assert browser.js(f"document.querySelector('{card('eggs')}').dataset.phase") == "active", "lanpush itself did not say stale"
    # An update makes it fresh again.
    push(gw, {"title": "Egg timer", "message": "Done", "data": {"tag": "eggs", "live_update": True}})
    browser.wait(f"!document.querySelector('{card('eggs')}').dataset.stale", what="fresh after an update")

    # A negative relative `when`: a count-up from now that stops |when| seconds on (`chronometer_start`), its bar filling.
    push(gw, {"title": "Workout", "message": "Plank", "data": {
        "tag": "plank", "live_update": True, "chronometer": True, "when": -60, "when_relative": True}})
    browser.wait(f"!!document.querySelector('{card('plank')} [data-field=timer]')", what="the plank timer")
    up = browser.js(f"""(c => ({{kind: c.querySelector('[data-field=timer]').dataset.kind,
        counting: c.querySelector('[data-field=timer]').dataset.counting,
        drains: c.querySelector('[data-field=timer-bar]').dataset.drains}}))(document.querySelector('{card('plank')}'))""")
    assert up == {"kind": "bounded", "counting": "up", "drains": "false"}, up
    browser.screenshot("preview-ios-rules")
    assert browser.exceptions == []


def test_burst_renders_latest_state(gateway, browser):
    gw = gateway()
    browser.open(f"http://127.0.0.1:{gw.port}/?token={gw.viewer}")  # the read-only viewer token works too
    browser.wait("document.body.dataset.connState === 'open'", what="connected")
    n = 400

    def post(i, conn):
        body = {"title": "Burst", "message": f"step {i}", "targets": ["tablet"],
                "data": {"tag": "burst", "live_update": True, "progress": i, "progress_max": n}}
        status, _ = gw.request("POST", "/v1/push", body, headers=gw.admin_headers(), conn=conn)
        assert status == 202

    def worker(k):
        conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=10)
        for i in range(1 + k, n, 4):
            post(i, conn)
        conn.close()

    started = time.time()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    post(n, None)  # the last word
    rate = n / (time.time() - started)
    browser.wait(f"({FACTS}('{card('burst', 'tablet')}') || {{}}).message === 'step {n}'", timeout=5,
                 what="the last update rendered")
    f = browser.js(f"{FACTS}('{card('burst', 'tablet')}')")
    assert f["trailing"] == "100%" and float(f["fillShare"].rstrip("%")) == 100
    renders = browser.js("window.lanpushPreview.model.renders")
    # Offered faster than 100 updates/s; the page renders per animation frame, not per update.
    assert rate > 100 and renders < n, (rate, renders)
    assert browser.exceptions == []


def test_wrong_token_shows_error(gateway, browser):
    gw = gateway()
    browser.open(f"http://127.0.0.1:{gw.port}/preview?token=not-a-token")
    browser.wait("document.body.dataset.connState === 'auth_error'", what="auth error state")
    err = browser.js("""(() => { const b = document.querySelector('[data-region=error]');
        return {hidden: b.hidden, kind: b.dataset.errorKind, code: b.dataset.closeCode, text: b.textContent,
                needed: document.querySelector('[data-region=token-form]').dataset.needed}; })()""")
    assert not err["hidden"] and err["kind"] == "auth" and err["code"] == "4001" and "rejected" in err["text"]
    assert err["needed"] == "true"
    browser.screenshot("preview-auth-error")
    time.sleep(1.0)
    assert browser.js("document.body.dataset.connState") == "auth_error", "no retry loop with a rejected token"
    # Typing the right token connects.
    browser.js(f"""(() => {{ document.querySelector('[data-field=token]').value = {json.dumps(gw.admin)};
        document.querySelector('[data-region=token-form]').requestSubmit(); }})()""")
    browser.wait("document.body.dataset.connState === 'open'", what="connected with the typed token")
    assert browser.exceptions == []


def test_gateway_restart_reconnects(gateway, browser):
    gw = gateway()
    browser.open(f"http://127.0.0.1:{gw.port}/?token={gw.admin}")
    browser.wait("document.body.dataset.connState === 'open'", what="connected")
    push(gw, {"title": "Washing Machine", "message": "Rinsing · 1 of 2", "data": {
        "tag": "washer_cycle", "live_update": True, "progress": 900, "progress_max": 3600, "chronometer": True,
        "when": 2700, "when_relative": True, "notification_icon": "mdi:washing-machine",
        "notification_icon_color": "#2196F3", "color": "#2196F3"}})
    browser.wait(f"!!document.querySelector('{card('washer_cycle')}')", what="washer card")
    assert_real_icon(browser, card("washer_cycle"), "washing-machine")
    snapshots = browser.js("document.querySelectorAll('[data-log-entry][data-type=snapshot]').length")

    gw.stop()
    browser.wait("document.body.dataset.connState === 'disconnected'", what="disconnected state")
    banner = browser.js("(b => ({hidden: b.hidden, kind: b.dataset.errorKind}))(document.querySelector('[data-region=error]'))")
    assert banner == {"hidden": False, "kind": "disconnected"}
    assert browser.js("document.querySelector('[data-region=error]').dataset.closeCode") == "1001", "shutdown"
    browser.screenshot("preview-disconnected")

    gw.start()  # same config, same port
    browser.wait("document.body.dataset.connState === 'open'", timeout=15, what="reconnected")
    browser.wait(f"document.querySelectorAll('[data-log-entry][data-type=snapshot]').length > {snapshots}",
                 what="a fresh snapshot after reconnecting")
    assert browser.js("document.querySelector('[data-region=error]').hidden")
    push(gw, {"title": "EV Charging", "message": "Charging", "data": {"tag": "ev-charging", "live_update": True,
                                                                       "progress": 45, "progress_max": 100}})
    browser.wait(f"!!document.querySelector('{card('ev-charging')}')", what="live again after the restart")
    assert browser.exceptions == []


def test_newer_end_frames(gateway, browser):
    """`end` with "phase":"dismissed" removes the card at once; an `end` of an ended activity restarts the dismissal
    countdown; `stale_date` / `relevance_score` carried by an `end` apply to the ended card."""
    gw = gateway()
    browser.open(f"http://127.0.0.1:{gw.port}/?token={gw.admin}")
    browser.wait("document.body.dataset.connState === 'open'", what="connected")
    for tag, relevance in (("washer_cycle", 0.2), ("dryer", 0.5)):
        push(gw, {"title": tag, "message": "Running", "data": {"tag": tag, "live_update": True, "relevance_score": relevance}})
    browser.wait(f"!!document.querySelector('{card('washer_cycle')}') && !!document.querySelector('{card('dryer')}')", what="two cards")

    # clear_notification: ended and dismissed in one frame; the card goes without an ended phase in between.
    push(gw, {"message": "clear_notification", "data": {"tag": "dryer"}})
    browser.wait(f"!document.querySelector('{card('dryer')}')", timeout=3, what="the dismissed card gone")
    log = browser.js("[...document.querySelectorAll('[data-region=event-log][data-device-id=phone] [data-log-entry][data-tag=dryer]')]"
                     ".map(e => e.dataset.type + ' ' + e.textContent)")
    end = next(e for e in log if e.startswith("end"))
    assert "dismissed at once" in end, log

    # An end with a later dismissal (and a relevance of its own), then a second end moving the dismissal: the
    # countdown on the card restarts from the new date.
    later = int(time.time()) + 3600
    push(gw, {"message": "clear_notification", "data": {"tag": "washer_cycle", "dismissal_date": later}})
    browser.wait(f"document.querySelector('{card('washer_cycle')}').dataset.phase === 'ended'", what="ended")
    first = int(browser.js(f"document.querySelector('{card('washer_cycle')} [data-field=dismissal]').dataset.t"))
    assert abs(first / 1000 - later) <= 1
    status, _ = gw.request("DELETE", "/v1/activities/washer_cycle?dismissal=120&device=phone", headers=gw.admin_headers())
    assert status in (200, 202)
    browser.wait(f"+document.querySelector('{card('washer_cycle')} [data-field=dismissal]').dataset.t < {first - 1000000}",
                 what="the new dismissal countdown")
    second = int(browser.js(f"document.querySelector('{card('washer_cycle')} [data-field=dismissal]').dataset.t"))
    assert abs(second / 1000 - (time.time() + 120)) < 10
    ended = browser.js(f"(e => [e.dataset.phase, e.dataset.relevance])(document.querySelector('{card('washer_cycle')}'))")
    assert ended == ["ended", "0.2"], ended
    assert browser.exceptions == []
