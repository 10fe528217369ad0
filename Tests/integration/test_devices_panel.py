"""The live preview's Devices panel in headless Chromium (chromium.py): add, rename, new token, pair, remove.

A token the page shows must open a real device session; the pairing QR code in the page, decoded from a
screenshot by zbar (pyzbar), must be exactly the pairing URL the API answered the page with, and the second one,
for an iPhone's Camera, the Scripting app's run URL of the script with exactly that pairing URL in its `pair`.
"""
import re
from urllib.parse import parse_qs, unquote, urlsplit

from PIL import Image
from pyzbar.pyzbar import decode

from chromium import browser  # noqa: F401 (the browser fixture)

ROW = "[data-field=device-list] [data-device-row][data-device-id='{}']"


def devices(gw):
    status, answer = gw.get("/v1/devices")
    assert status == 200
    return {d["id"]: d for d in answer["devices"]}


def click(browser, selector):
    browser.js(f"document.querySelector({selector!r}).click()")


def session_works(gw, device, token):
    """A device session with `token`: authenticates and gets its snapshot (LanClient asserts auth_ok)."""
    gw.tokens[device] = token
    c = gw.client(device)
    frames = [c.recv_json() for _ in range(2)]
    assert [f["type"] for f in frames] == ["snapshot", "synced"], frames
    c.ws.close()


def test_devices_panel_adds_renames_pairs_and_removes(gateway, browser):
    gw = gateway()
    browser.open(f"http://127.0.0.1:{gw.port}/?token={gw.admin}")
    browser.wait("document.body.dataset.connState === 'open'", what="connected")
    browser.wait(f"!!document.querySelector(\"{ROW.format('tablet')}\")", what="the config devices listed")
    config = browser.js(f"""(r => ({{readOnly: r.dataset.readOnly, disabled: [...r.querySelectorAll('button')].every(b => b.disabled)}}))
        (document.querySelector("{ROW.format('phone')}"))""")
    assert config == {"readOnly": "true", "disabled": True}, "devices of the config file are read-only"

    # Add: the token shown once opens a real device session.
    browser.js("""(() => { const f = document.querySelector('[data-field=add-device]');
        f.querySelector('[data-field=new-device-id]').value = 'hall-tablet';
        f.querySelector('[data-field=new-device-name]').value = 'Hall tablet'; f.requestSubmit(); })()""")
    browser.wait("!document.querySelector('[data-field=device-secret]').hidden", what="the new token")
    token = browser.js("document.querySelector('[data-field=device-token]').textContent")
    assert re.fullmatch(r"\S{20,}", token), token
    added = devices(gw)["hall-tablet"]
    assert added["name"] == "Hall tablet" and added["source"] == "api"
    session_works(gw, "hall-tablet", token)
    browser.wait(f"(document.querySelector(\"{ROW.format('hall-tablet')}\") || {{dataset: {{}}}}).dataset.readOnly === 'false'",
                 what="the new device in the panel")
    browser.wait("!!document.querySelector('section.device[data-device-id=hall-tablet]')", what="its section in the preview")

    # Rename in place.
    click(browser, f"{ROW.format('hall-tablet')} [data-action=rename]")
    browser.js("""(() => { const i = document.querySelector('[data-field=rename-input]'); i.value = 'Hallway';
        i.dispatchEvent(new Event('input', {bubbles: true})); document.querySelector('[data-action=rename-save]').click(); })()""")
    browser.wait(f"(document.querySelector(\"{ROW.format('hall-tablet')} [data-field=row-name]\") || {{}}).textContent === 'Hallway'",
                 what="the new name")
    assert devices(gw)["hall-tablet"]["name"] == "Hallway"

    # Pair: the QR code decodes to exactly the URL the API returned; the short code is there to type.
    browser.capture_responses()
    click(browser, f"{ROW.format('hall-tablet')} [data-action=pair]")
    browser.wait("!document.querySelector('[data-region=pairing]').hidden", what="the pairing")
    status, pairing = browser.response_json("/v1/pairings")
    assert status == 201 and pairing["device"] == "hall-tablet"
    assert pairing["url"].startswith(f"lanpush://127.0.0.1:{gw.port}/pair?code=")
    shot = browser.screenshot("devices-pairing-qr", "[data-field=pairing-qr] img")
    found = decode(Image.open(shot))
    assert [s.data.decode() for s in found] == [pairing["url"]], found
    assert browser.js("document.querySelector('[data-field=pairing-short-code]').textContent") == pairing["short_code"]
    # The Camera's code: Scripting's run URL (`scripting://run/NAME?pair=…`), the pairing URL whole in `pair`, as
    # the app's URL handling reads a query (percent-decoded), for the script name typed in the panel.
    for name in ("lanpush", "lanpush home"):
        browser.js(f"""(i => {{ i.value = {name!r}; i.dispatchEvent(new Event('input', {{bubbles: true}})); }})
            (document.querySelector('[data-field=pairing-script-name]'))""")
        shot = browser.screenshot(f"devices-pairing-scripting-qr-{name.replace(' ', '-')}", "[data-field=pairing-scripting-qr] img")
        scanned = [s.data.decode() for s in decode(Image.open(shot))]
        assert len(scanned) == 1 and scanned[0] == browser.js(
            "document.querySelector('[data-region=pairing-scripting]').dataset.url"), scanned
        run = urlsplit(scanned[0])
        assert (run.scheme, run.netloc, unquote(run.path)) == ("scripting", "run", f"/{name}"), run
        assert parse_qs(run.query) == {"pair": [pairing["url"]]}, run.query
        assert re.fullmatch(r"pair=[A-Za-z0-9%._~!*'()-]+", run.query), "every reserved character of the pairing URL escaped"
    browser.screenshot("devices-panel", "[data-region=devices-panel]")
    # What a client does with the scanned URL: redeem the code for the device's token.
    code = re.search(r"[?&]code=([^&]+)", found[0].data.decode()).group(1)
    status, redeemed = gw.request("POST", "/v1/pair", {"code": code})
    assert status == 200 and redeemed["device_id"] == "hall-tablet"
    session_works(gw, "hall-tablet", redeemed["token"])

    # New token: the one shown works.
    click(browser, f"{ROW.format('hall-tablet')} [data-action=new-token]")
    browser.wait(f"document.querySelector('[data-field=device-token]').textContent !== {token!r} && "
                 "!document.querySelector('[data-field=device-secret]').hidden", what="another token")
    session_works(gw, "hall-tablet", browser.js("document.querySelector('[data-field=device-token]').textContent"))

    # Remove: two clicks (no modal dialog), then it is gone from the gateway and the page.
    click(browser, f"{ROW.format('hall-tablet')} [data-action=remove]")
    assert browser.js(f"document.querySelector(\"{ROW.format('hall-tablet')} [data-action=remove]\").textContent") == "Confirm remove"
    click(browser, f"{ROW.format('hall-tablet')} [data-action=remove]")
    browser.wait(f"!document.querySelector(\"{ROW.format('hall-tablet')}\")", what="removed from the panel")
    browser.wait("!document.querySelector('section.device[data-device-id=hall-tablet]')", what="its section gone")
    assert "hall-tablet" not in devices(gw)
    assert browser.exceptions == []
