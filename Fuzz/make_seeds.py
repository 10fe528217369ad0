#!/usr/bin/env python3
"""Writes the committed seed corpora (Fuzz/corpus/TARGET/) from the project's own test payloads: HA's real
notify payloads (Tests/integration/ha_payloads.py), the protocol vectors (Tests/Fixtures/protocol/), the shipped
config and the add-on's options. Run again when those change; libFuzzer grows its working corpus from these."""
import hashlib
import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "integration"))
import ha_payloads  # noqa: E402

OUT = os.path.join(ROOT, "Fuzz", "corpus")


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = os.path.join(OUT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


REGISTRATION = {"app_id": "io.robbie.HomeAssistant", "app_version": "2025.1", "os_version": "18.2", "webhook_id": "hook-1"}
payloads = [c.notify for c in ha_payloads.CASES] + [b for c in ha_payloads.CASES for b in c.before]
for p in payloads:
    relay = dict(p, push_token="tok-phone", registration_info=REGISTRATION)
    push = dict(p, targets=["phone"])
    for target in ("json", "payload"):
        put(target, compact(relay))
        put(target, compact(push))
    put("json", json.dumps(relay, indent=2, ensure_ascii=True))

VECTORS = os.path.join(ROOT, "Tests", "Fixtures", "protocol")
for path in sorted(os.path.join(d, n) for d, _, names in os.walk(VECTORS) for n in names if n.endswith(".json")):
    with open(path, "rb") as f:
        vector = f.read()
    put("json", vector)
    for step in json.loads(vector).get("steps", []):
        for value in step.values() if isinstance(step, dict) else []:
            if isinstance(value, dict):
                put("json", compact(value))

for text in ['{"a":1,"a":2}', '{"a":1,"\\u0061":2}', '[1e308,-0,1E-400,123456789012345678901234567890]',
             '"\\ud83d\\ude00 \\u00e9 e\\u0301"', "[" * 70 + "]" * 70, '{"data":[],"data":{}}',
             '{"type":"ack","seq":9007199254740992}', '{"seq": 7, "type": "ack"}', '{"type":"ack","seq":12.0}']:
    put("json", text)

# The config: the shipped YAML, and the add-on's options as the Supervisor writes /data/options.json.
with open(os.path.join(ROOT, "Config", "lanpush.yaml")) as f:
    put("config", f.read())
try:
    import yaml
    with open(os.path.join(ROOT, "Config", "addon", "config.yaml")) as f:
        options = yaml.safe_load(f).get("options", {})
    put("config", json.dumps(options))
    put("config", json.dumps(options, indent=2))
except ImportError:
    pass
put("config", "listen: 127.0.0.1:8765\ndevices:\n  - {id: kitchen, name: Kitchen, token: \"0123456789abcdef0123\"}\n"
              "session: {window: 8, ack_timeout: 2}\nlimits: {max_body: 65536, auth_failures: 5}\n")


# The session target reads a program: one byte picks the step (FuzzSession.step), the next ones its values.
def program(*steps):
    out = bytearray()
    for s in steps:
        out += bytes(s)
    return bytes(out)


CONNECT, RAW, FRAME, ACK, PUSH, DELETE, ADVANCE, CLOSE, RECONNECT, CHOKE, DRAIN, COMPLETE = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
put("session", program([CONNECT, 0], [PUSH, 0, 0, 0, 0, 10, 3], [ACK, 0], [PUSH, 0, 0, 0, 0, 20, 3], [RECONNECT, 0], [ACK, 1]))
put("session", program([CONNECT, 0], [CONNECT, 1], [PUSH, 2, 1, 2, 2, 0], [ADVANCE, 40, 2], [ACK, 0], [CLOSE, 1], [PUSH, 0, 3, 3, 1]))
put("session", program([0, 0], [FRAME, 0, 0, 0, 0], [FRAME, 0, 2, 1, 1, 0], [PUSH, 0, 0, 0, 0, 7, 1], [FRAME, 0, 3, 1]))
put("session", program([CONNECT, 0], [CHOKE, 0, 1], [PUSH, 0, 1, 0, 0, 1], [PUSH, 0, 1, 0, 0, 2], [DRAIN, 0], [ACK, 0], [COMPLETE]))
for frame in ['{"type":"auth","token":"device-token-phone-0123456789"}', '{"type":"subscribe","epoch":"x","seq":1e300}',
              '{"type":"ack","seq":-1}', '{"type":"register","push_token":"t","push_url":"http://relay.test/x"}',
              '{"type":"live_activity_token","tag":"washer","token":"a","expires_at":1800000000000}']:
    put("session", program([0, 0], [RAW, 0, len(frame)], frame.encode(), [RAW, 0, 24], b'{"type":"subscribe"}    '))

# The store target reads strings and JSON values as length-prefixed chunks.
put("store", bytes([5]) + b"phone" + bytes([6]) + b"washer" + bytes([3]) + b"e-1" + bytes([0, 9, 1, 4]) + b"tok1"
    + bytes([17]) + b'{"progress":0.25}' + bytes([2]) + b"{}")
put("store", bytes(range(256)))

# The router target: a pairing redeemed as typed, HA's relay body, /v1/push.
put("router", bytes([0, 0, 1, 1, 1]) + bytes([0, 0, 0, 0, 0]))
for p in payloads[:12]:
    relay = compact(dict(p, push_token="tok-phone", registration_info=REGISTRATION)).encode()
    put("router", bytes([0, 2, 0]) + relay)
    put("router", bytes([0, 3, 0]) + compact(dict(p, targets=["phone"])).encode())
put("router", bytes([0, 4, 0, 1, 0]) + b'{"name":"Kitchen","notifications":"lan"}')
put("router", bytes([0, 5, 7]) + b"washer" + bytes([2, 0, 0]))
print("seeds written to", OUT)
