"""Headless Chromium driven over the DevTools protocol, for the tests of lanpushd's pages (the live preview, the
wall view): the browser is an independent lanpush.v1 client (its own WebSocket and JSON); the assertions read the
DOM's stable data-* attributes and computed styles. Screenshots land in test-artifacts/ (gitignored).
"""
import base64
import contextlib
import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
import websockets.sync.client as wsclient

from gateway import ROOT

ARTIFACTS = ROOT / "test-artifacts"


class Chromium:
    """Headless Chromium with one page, driven through the Chrome DevTools Protocol."""

    def __init__(self):
        exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
        if not exe:
            pytest.fail("chromium is not installed: run ./scripts/setup --test")
        self.profile = tempfile.mkdtemp(prefix="lanpush-chromium-")
        self.log = open(Path(self.profile) / "chromium.log", "wb")
        # As root Chromium runs only without its sandbox.
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-features=Translate,MediaRouter",
             "--mute-audio", "--remote-debugging-port=0", "--remote-allow-origins=*",
             f"--user-data-dir={self.profile}", "--window-size=1500,1100", "about:blank"],
            stdout=self.log, stderr=subprocess.STDOUT)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.time() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("chromium did not start: " + (Path(self.profile) / "chromium.log").read_text()[-2000:])
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(t for t in targets if t["type"] == "page")
        self.stack = contextlib.ExitStack()
        self.ws = self.stack.enter_context(wsclient.connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10))
        self.next_id = 0
        self.exceptions = []
        self.console = []
        self.responses = []  # (requestId, url, status) once Network is enabled (capture_responses)
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1500, "height": 1100, "deviceScaleFactor": 1, "mobile": False})

    def _event(self, msg):
        if msg.get("method") == "Network.responseReceived":
            r = msg["params"]["response"]
            self.responses.append((msg["params"]["requestId"], r["url"], r["status"]))
        elif msg.get("method") == "Runtime.exceptionThrown":
            d = msg["params"]["exceptionDetails"]
            self.exceptions.append(d.get("exception", {}).get("description") or d.get("text"))
        elif msg.get("method") == "Runtime.consoleAPICalled":
            args = msg["params"].get("args", [])
            self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in args))

    def call(self, method, params=None, timeout=15):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params or {}}))
        deadline = time.time() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.time())))
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def js(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"JS error in {expression[:80]!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait(self, expression, timeout=10, what=None):
        deadline = time.time() + timeout
        value = None
        while time.time() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.05)
        summary = self.js("JSON.stringify({conn: document.body.dataset.connState, "
                          "error: (document.querySelector('[data-region=error]')||{}).textContent})")
        raise AssertionError(f"timed out waiting for {what or expression}: last {value!r}; page {summary}; "
                             f"exceptions {self.exceptions}; console {self.console[-5:]}")

    def open(self, url, ready="window.lanpushPreview"):
        """Navigates and waits for the page's script (`ready`: the global it publishes) to have run."""
        self.exceptions.clear()
        self.call("Page.navigate", {"url": url})
        self.wait(f"document.readyState === 'complete' && !!{ready}", what="page load")

    def capture_responses(self):
        """From now on, remember every HTTP response the page receives (for response_json)."""
        self.call("Network.enable")
        self.responses.clear()

    def response_json(self, url_suffix, timeout=10):
        """The body of the last response whose URL ends with `url_suffix`, exactly as the page received it."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            hits = [r for r in self.responses if r[1].endswith(url_suffix)]
            if hits:
                try:
                    body = self.call("Network.getResponseBody", {"requestId": hits[-1][0]})
                    return hits[-1][2], json.loads(body["body"])
                except RuntimeError:
                    pass  # not finished loading yet
            self.js("0")  # pumps the DevTools events
            time.sleep(0.05)
        raise AssertionError(f"no response for {url_suffix}: {self.responses}")

    def screenshot(self, name, selector=None, scale=1):
        ARTIFACTS.mkdir(exist_ok=True)
        self.js("window.lanpushPreview && window.lanpushPreview.flush(), document.fonts.ready.then(() => true)")
        if selector:
            rect = self.js(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                           " return {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height}; })()")
        else:
            rect = self.js("({x: 0, y: 0, width: document.documentElement.scrollWidth,"
                           " height: document.documentElement.scrollHeight})")
        rect["scale"] = scale
        shot = self.call("Page.captureScreenshot", {"format": "png", "clip": rect, "captureBeyondViewport": True})
        path = ARTIFACTS / f"{name}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def close(self):
        try:
            self.stack.close()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    b = Chromium()
    yield b
    b.close()


def mdi_path(slug):
    """The icon's SVG path as PyPI's material-design-icons-pack has it: a witness independent of lanpushd."""
    import material_design_icons_pack
    svg = material_design_icons_pack.get_icon(slug).svg
    return re.search(r'<path d="([^"]+)"', svg).group(1)


def assert_real_icon(browser, selector, slug, field="icon"):
    """The card draws the real MDI icon: an SVG with the icon's own path, not the initials fallback.

    The page fetches the icon set after it connects, and a card drawn before the set arrived shows initials until
    the next render: give that render time to happen, then check what is on the page."""
    try:
        browser.wait(f"document.querySelector('{selector} [data-field={field}]')?.dataset.iconGlyph === 'svg'",
                     timeout=20, what=f"{slug} drawn as an SVG")
    except AssertionError:
        pass  # the assertions below say what is drawn instead
    icon = browser.js(f"""(el => el && {{glyph: el.dataset.iconGlyph, mdi: el.dataset.mdi, initials: !!el.querySelector('.fb, span > span'),
        path: (el.querySelector('svg path') || {{}}).getAttribute?.call(el.querySelector('svg path'), 'd'),
        box: el.querySelector('svg') && (r => [r.width, r.height])(el.querySelector('svg').getBoundingClientRect())}})
        (document.querySelector('{selector} [data-field={field}]'))""")
    assert icon and icon["glyph"] == "svg" and icon["mdi"] == slug and not icon["initials"], icon
    assert icon["path"] == mdi_path(slug)
    assert min(icon["box"]) > 10, icon  # drawn, not collapsed
    return icon
