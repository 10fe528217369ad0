"""Crash campaign: kill -9 at a random moment while LAN sessions are live, HA's relay-format ingest is posting and
the relay outbox of a gone device is in flight to a fake of HA's relay; then restart on the same state folder.

After each restart:
- every tag's state is the last update answered 2xx, or the one in flight at the kill (a 2xx means committed);
- every LAN session resumes from its (epoch, seq): the unclean stop gave a new epoch, so it gets a snapshot — no seq
  is reused with other content, no gap goes unnoticed — and the snapshot is the stored state; before the kill no
  session saw a seq twice or out of order;
- the gone device's relay gets the newest accepted state of every tag, and after the hand-over no relay body is
  sent twice except one whose request was in flight at the kill (at-least-once: its answer may not have been
  committed).

`LANPUSH_CRASH_TRIALS` sets the number of trials (scripts/test-long runs 50; the normal suite 3)."""
import http.client
import json
import os
import random
import signal
import threading
import time

import pytest

from fake_relay import FakeRelay

TRIALS = int(os.environ.get("LANPUSH_CRASH_TRIALS", "3"))
TAGS = [f"t{i}" for i in range(6)]
DEVICES = ("phone", "tablet", "car")
# HA's relay reads registration_info unguarded (mobile-apps-fcm-push functions/legacy.js): every app sends it.
IOS_INFO = {"app_id": "io.robbie.HomeAssistant", "app_version": "2026.1", "os_version": "18.6", "webhook_id": "hook-it"}
PUSH_TOKENS = {"phone": "fcm:tok-phone", "car": "fcm:tok-car"}
# Relay limits that let every update through at once, so the outbox is busy when the kill comes.
RELAY = (  # the fake relay on loopback: a push_url allowed by name
    "relay: {min_update_interval: 0, starts_per_hour: 10000, quota: 10000000, quota_reserve: 0, timeout: 2, allowed_push_urls: [%s]}\n")


class Poster(threading.Thread):
    """Posts live updates over one keep-alive connection: HA's relay body (phone, and car whose only path is the
    relay) or `/v1/push` (tablet). Remembers per (device, tag) the last n answered 2xx and the one in flight."""

    def __init__(self, gw, device, seed):
        super().__init__(daemon=True)
        self.gw, self.device, self.rnd = gw, device, random.Random(seed)
        self.acked = {}
        self.in_flight = None
        self.count = 0
        self.failed = []

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.gw.port, timeout=5)
        n = 0
        while True:
            n += 1
            tag = self.rnd.choice(TAGS)
            data = {"tag": tag, "live_update": True, "progress": n, "progress_max": 1 << 30}
            if self.device in PUSH_TOKENS:
                path, headers = "/api/sendPushNotification", {"Content-Type": "application/json"}
                body = {"push_token": PUSH_TOKENS[self.device], "title": tag, "message": f"{self.device} {n}", "data": data,
                        "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "2025.1",
                                              "os_version": "18.2", "webhook_id": "hook-1"}}
            else:
                path, headers = "/v1/push", {"Content-Type": "application/json", **self.gw.admin_headers()}
                body = {"targets": [self.device], "title": tag, "message": f"{self.device} {n}", "data": data}
            self.in_flight = (tag, n)
            try:
                conn.request("POST", path, body=json.dumps(body), headers=headers)
                r = conn.getresponse()
                r.read()
            except OSError:
                return  # the kill
            if 200 <= r.status < 300:
                self.acked[tag] = n
                self.count += 1
            else:
                self.failed.append((r.status, n))
            self.in_flight = None
            time.sleep(self.rnd.uniform(0, 0.01))


class Session(threading.Thread):
    """A LAN client pumping (and acking) until the connection dies; checks that seqs only grow."""

    def __init__(self, client):
        super().__init__(daemon=True)
        self.client = client
        self.seqs = []

    def run(self):
        try:
            self.client.pump(timeout=60)
        except Exception:  # noqa: BLE001 - the kill ends the connection in whatever state it is
            pass
        self.seqs = [f["seq"] for f in self.client.frames if "seq" in f and f["type"] not in ("snapshot", "synced", "replay")]


def relay_number(body):
    data = body.get("data") or {}
    return data.get("tag"), data.get("progress")


@pytest.mark.parametrize("trial", range(TRIALS))
def test_kill_9_at_a_random_moment(gateway, trial):
    rnd = random.Random(1000 + trial)
    with FakeRelay() as relay:
        relay.set_default(relay.ok(delay=0.005))
        gw = gateway(devices=DEVICES, extra=RELAY % relay.url)
        # The car registers its relay credentials and goes away: its changes take the relay path from now on.
        car = gw.client("car")
        car.send({"type": "register", "push_token": PUSH_TOKENS["car"], "push_url": relay.ios_url, "registration_info": IOS_INFO})
        assert car.pump(lambda c: any(f["type"] == "registered" for f in c.frames))
        car.close()
        gw.wait_disconnected("car")
        phone = gw.client("phone")
        phone.send({"type": "register", "push_token": PUSH_TOKENS["phone"], "push_url": relay.ios_url, "registration_info": IOS_INFO})
        phone.pump(lambda c: any(f["type"] == "synced" for f in c.frames))
        sessions = {"phone": Session(phone), "tablet": Session(gw.client("tablet"))}
        for s in sessions.values():
            s.start()
        posters = [Poster(gw, d, seed=trial * 10 + i) for i, d in enumerate(DEVICES)]
        for p in posters:
            p.start()

        time.sleep(rnd.uniform(0.4, 2.0))
        kill_at = time.time()
        gw.proc.send_signal(signal.SIGKILL)
        gw.proc.wait(5)
        for t in posters + list(sessions.values()):
            t.join(10)
        before_restart = len(relay.requests)
        assert all(p.count > 5 for p in posters), [p.count for p in posters]
        assert not any(p.failed for p in posters), [p.failed[:3] for p in posters]
        for device, s in sessions.items():
            assert s.seqs == sorted(set(s.seqs)), f"{device} saw a seq twice or out of order: {s.seqs}"

        restart_at = time.time()
        gw.start()
        # Stored state: per tag the last 2xx, or the update in flight at the kill.
        for p in posters:
            status, body = gw.get(f"/v1/activities?device={p.device}")
            assert status == 200, body
            stored = {a["tag"]: a["state"].get("progress") for a in body["activities"]}
            for tag in TAGS:
                allowed = {p.acked.get(tag)}
                if p.in_flight and p.in_flight[0] == tag:
                    allowed.add(p.in_flight[1])
                assert stored.get(tag) in allowed, f"{p.device}/{tag}: stored {stored.get(tag)}, 2xx {p.acked.get(tag)}, in flight {p.in_flight}"
        # Sessions resume: a new epoch (unclean stop), so a snapshot equal to the stored state.
        for device, s in sessions.items():
            old = s.client
            c = gw.client(device, resume=(old.epoch, old.seq))
            assert c.pump(lambda c: any(f["type"] == "synced" for f in c.frames))
            assert c.epoch != old.epoch, "an unclean restart kept the epoch: a resume could reuse seqs"
            assert c.frames[0]["type"] == "snapshot", c.frames[:2]
            status, body = gw.get(f"/v1/activities?device={device}")
            assert {t: a["state"] for t, a in c.activities.items()} == {a["tag"]: a["state"] for a in body["activities"]}
            c.close()

        # The car's relay: quiet again, it must hold the newest accepted update of every tag.
        car_poster = posters[DEVICES.index("car")]
        deadline = time.time() + 20
        def latest():
            got = {}
            for r in relay.requests:
                if isinstance(r.body, dict) and r.token == PUSH_TOKENS["car"] and r.answer_status == 201:
                    tag, n = relay_number(r.body)
                    got[tag] = max(got.get(tag, 0), n or 0)
            return got
        while time.time() < deadline:
            want_ok = all(latest().get(tag, 0) >= (car_poster.acked.get(tag) or 0) for tag in TAGS)
            if want_ok:
                break
            time.sleep(0.2)
        assert all(latest().get(tag, 0) >= (car_poster.acked.get(tag) or 0) for tag in TAGS), (latest(), car_poster.acked)
        time.sleep(0.5)

        # No relay body twice, except one whose request was in flight at the kill.
        first = {}
        duplicates = []
        for r in relay.requests:
            if not isinstance(r.body, dict) or r.token != PUSH_TOKENS["car"]:
                continue
            key = relay_number(r.body)
            if key in first:
                duplicates.append((key, first[key], r))
            else:
                first[key] = r
        # In flight: not answered before the kill, or answered so shortly before it that the outbox's change (the
        # answered item leaving it) was not committed yet. Requests of different tags travel side by side (one
        # slot per tag), so there may be one such request per tag, never two. The fake relay may read a request a
        # few milliseconds after the kill signal: whatever it received before the restart the old process sent.
        window = 0.5
        per_tag = {}
        for key, original, again in duplicates:
            per_tag[key[0]] = per_tag.get(key[0], 0) + 1
            in_flight = original.at < restart_at and (original.answered_at is None or original.answered_at >= kill_at - window)
            assert in_flight and again.at > restart_at and per_tag[key[0]] == 1, (
                f"relay body {key} sent twice: first at {original.at - kill_at:+.3f} s from the kill "
                f"(answered {None if original.answered_at is None else round(original.answered_at - kill_at, 3)}), "
                f"again at {again.at - kill_at:+.3f} s")
        answered_before = [kill_at - o.answered_at for _, o, _ in duplicates if o.answered_at and o.answered_at < kill_at]
        print(f"\ntrial {trial}: 2xx posts {[p.count for p in posters]}, relay requests {before_restart} before the kill, "
              f"{len(relay.requests) - before_restart} after; re-sent (in flight at the kill): {len(duplicates)}"
              f"{f', answered up to {max(answered_before) * 1000:.0f} ms before the kill' if answered_before else ''}")
