"""The publisher stream (docs/PROTOCOL.md, "Publisher stream") against the real lanpushd over real sockets: an accept
means committed (it survives kill -9), and a publisher that does not read is paused by TCP, not dropped or buffered
without end. Python websockets is the independent witness of the frames.
"""
import json
import signal
import socket
import struct
import threading

import pytest
import websockets.exceptions
import websockets.sync.client as wsclient

# A publisher may stream on v1's subprotocol or on its own, which the gateway reads in 16 KiB pieces instead of ~500
# bytes: the same promises on both.
SUBPROTOCOLS = ["lanpush.v1", "lanpush.publisher"]


def publisher(gw, max_queue=None, subprotocol="lanpush.v1"):
    ws = wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream", subprotocols=[subprotocol], open_timeout=10,
                          max_queue=max_queue, max_size=None)
    assert ws.subprotocol == subprotocol
    assert json.loads(ws.recv(timeout=10))["type"] == "auth_required"
    ws.send(json.dumps({"type": "auth", "token": gw.admin, "role": "publisher"}))
    ok = json.loads(ws.recv(timeout=10))
    assert ok["type"] == "auth_ok" and ok["role"] == "publisher", ok
    return ws, ok["window"]


def update(i):
    return json.dumps({"type": "push", "targets": ["phone"], "title": "Washer", "message": f"step {i}",
                       "data": {"tag": "washer", "live_update": True, "progress": i, "progress_max": 10_000}})


def read_until_accepted(ws, through, timeout=30):
    frames = []
    while True:
        f = json.loads(ws.recv(timeout=timeout))
        frames.append(f)
        if f["type"] == "accepted" and f["through"] >= through:
            return frames


@pytest.mark.parametrize("subprotocol", SUBPROTOCOLS)
def test_accepted_items_survive_kill_9(gateway, subprotocol):
    gw = gateway()
    ws, window = publisher(gw, subprotocol=subprotocol)
    n = 3 * window
    # Written from a thread while this one reads: more than a window in flight, as a fast publisher does.
    sender = threading.Thread(target=lambda: [ws.send(update(i)) for i in range(n)], daemon=True)
    sender.start()
    frames = read_until_accepted(ws, n)
    sender.join(10)
    throughs = [f["through"] for f in frames if f["type"] == "accepted"]
    assert throughs == sorted(set(throughs)) and throughs[-1] == n, throughs[-20:]
    assert [f for f in frames if f["type"] != "accepted"] == []
    # Accepted = committed: a crash right after the last accept keeps every accepted item.
    gw.stop(signal.SIGKILL)
    gw.start()
    status, body = gw.get("/v1/activities/washer")
    assert status == 200
    assert body["activities"][0]["state"]["progress"] == n - 1 and body["activities"][0]["state"]["message"] == f"step {n - 1}"


class RawPublisher:
    """A publisher on a plain socket: writes (masked frames, key 0) and reads are independent, so one thread can write
    while another does not read — Python websockets' sync client cannot (a blocked send holds the lock its reader
    needs)."""

    def __init__(self, gw, subprotocol="lanpush.v1"):
        self.sock = socket.create_connection(("127.0.0.1", gw.port), timeout=30)
        self.sock.sendall(b"GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                          b"Sec-WebSocket-Protocol: " + subprotocol.encode() + b"\r\n\r\n")
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.sock.recv(4096)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head
        assert self.recv()["type"] == "auth_required"
        self.send({"type": "auth", "token": gw.admin, "role": "publisher"})
        ok = self.recv()
        assert ok["type"] == "auth_ok", ok
        self.window = ok["window"]

    @staticmethod
    def frame(text):
        data = text.encode()
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
                                if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n))
        return head + b"\0\0\0\0" + data

    def send(self, obj):
        self.sock.sendall(self.frame(json.dumps(obj)))

    def recv(self):
        while True:
            n, at = (self.buf[1] & 0x7F, 2) if len(self.buf) >= 2 else (None, 0)
            if n == 126:
                n, at = (struct.unpack(">H", self.buf[2:4])[0], 4) if len(self.buf) >= 4 else (None, 0)
            elif n == 127:
                n, at = (struct.unpack(">Q", self.buf[2:10])[0], 10) if len(self.buf) >= 10 else (None, 0)
            if n is not None:
                if len(self.buf) >= at + n:
                    opcode, payload, self.buf = self.buf[0] & 0x0F, self.buf[at:at + n], self.buf[at + n:]
                    if opcode == 1:
                        return json.loads(payload)
                    if opcode == 9:  # answer the keepalive
                        self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
                    continue
            chunk = self.sock.recv(65536)
            assert chunk, "the gateway closed the connection"
            self.buf += chunk


@pytest.mark.parametrize("subprotocol", SUBPROTOCOLS)
def test_a_publisher_that_does_not_read_is_paused_then_answered_in_full(gateway, subprotocol):
    gw = gateway()
    p = RawPublisher(gw, subprotocol)
    bad = 32 * p.window
    wrong = RawPublisher.frame(json.dumps({"type": "x" * 400}))  # each answer quotes it: ~0.5 KiB a rejection
    sent = [0]

    def write():
        for _ in range(bad):
            p.sock.sendall(wrong)
            sent[0] += 1
        p.send(json.loads(update(7)))

    sender = threading.Thread(target=write, daemon=True)
    sender.start()
    sender.join(2)
    # Megabytes of answers nobody reads: past a window of them the gateway stopped reading, and TCP holds the writer.
    assert sender.is_alive() and sent[0] < bad, sent[0]
    frames = []
    while not (frames and frames[-1]["type"] == "accepted" and frames[-1]["through"] == bad + 1):
        frames.append(p.recv())
    sender.join(10)
    rejected = [f for f in frames if f["type"] == "rejected"]
    # Every bad item is answered, in order, naming its field and rule; the valid one after them is applied.
    assert [f["item"] for f in rejected] == list(range(1, bad + 1))
    assert all(f["field"] == "type" and f["rule"] == "value" and len(f["message"].encode()) <= 512 for f in rejected)
    assert gw.get("/v1/activities/washer")[1]["activities"][0]["state"]["progress"] == 7
    p.send({"type": "ping"})
    assert p.recv() == {"type": "pong"}


def test_only_a_publisher_authenticates_on_the_publisher_subprotocol(gateway):
    gw = gateway()
    ws = wsclient.connect(f"ws://127.0.0.1:{gw.port}/v1/stream", subprotocols=["lanpush.publisher"], open_timeout=10)
    assert json.loads(ws.recv(timeout=10))["type"] == "auth_required"
    ws.send(json.dumps({"type": "auth", "token": gw.admin, "role": "observer"}))
    assert json.loads(ws.recv(timeout=10)) == {"type": "auth_invalid",
                                               "message": "the lanpush.publisher subprotocol is for publishers"}
    with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
        ws.recv(timeout=10)
    assert closed.value.rcvd.code == 4001
