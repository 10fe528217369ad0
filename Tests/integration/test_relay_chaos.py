"""Relay chaos: HA's relay (the fake) answers 5xx, 429 with `resetsAt`, 400, time-outs, dropped connections and slow
answers for a while, then recovers. Meanwhile HA keeps posting a gone device's live updates (10 tags) and plain
notifications through the relay-format ingest.

Asserted: ingest never waits on the relay (every answer < 1 s); the outbox stays bounded (one item per activity,
latest wins, plus the notifications not yet delivered); once the relay is back and the outbox drained, every
accepted update and notification reached the relay (the newest per tag: older ones merge) or was dropped — counted in
`lanpush_relay_dropped_total` and logged ("relay items dropped"), never silently.

Last, the relay refuses three notifications with 400 (a request it will never take): each is dropped, counted and
logged.

`LANPUSH_CHAOS_SECONDS` sets the chaos period (scripts/test-long: 300; the normal suite: 10)."""
import http.client
import json
import os
import random
import re
import threading
import time

from fake_relay import FakeRelay

CHAOS_SECONDS = float(os.environ.get("LANPUSH_CHAOS_SECONDS", "10"))
TAGS = [f"chaos{i}" for i in range(10)]
TOKEN = "fcm:tok-car"
RELAY = (  # the fake relay on loopback: a push_url allowed by name
    "relay: {min_update_interval: 1, starts_per_hour: 10000, quota: 10000000, quota_reserve: 0, timeout: 1, allowed_push_urls: [%s]}\n")


class Chaos(threading.Thread):
    """Changes the relay's answer every 0.3 s."""

    def __init__(self, relay, seed):
        super().__init__(daemon=True)
        self.relay, self.rnd, self.stop = relay, random.Random(seed), threading.Event()
        self.kinds = {}

    def run(self):
        r = self.relay
        while not self.stop.is_set():
            kind, answer = self.rnd.choice([
                ("500", r.error(500)), ("503", r.error(503)), ("502", r.error(502, delay=0.3)),
                ("429", r.rate_limited(resets_in=self.rnd.uniform(0.5, 3))),
                ("400", r.custom(400, {"errorType": "InvalidRequest", "message": "bad request"})),
                ("timeout", r.slow(2.5)), ("reset", r.drop()), ("reset-late", r.drop(delay=0.5)),
                ("slow-ok", r.ok(delay=0.7)), ("ok", r.ok()),
            ])
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            r.set_default(answer)
            self.stop.wait(0.3)
        r.set_default(r.ok())


def test_relay_chaos_never_blocks_ingest_and_loses_nothing_silently(gateway):
    # The fake's daily quota (500 deliveries per token, as HA's relay) would rightly stop the outbox until its reset
    # well within 5 minutes of chaos: this test is about faults, so the quota is out of its way.
    with FakeRelay(maximum=10_000_000) as relay:
        gw = gateway(devices=("car",), extra=RELAY % relay.url)
        car = gw.client("car")
        car.send({"type": "register", "push_token": TOKEN, "push_url": relay.ios_url,
                  "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "2026.1", "webhook_id": "hook-car"}})
        assert car.pump(lambda c: any(f["type"] == "registered" for f in c.frames))
        car.close()
        gw.wait_disconnected("car")

        chaos = Chaos(relay, seed=7)
        chaos.start()
        conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=5)
        latencies, accepted, notifications = [], {}, set()
        queue_samples = []
        rnd = random.Random(8)
        n = 0
        started = time.time()
        next_sample = started
        while time.time() - started < CHAOS_SECONDS:
            n += 1
            if n % 5 == 0:
                data, message = {"tag": f"note-{n}"}, f"notification {n}"
            else:
                tag = rnd.choice(TAGS)
                data, message = {"tag": tag, "live_update": True, "progress": n, "progress_max": 1 << 30}, f"update {n}"
            body = {"push_token": TOKEN, "title": "Chaos", "message": message, "data": data,
                    "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "2025.1", "os_version": "18.2",
                                          "webhook_id": "hook-1"}}
            t0 = time.time()
            conn.request("POST", "/api/sendPushNotification", body=json.dumps(body), headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            answer = r.read()
            latencies.append(time.time() - t0)
            assert r.status in (201, 202), (r.status, answer)
            if "live_update" in data:
                accepted[data["tag"]] = n
            else:
                notifications.add(n)
            if time.time() >= next_sample:
                queue_samples.append(gw.metric("lanpush_relay_queue"))
                next_sample += 1.0
            time.sleep(0.02)
        chaos.stop.set()
        chaos.join(5)

        # The relay is healthy again: the outbox drains (backoffs run out, 429s reset). A long chaos can end on a run
        # of failures whose backoff reached its cap (300 s, full jitter): the outbox may rightly wait that long.
        deadline = time.time() + 330
        while time.time() < deadline:
            if gw.metric("lanpush_relay_queue") == 0 and all(
                    r.answer_status is not None for r in relay.requests if r.at > time.time() - 5):
                time.sleep(1.5)
                if gw.metric("lanpush_relay_queue") == 0:
                    break
            time.sleep(0.5)
        assert gw.metric("lanpush_relay_queue") == 0, "the outbox did not drain after the relay recovered"

        # Three requests the relay will never take: dropped at once, each counted and logged.
        relay.script(*[relay.custom(400, {"errorType": "InvalidRequest", "message": "bad request"})] * 3)
        for k in range(3):
            n += 1
            notifications.add(n)
            status, answer = gw.relay(TOKEN, title="Chaos", message=f"notification {n}", data={"tag": f"refused-{k}"})
            assert status in (201, 202), answer
        relay.wait_for(3, predicate=lambda r: r.answer_status == 400 and "refused-" in json.dumps(r.body))
        time.sleep(0.5)

        delivered_updates, delivered_notes = {}, set()
        for rec in relay.requests:
            if rec.answer_status != 201 or not isinstance(rec.body, dict):
                continue
            d = rec.body.get("data") or {}
            if d.get("live_update"):
                delivered_updates[d["tag"]] = max(delivered_updates.get(d["tag"], 0), d.get("progress", 0))
            else:
                m = re.match(r"notification (\d+)", rec.body.get("message", ""))
                if m:
                    delivered_notes.add(int(m.group(1)))
        lost_tags = [t for t, last in accepted.items() if delivered_updates.get(t, 0) < last]
        lost_notes = sorted(notifications - delivered_notes)
        dropped = gw.metric("lanpush_relay_dropped_total")
        log = (gw.dir / "lanpushd.log").read_text(errors="replace")
        logged = [line for line in log.splitlines() if "relay items dropped" in line]
        logged_items = sum(int(m.group(1)) for line in logged for m in [re.search(r"items=(\d+)", line)] if m)

        p99 = sorted(latencies)[int(0.99 * (len(latencies) - 1))]
        print(f"\nrelay chaos {CHAOS_SECONDS:.0f} s: {n} posts, answers {sorted(chaos.kinds.items())}; ingest p50 "
              f"{sorted(latencies)[len(latencies) // 2] * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms; "
              f"relay queue max {max(queue_samples, default=0):.0f}; relay requests {len(relay.requests)}; not delivered: "
              f"{len(lost_tags)} tags, {len(lost_notes)} notifications; dropped metric {dropped:.0f}, logged {logged_items}")
        assert max(latencies) < 1.0, f"ingest blocked: {max(latencies):.3f} s"
        assert max(queue_samples, default=0) <= len(TAGS) + len(notifications), queue_samples
        # Nothing lost silently: every update or notification the relay did not get is counted and logged.
        assert len(lost_notes) >= 3 and len(lost_tags) + len(lost_notes) <= dropped, (lost_tags, lost_notes, dropped)
        assert logged_items == dropped, f"{dropped:.0f} dropped, {logged_items} logged:\n" + "\n".join(logged[:10])
