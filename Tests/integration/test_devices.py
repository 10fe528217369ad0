"""Devices without editing YAML: added, renamed, re-tokened and removed at run time through the API and the CLI,
surviving restarts; failed authentications throttled per address. The real daemon, independent clients."""
import json
import os
import subprocess
import time

import pytest
import websockets.sync.client as wsclient
from websockets.exceptions import ConnectionClosed

from gateway import ROOT, Gateway

CLI = ROOT / ".build" / "debug" / "lanpush"


def lanpush(gw, *args):
    env = dict(os.environ, LANPUSH_GATEWAY=f"http://127.0.0.1:{gw.port}", LANPUSH_TOKEN=gw.admin)
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, env=env, timeout=30)


def session(gw, token, source="127.0.0.1"):
    """A device session with `token`: (websocket, first answer to auth)."""
    ws = wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream", open_timeout=5,
                          **({"source_address": (source, 0)} if source != "127.0.0.1" else {}))
    assert json.loads(ws.recv(5))["type"] == "auth_required"
    ws.send(json.dumps({"type": "auth", "token": token}))
    return ws, json.loads(ws.recv(5))


def closed_with(ws, timeout=5):
    """The close code the server sent (reading whatever frames come first)."""
    deadline = time.time() + timeout
    try:
        while time.time() < deadline:
            ws.recv(timeout=max(0.1, deadline - time.time()))
    except ConnectionClosed as e:
        return e.rcvd.code if e.rcvd else None
    except TimeoutError:
        return None
    return None


def test_a_device_added_at_run_time_connects_at_once_and_survives_a_restart(gateway):
    gw = gateway(devices=("phone",))
    status, added = gw.request("POST", "/v1/devices", {"id": "kitchen", "name": "Kitchen tablet"}, headers=gw.admin_headers())
    assert status == 201 and added["id"] == "kitchen" and len(added["token"]) >= 32
    ws, ok = session(gw, added["token"])
    assert ok["type"] == "auth_ok" and ok["device_id"] == "kitchen"
    ws.send(json.dumps({"type": "subscribe"}))
    assert gw.request("POST", "/v1/push", {"targets": ["kitchen"], "title": "Washer", "message": "Washing",
                                           "data": {"tag": "washer", "live_update": True}}, headers=gw.admin_headers())[0] == 202
    frames = [json.loads(ws.recv(5)) for _ in range(3)]
    assert [f["type"] for f in frames] == ["snapshot", "synced", "start"]
    ws.close()
    # The token is stored only as its hash: nowhere in the state folder in clear.
    for f in gw.state.rglob("*"):
        if f.is_file():
            assert added["token"].encode() not in f.read_bytes(), f
    gw.stop()
    gw.start()
    ws, ok = session(gw, added["token"])
    assert ok["type"] == "auth_ok"
    ws.close()
    devices = {d["id"]: d for d in gw.get("/v1/devices")[1]["devices"]}
    assert devices["kitchen"]["source"] == "api" and devices["kitchen"]["name"] == "Kitchen tablet"
    assert devices["kitchen"]["activities"] == 1 and devices["phone"]["source"] == "config"


def test_a_new_token_closes_the_old_sessions_and_the_old_token_is_refused(gateway):
    gw = gateway()
    _, added = gw.request("POST", "/v1/devices", {"id": "hall"}, headers=gw.admin_headers())
    old, _ = session(gw, added["token"])
    status, rotated = gw.request("POST", "/v1/devices/hall/token", headers=gw.admin_headers())
    assert status == 200 and rotated["token"] != added["token"]
    assert closed_with(old) == 4001
    _, answer = session(gw, added["token"])
    assert answer["type"] == "auth_invalid"
    ws, answer = session(gw, rotated["token"])
    assert answer["type"] == "auth_ok"
    ws.close()
    gw.stop()
    gw.start()
    assert session(gw, added["token"])[1]["type"] == "auth_invalid"
    assert session(gw, rotated["token"])[1]["type"] == "auth_ok"


def test_a_removed_device_is_closed_and_gone_for_good(gateway):
    gw = gateway()
    _, added = gw.request("POST", "/v1/devices", {"id": "garage"}, headers=gw.admin_headers())
    gw.request("POST", "/v1/push", {"targets": ["garage"], "message": "Door open"}, headers=gw.admin_headers())
    ws, _ = session(gw, added["token"])
    status, body = gw.request("DELETE", "/v1/devices/garage", headers=gw.admin_headers())
    assert status == 200 and body == {"removed": "garage"}
    assert closed_with(ws) == 4001
    assert session(gw, added["token"])[1]["type"] == "auth_invalid"
    assert gw.request("GET", "/v1/devices/garage", headers=gw.admin_headers())[0] == 404
    gw.stop()
    gw.start()
    assert "garage" not in {d["id"] for d in gw.get("/v1/devices")[1]["devices"]}
    # The id is free again, with nothing of the old device in it.
    _, again = gw.request("POST", "/v1/devices", {"id": "garage"}, headers=gw.admin_headers())
    assert gw.get("/v1/devices/garage")[1]["queued_notifications"] == 0
    assert session(gw, again["token"])[1]["type"] == "auth_ok"


def test_devices_of_the_config_file_are_read_only(gateway):
    gw = gateway(devices=("phone", "tablet"))
    for method, path, body in (("PATCH", "/v1/devices/tablet", {"name": "x"}), ("POST", "/v1/devices/tablet/token", None),
                               ("DELETE", "/v1/devices/tablet", None)):
        status, answer = gw.request(method, path, body, headers=gw.admin_headers())
        assert status == 409 and answer["field"] == "devices[1]" and answer["rule"] == "read_only", (method, answer)
    status, answer = gw.request("POST", "/v1/devices", {"id": "phone"}, headers=gw.admin_headers())
    assert status == 409 and answer["field"] == "devices[0]"
    status, answer = gw.request("POST", "/v1/devices", {"id": "bad id!"}, headers=gw.admin_headers())
    assert status == 400 and answer["field"] == "id"
    assert gw.request("POST", "/v1/devices", {"id": "x"}, headers={"Authorization": f"Bearer {gw.viewer}"})[0] == 401


def test_the_cli_manages_devices(gateway):
    gw = gateway(devices=("phone",))
    r = lanpush(gw, "device", "add", "wall", "--name", "Wall display", "--notifications", "lan")
    assert r.returncode == 0, r.stderr
    token = r.stdout.strip().splitlines()[0]
    assert session(gw, token)[1]["type"] == "auth_ok"
    assert lanpush(gw, "device", "rename", "wall", "Hall display").returncode == 0
    listing = lanpush(gw, "device", "list").stdout
    assert "Hall display" in listing and "api" in listing and "config" in listing
    r = lanpush(gw, "device", "rotate", "wall")
    new = r.stdout.strip().splitlines()[0]
    assert session(gw, token)[1]["type"] == "auth_invalid" and session(gw, new)[1]["type"] == "auth_ok"
    r = lanpush(gw, "device", "rename", "phone", "x")
    assert r.returncode != 0 and "config file" in r.stderr
    assert lanpush(gw, "device", "remove", "wall").returncode == 0
    assert "wall" not in lanpush(gw, "device", "list").stdout


def test_failed_authentications_are_throttled_per_address(gateway):
    gw = gateway(limits={"auth_failures": 5, "auth_window": 4})
    bad = {"Authorization": "Bearer not-a-token"}
    for _ in range(5):
        assert gw.request("GET", "/v1/devices", headers=bad)[0] == 401
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=5)
    c.request("GET", "/v1/devices", headers={"Authorization": f"Bearer {gw.admin}"})
    r = c.getresponse()
    body = json.loads(r.read())
    # Even a valid token from the throttled address waits; it is told how long.
    assert r.status == 429 and int(r.getheader("Retry-After")) >= 1 and body["rule"] == "throttled"
    ws, answer = session(gw, gw.tokens["phone"])
    assert answer["type"] == "error" and "try again in" in answer["message"]
    assert closed_with(ws) == 4029
    # Another address is not affected.
    ws, answer = session(gw, gw.tokens["phone"], source="127.0.0.2")
    assert answer["type"] == "auth_ok"
    ws.close()
    # Once the window has passed, the valid token passes again.
    time.sleep(4.5)
    assert gw.get("/v1/devices")[0] == 200
    metrics = gw.get("/metrics")[1]
    assert "lanpush_auth_throttled_total 1" in metrics
    assert "too many failed authentications" in gw.logtext()
