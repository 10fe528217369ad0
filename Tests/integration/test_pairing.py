"""Pairing a device with no YAML: `lanpush pair` on the gateway's host draws a QR code; a client in another network
namespace (the phone across the Wi-Fi) reads it, redeems the code over the veth and connects as the device.

The QR code is read back with zbar (pyzbar), the independent witness: the terminal drawing is turned into pixels
exactly as a phone camera would see it (light modules as ink, a white margin)."""
import json
import os
import subprocess
import time
import urllib.parse

import pytest
from PIL import Image
from pyzbar import pyzbar

from gateway import BINARY, ROOT, free_port
from netns import NetnsUnavailable, TestBed, netns_permitted

CLI = ROOT / ".build" / "debug" / "lanpush"
ADMIN = "pairing-admin-token-0123456789abcdef"

CLIENT = r'''
import json, sys, urllib.parse, urllib.request
import websockets.sync.client as wsclient
args = json.loads(sys.argv[1])
url = urllib.parse.urlparse(args["url"])
code = args.get("code") or urllib.parse.parse_qs(url.query)["code"][0]
out = {}
req = urllib.request.Request(f"http://{url.netloc}/v1/pair", data=json.dumps({"code": code}).encode(),
                             headers={"Content-Type": "application/json"}, method="POST")
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        out["status"], out["body"] = r.status, json.loads(r.read())
except urllib.error.HTTPError as e:
    out["status"], out["body"], out["retry_after"] = e.code, json.loads(e.read()), e.headers.get("Retry-After")
if out["status"] == 200 and args.get("connect"):
    ws = wsclient.connect(f"ws://{url.netloc}/v1/stream", open_timeout=10)
    ws.recv(10)
    ws.send(json.dumps({"type": "auth", "token": out["body"]["token"]}))
    out["auth"] = json.loads(ws.recv(10))
    ws.close()
print(json.dumps(out), flush=True)
'''


@pytest.fixture(scope="module")
def bed():
    ok, why = netns_permitted()
    if not ok:
        pytest.fail(why)
    try:
        b = TestBed().open()
    except NetnsUnavailable as e:
        pytest.fail(str(e))
    yield b
    b.close()


@pytest.fixture(scope="module")
def gateway(bed):
    port = free_port()
    config = bed.tmp / "lanpushd.yaml"
    config.write_text(f'listen: "{bed.addr_a}:{port}"\nadmin_token: {ADMIN}\nmdns: {{enabled: false}}\n'
                      "limits: {auth_failures: 6, auth_window: 30}\n")
    proc = bed.spawn(bed.ns_a, "lanpushd", [str(BINARY), "--config", str(config), "--state-dir", str(bed.tmp / "state")])
    assert proc.wait_for("lanpushd listening", 15), proc.tail()
    return f"http://{bed.addr_a}:{port}"


def pair(bed, gateway, device):
    """`lanpush pair` run on the gateway's host (namespace A): its QR lines, URL and short code."""
    r = subprocess.run(["ip", "netns", "exec", bed.ns_a, str(CLI), "pair", device, "--gateway", gateway, "--token", ADMIN],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.rstrip("\n").split("\n")
    url = next(line for line in lines if line.startswith("lanpush://"))
    code = next(line for line in lines if line.startswith("code: "))[6:]
    qr = lines[:lines.index(url)]
    return qr, url, code


def read_qr(lines):
    """The terminal drawing as a photo: '█' both halves light, '▀' top light, '▄' bottom light, ' ' both dark."""
    scale, margin = 6, 24
    rows = []
    for line in lines:
        top = [c in "█▀" for c in line]
        bottom = [c in "█▄" for c in line]
        rows += [top, bottom]
    width = max(len(r) for r in rows)
    img = Image.new("L", (width * scale + 2 * margin, len(rows) * scale + 2 * margin), 255)
    for y, row in enumerate(rows):
        for x, light in enumerate(row):
            if not light:
                for dy in range(scale):
                    for dx in range(scale):
                        img.putpixel((margin + x * scale + dx, margin + y * scale + dy), 0)
    found = pyzbar.decode(img)
    assert found, "zbar found no QR code in the drawing"
    return found[0].data.decode()


def redeem(bed, url, code=None, connect=False):
    script = bed.tmp / "pair_client.py"
    script.write_text(CLIENT)
    proc = bed.spawn(bed.ns_b, f"pair-client-{time.monotonic_ns()}", [bed.python, str(script), json.dumps(
        {"url": url, "code": code, "connect": connect})])
    line = proc.wait_for(r"^\{", 30)
    proc.stop()
    assert line, proc.tail()
    return json.loads(line)


def test_a_client_in_another_namespace_pairs_from_the_qr_code(bed, gateway):
    qr, url, code = pair(bed, gateway, "kitchen-tablet")
    assert read_qr(qr) == url
    parsed = urllib.parse.urlparse(url)
    assert parsed.scheme == "lanpush" and parsed.netloc == gateway.split("//")[1] and parsed.path == "/pair"
    assert len(urllib.parse.parse_qs(parsed.query)["code"][0]) >= 13  # ≥ 64 bits of Crockford base32
    assert len(code.replace("-", "")) >= 8
    first = redeem(bed, url, connect=True)
    assert first["status"] == 200 and first["body"]["device_id"] == "kitchen-tablet", first
    assert first["auth"]["type"] == "auth_ok" and first["auth"]["device_id"] == "kitchen-tablet"
    # A code works once.
    again = redeem(bed, url)
    assert again["status"] == 403 and again["body"]["field"] == "code"


def test_the_short_code_pairs_too_and_a_new_pairing_revokes_the_old_token(bed, gateway):
    _, url, code = pair(bed, gateway, "hall-display")
    first = redeem(bed, url, code=code.lower(), connect=True)
    assert first["status"] == 200 and first["auth"]["type"] == "auth_ok"
    _, url2, _ = pair(bed, gateway, "hall-display")
    second = redeem(bed, url2, connect=True)
    assert second["status"] == 200 and second["body"]["token"] != first["body"]["token"]
    stale = redeem(bed, url2)  # used
    assert stale["status"] == 403


def test_wrong_codes_are_throttled(bed, gateway):
    """auth_failures is 6 per 30 s here; the used codes of the tests above already counted against this address."""
    host = gateway.split("//")[1]
    answers = []
    for i in range(7):
        answers.append(redeem(bed, f"lanpush://{host}/pair?code=WRONGWRONG{i:06d}"))
        if answers[-1]["status"] == 429:
            break
    assert answers[-1]["status"] == 429 and int(answers[-1]["retry_after"]) >= 1, answers
    assert all(a["status"] == 403 for a in answers[:-1]) and 1 <= len(answers) - 1 <= 6
    # The right code is refused too while the address waits: guessing cannot go on past the limit.
    _, url, _ = pair(bed, gateway, "guessed")
    assert redeem(bed, url)["status"] == 429
