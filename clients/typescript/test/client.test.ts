import assert from "node:assert/strict";
import { test } from "node:test";
import { LanpushClient, LanpushClientOptions } from "../src/client.js";
import type { ConnectionStatus } from "../src/events.js";
import { DeviceState } from "../src/state.js";
import { MemoryStore, StateStore } from "../src/store.js";
import { FakeSocket, FakeTimers, flush } from "./support/fakes.js";
import { toV2 } from "./support/v2.js";

const attrs = (tag: string) => ({ tag, title: tag.toUpperCase(), started_at: 1_700_000_000 });
const start = (seq: number, tag: string, state: object = { message: "hi" }) => ({ type: "start", seq, tag, attributes: attrs(tag), state });

function harness(options: Partial<LanpushClientOptions> = {}) {
  const timers = new FakeTimers();
  const sockets: FakeSocket[] = [];
  const statuses: ConnectionStatus[] = [];
  const client = new LanpushClient({
    url: "ws://gw.test/v1/stream",
    token: "secret",
    createSocket: (url, protocols) => {
      const s = new FakeSocket(url, protocols);
      sockets.push(s);
      return s;
    },
    timers,
    now: () => timers.now,
    random: () => 0.5,
    ...options,
  });
  client.on("status", (e) => {
    statuses.push(e.status);
  });
  const last = () => sockets[sockets.length - 1];
  /** Opens the newest socket and completes auth (+ subscribe). */
  const handshake = async (deviceId = "phone") => {
    await flush();
    const s = last();
    s.open();
    s.receive({ type: "auth_required", version: "lanpush.v1" });
    s.receive({ type: "auth_ok", device_id: deviceId, epoch: "e1", seq: 0, version: "lanpush.v1" });
    await client.idle();
    return s;
  };
  return { client, timers, sockets, statuses, last, handshake };
}

test("handshake: auth, register with supports_live_activities, subscribe with the stored resume point", async () => {
  const store = new MemoryStore();
  const held: DeviceState = { epoch: "e1", seq: 41, activities: {}, notifications: [] };
  store.save("lanpush:ws://gw.test/v1/stream", held);
  const h = harness({ store, register: { push_token: "tok", push_url: "http://ha/relay" }, supportsLiveActivities: true });
  h.client.start();
  const s = await h.handshake();
  assert.deepEqual(s.protocols, ["lanpush.v2", "lanpush.v1"]);
  assert.deepEqual(s.sent, [
    { type: "auth", token: "secret", version: "lanpush.v2" },
    { type: "register", push_token: "tok", push_url: "http://ha/relay", supports_live_activities: true },
    { type: "subscribe", epoch: "e1", seq: 41 },
  ]);
  assert.equal(h.client.status, "connecting");
  s.receive({ type: "replay", from: 41, epoch: "e1" });
  s.receive({ type: "synced", seq: 41 });
  await h.client.idle();
  assert.equal(h.client.status, "live");
  assert.equal(s.sentOfType("ack").length, 0, "replay and synced need no ack");
  await h.client.stop();
});

test("acks follow the handler: a slow handler holds the ack back, frames wait in order", async () => {
  const h = harness();
  const seen: number[] = [];
  let release: () => void = () => {};
  h.client.on("activity", async (e) => {
    seen.push(e.current!.attributes.started_at);
    if (e.tag === "a") await new Promise<void>((resolve) => (release = resolve));
  });
  h.client.start();
  const s = await h.handshake();
  s.receive(start(1, "a"));
  s.receive(start(2, "b"));
  await flush();
  assert.equal(s.sentOfType("ack").length, 0, "no ack while the handler of seq 1 runs");
  assert.equal(seen.length, 1, "seq 2 waits for seq 1's handler");
  release();
  await h.client.idle();
  assert.deepEqual(s.sentOfType("ack"), [{ type: "ack", seq: 2 }], "one cumulative ack once the queue drained");
  await h.client.stop();
});

test("acks go out at least every half window while frames keep coming", async () => {
  const h = harness({ window: 8 });
  h.client.start();
  const s = await h.handshake();
  for (let i = 1; i <= 20; i++) s.receive(start(i, `t${i}`));
  await h.client.idle();
  const acks = s.sentOfType("ack").map((a) => a.seq);
  assert.deepEqual(acks, [4, 8, 12, 16, 20]);
  await h.client.stop();
});

test("the state is saved before the ack that covers it", async () => {
  const order: string[] = [];
  const inner = new MemoryStore();
  const store: StateStore = {
    load: (k) => inner.load(k),
    save: async (k, state) => {
      await flush();
      order.push(`save ${state.seq}`);
      inner.save(k, state);
    },
    clear: (k) => inner.clear(k),
  };
  const h = harness({ store });
  h.client.start();
  const s = await h.handshake();
  const send = s.send.bind(s);
  s.send = (data: string) => {
    const f = JSON.parse(data);
    if (f.type === "ack") order.push(`ack ${f.seq}`);
    send(data);
  };
  s.receive(start(1, "a"));
  await h.client.idle();
  assert.deepEqual(order, ["save 1", "ack 1"]);
  await h.client.stop();
});

test("4001 stops for good; auth_invalid without a close code does too", async () => {
  for (const close of [{ code: 4001, reason: "auth invalid" }, { code: undefined, reason: "" }]) {
    const h = harness();
    const rejected: string[] = [];
    h.client.on("auth_rejected", (e) => {
      rejected.push(e.message);
    });
    h.client.start();
    await flush();
    const s = h.last();
    s.open();
    s.receive({ type: "auth_required" });
    s.receive({ type: "auth_invalid", message: "invalid token" });
    s.serverClose(close.code, close.reason);
    await flush();
    await h.timers.advance(10 * 60_000);
    assert.equal(h.sockets.length, 1, "never retried");
    assert.equal(h.client.status, "auth_rejected");
    assert.deepEqual(rejected, ["invalid token"]);
  }
});

test("reconnects at once after 1001, 4002 and 4003, and resumes", async () => {
  for (const code of [1001, 4002, 4003]) {
    const h = harness({ store: new MemoryStore() });
    h.client.start();
    const s = await h.handshake();
    s.receive({ type: "snapshot", epoch: "e1", seq: 3, activities: [] });
    s.receive({ type: "synced", seq: 3 });
    await h.client.idle();
    s.serverClose(code, "bye");
    const again = await h.handshake();
    assert.equal(h.sockets.length, 2, `code ${code}: reconnected without waiting`);
    assert.deepEqual(again.sentOfType("subscribe"), [{ type: "subscribe", epoch: "e1", seq: 3 }]);
    await h.client.stop();
  }
});

test("backs off with growing jittered delays, 1013 waits at least 5 s, 4029 waits what the reason says", async () => {
  const h = harness({ backoff: { initial: 500, max: 30_000, jitter: 0.5 } });
  h.client.start();
  const delays: number[] = [];
  for (let i = 0; i < 4; i++) {
    await flush();
    h.last().serverClose(1006, "");
    await flush();
    delays.push(h.timers.delays[0]);
    await h.timers.advance(delays[i]);
  }
  assert.deepEqual(delays, [375, 750, 1500, 3000], "random 0.5 with jitter 0.5: three quarters of 500·2ⁿ");
  assert.equal(h.client.status, "connecting");

  await flush();
  h.last().serverClose(1013, "too many sessions");
  await flush();
  assert.ok(h.timers.delays[0] >= 5000, `1013: ${h.timers.delays[0]}`);
  await h.timers.advance(h.timers.delays[0]);

  await flush();
  h.last().serverClose(4029, "rate-limited: try again in 7 s");
  await flush();
  const wait = h.timers.delays[0];
  assert.ok(wait >= 7000 && wait <= 7700, `4029: ${wait}`);
  assert.equal(h.client.status, "offline");
  await h.client.stop();
});

test("a session that reached synced resets the backoff", async () => {
  const h = harness({ backoff: { initial: 1000, jitter: 0 } });
  h.client.start();
  for (let i = 0; i < 3; i++) {
    await flush();
    h.last().serverClose(1006);
    await flush();
    await h.timers.advance(h.timers.delays[0]);
  }
  const s = await h.handshake();
  s.receive({ type: "snapshot", epoch: "e1", seq: 0, activities: [] });
  s.receive({ type: "synced", seq: 0 });
  await h.client.idle();
  s.serverClose(1006);
  await flush();
  assert.deepEqual(h.timers.delays.filter((d) => d > 1), [1000]);
  assert.deepEqual(h.statuses.slice(0, 3), ["connecting", "offline", "connecting"]);
  await h.client.stop();
});

test("an update the client cannot apply makes it start over from a snapshot", async () => {
  const h = harness({ store: new MemoryStore() });
  const errors: string[] = [];
  h.client.on("error", (e) => {
    errors.push(e.message);
  });
  h.client.start();
  const s = await h.handshake();
  s.receive({ type: "snapshot", epoch: "e1", seq: 5, activities: [] });
  s.receive({ type: "update", seq: 6, tag: "ghost", patch: { message: "x" }, phase: "active" });
  s.receive(start(7, "later"));
  await h.client.idle();
  assert.equal(s.closedWith?.reason, "resync");
  assert.equal(h.client.state.activities.later, undefined, "frames after the bad one are not applied");
  const again = await h.handshake();
  assert.deepEqual(again.sentOfType("subscribe"), [{ type: "subscribe" }], "no resume point: a snapshot");
  assert.match(errors.join(), /ghost/);
  await h.client.stop();
});

test("user actions made offline are sent once authenticated", async () => {
  const h = harness();
  h.client.dismiss("washer");
  h.client.dismiss("washer");
  h.client.sendLiveActivityToken("washer", "la-1", 1_800_000_000);
  h.client.sendPushToStartToken("pts");
  h.client.start();
  const s = await h.handshake();
  assert.deepEqual(s.sent.slice(2), [
    { type: "dismissed", tag: "washer" },
    { type: "live_activity_token", tag: "washer", token: "la-1", expires_at: 1_800_000_000 },
    { type: "push_to_start_token", token: "pts" },
  ]);
  h.client.dismiss("dryer");
  assert.deepEqual(s.sent.at(-1), { type: "dismissed", tag: "dryer" }, "sent at once when connected");
  await h.client.stop();
});

test("events: activity views, ended + dismissed for an end that dismisses at once, notifications_dropped", async () => {
  const h = harness();
  const log: string[] = [];
  h.client.on("activity", (e) => {
    log.push(`activity ${e.tag} ${e.previous?.phase ?? "-"}→${e.current?.phase ?? "-"} ${e.cause}`);
  });
  h.client.on("ended", (e) => {
    log.push(`ended ${e.tag} ${e.activity.state.message}`);
  });
  h.client.on("dismissed", (e) => {
    log.push(`dismissed ${e.tag}`);
  });
  h.client.on("notifications_dropped", (e) => {
    log.push(`dropped ${e.count} through ${e.through}`);
  });
  h.client.start();
  const s = await h.handshake();
  s.receive(start(1, "w", { message: "Rinsing" }));
  s.receive({ type: "end", seq: 2, tag: "w", patch: { message: "Done" }, phase: "dismissed", dismissal_date: 1_700_000_000, relevance_score: 75 });
  s.receive({ type: "notifications_dropped", count: 3, through: 9 });
  await h.client.idle();
  assert.deepEqual(log, [
    "activity w -→active start",
    "activity w active→- end",
    "ended w Done",
    "dismissed w",
    "dropped 3 through 9",
  ]);
  assert.deepEqual(s.sentOfType("ack"), [{ type: "ack", seq: 2 }], "notifications_dropped needs no ack");
  await h.client.stop();
});

test("a repeated end of an ended activity moves its dismissal date", async () => {
  const h = harness({ now: () => 1_700_000_000_000 });
  h.client.start();
  const s = await h.handshake();
  s.receive(start(1, "w"));
  s.receive({ type: "end", seq: 2, tag: "w", patch: {}, dismissal_date: 1_700_014_400 });
  s.receive({ type: "end", seq: 3, tag: "w", patch: {}, dismissal_date: 1_700_000_600 });
  await h.client.idle();
  assert.equal(h.client.state.activities.w.dismissal_date, 1_700_000_600);
  assert.equal(h.client.state.activities.w.phase, "ended");
  await h.client.stop();
});

test("observers: role and device in auth, per-device state, device frames, never an ack", async () => {
  const h = harness({ role: "observer", device: "phone" });
  const devices: string[] = [];
  h.client.on("device", (e) => {
    devices.push(`${e.device} ${e.connected}`);
  });
  h.client.start();
  await flush();
  const s = h.last();
  s.open();
  s.receive({ type: "auth_required" });
  s.receive({ type: "auth_ok", role: "observer", version: "lanpush.v1" });
  await h.client.idle();
  assert.deepEqual(s.sent, [{ type: "auth", token: "secret", version: "lanpush.v2", role: "observer", device: "phone" }, { type: "subscribe" }]);
  s.receive({ type: "snapshot", epoch: "e1", seq: 4, activities: [], device_id: "phone" });
  s.receive({ ...start(5, "w"), device_id: "phone" });
  s.receive({ type: "synced", seq: 5, device_id: "phone" });
  s.receive({ type: "device", device_id: "phone", connected: true, sessions: 1, path: "lan" });
  await h.client.idle();
  assert.deepEqual(Object.keys(h.client.devices.get("phone")!.activities), ["w"]);
  assert.deepEqual(devices, ["phone true"]);
  assert.equal(s.sentOfType("ack").length, 0);
  assert.equal(h.client.status, "live");
  await h.client.stop();
});

test("keepalive: a quiet link is pinged, an unanswered ping drops it", async () => {
  const h = harness({ keepaliveInterval: 30_000, keepaliveTimeout: 10_000 });
  h.client.start();
  const s = await h.handshake();
  await h.timers.advance(30_000);
  assert.deepEqual(s.sent.at(-1), { type: "ping" });
  s.receive({ type: "pong" });
  await h.client.idle();
  await h.timers.advance(30_000);
  assert.deepEqual(s.sentOfType("ping").length, 2);
  await h.timers.advance(10_000);
  assert.equal(s.closedWith?.reason, "keepalive timeout");
  await h.timers.advance(60_000);
  assert.ok(h.sockets.length >= 2, "reconnected");
  await h.client.stop();
});

test("frame events: every frame as received, before the state events it causes", async () => {
  const h = harness();
  const seen: string[] = [];
  h.client.on("frame", ({ frame }) => {
    seen.push(`frame ${frame.type}`);
  });
  h.client.on("activity", (e) => {
    seen.push(`activity ${e.tag}`);
  });
  h.client.start();
  const s = await h.handshake();
  s.receive(start(1, "a"));
  s.receive({ type: "synced", seq: 1 });
  await h.client.idle();
  assert.deepEqual(seen, ["frame auth_required", "frame auth_ok", "frame start", "activity a", "frame synced"]);
  await h.client.stop();
});

test("lanpush.v2 is asked for twice: offered before lanpush.v1 (factory and constructor alike) and named in auth", async () => {
  const viaFactory = harness();
  viaFactory.client.start();
  const s = await viaFactory.handshake();
  assert.deepEqual(s.protocols, ["lanpush.v2", "lanpush.v1"]);
  assert.deepEqual(s.sent[0], { type: "auth", token: "secret", version: "lanpush.v2" });
  await viaFactory.client.stop();

  const constructed: FakeSocket[] = [];
  const client = new LanpushClient({
    url: "ws://gw.test/v1/stream",
    token: "secret",
    WebSocket: class extends FakeSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, typeof protocols === "string" ? [protocols] : protocols ?? []);
        constructed.push(this);
      }
    },
    timers: new FakeTimers(),
  });
  client.start();
  await flush();
  assert.equal(constructed.length, 1);
  assert.deepEqual(constructed[0].protocols, ["lanpush.v2", "lanpush.v1"]);
  constructed[0].open();
  constructed[0].receive({ type: "auth_required", version: "lanpush.v2" });
  await client.idle();
  assert.deepEqual(constructed[0].sent, [{ type: "auth", token: "secret", version: "lanpush.v2" }]);
  await client.stop();
});

test("lanpush.v2 array frames are applied and acked like their objects; the frame event hands over the object", async () => {
  const h = harness();
  const frames: unknown[] = [];
  h.client.on("frame", ({ frame }) => {
    frames.push(frame);
  });
  h.client.start();
  const s = await h.handshake();
  s.receive({ type: "snapshot", epoch: "e1", seq: 0, activities: [] });
  s.receive(["start", 1, "ev", { message: "hi" }, { attributes: attrs("ev") }]);
  s.receive(["update", 2, "ev", { progress: 35 }]);
  s.receive(["update", 3, "ev", {}, { phase: "stale", silent: true }]);
  s.receive(["end", 4, "ev", { message: "done" }, { dismissal_date: 1_900_000_000 }]);
  await h.client.idle();
  assert.deepEqual(h.client.state.activities.ev, {
    tag: "ev", attributes: attrs("ev"), state: { message: "done", progress: 35 }, phase: "ended", dismissal_date: 1_900_000_000,
  });
  assert.deepEqual(s.sentOfType("ack").at(-1), { type: "ack", seq: 4 });
  assert.deepEqual(frames.slice(3), [
    { type: "start", seq: 1, tag: "ev", state: { message: "hi" }, attributes: attrs("ev") },
    { type: "update", seq: 2, tag: "ev", patch: { progress: 35 }, phase: "active" },
    { type: "update", seq: 3, tag: "ev", patch: {}, phase: "stale", silent: true },
    { type: "end", seq: 4, tag: "ev", patch: { message: "done" }, dismissal_date: 1_900_000_000 },
  ]);
  await h.client.stop();
});

test("a malformed array frame is dropped exactly like invalid JSON: no frame event, no state, no ack, the session goes on", async () => {
  for (const bad of ['["update",2,"ev"]', '["update","2","ev",{}]', '["lifecycle",2,"ev",{}]', '["update",2,"ev",{},null]', '{"update":']) {
    const h = harness();
    const frames: string[] = [];
    h.client.on("frame", ({ frame }) => {
      frames.push(frame.type);
    });
    h.client.start();
    const s = await h.handshake();
    s.receive({ type: "snapshot", epoch: "e1", seq: 0, activities: [] });
    s.receive(toV2(start(1, "ev")));
    await h.client.idle();
    const held = h.client.state;
    const acks = s.sentOfType("ack").length;
    s.receiveText(bad);
    await h.client.idle();
    assert.equal(h.client.state, held, `${bad}: state untouched`);
    assert.equal(s.sentOfType("ack").length, acks, `${bad}: nothing acked`);
    assert.deepEqual(frames, ["auth_required", "auth_ok", "snapshot", "start"], `${bad}: no frame event`);
    assert.equal(s.closedWith, null, `${bad}: the session stays`);
    s.receive(["update", 2, "ev", { progress: 1 }]);
    await h.client.idle();
    assert.equal(h.client.state.activities.ev.state.progress, 1, `${bad}: the next frame is applied`);
    await h.client.stop();
  }
});

test("observers: v2 frames carry device_id in their extras; events and the frame event name the device", async () => {
  const h = harness({ role: "observer" });
  const frames: unknown[] = [];
  const activity: string[] = [];
  h.client.on("frame", ({ frame }) => {
    frames.push(frame);
  });
  h.client.on("activity", (e) => {
    activity.push(`${e.device} ${e.tag} ${e.current?.phase ?? "-"} ${e.cause}`);
  });
  h.client.start();
  await flush();
  const s = h.last();
  s.open();
  s.receive({ type: "auth_required" });
  s.receive({ type: "auth_ok", role: "observer", version: "lanpush.v2" });
  s.receive({ type: "snapshot", epoch: "e1", seq: 0, activities: [], device_id: "phone" });
  s.receive(["start", 1, "w", { message: "hi" }, { attributes: attrs("w"), device_id: "phone" }]);
  s.receive(["update", 2, "w", { progress: 5 }, { device_id: "phone" }]);
  s.receive(["lifecycle", 3, "w", "stale", { device_id: "phone" }]);
  s.receive(["start", 1, "x", { message: "tab" }, { attributes: attrs("x"), device_id: "tablet" }]);
  await h.client.idle();
  assert.deepEqual(activity, ["phone w active start", "phone w active update", "phone w stale lifecycle", "tablet x active start"]);
  assert.deepEqual(h.client.devices.get("phone")!.activities.w.state, { message: "hi", progress: 5 });
  assert.deepEqual(Object.keys(h.client.devices.get("tablet")!.activities), ["x"]);
  assert.deepEqual(frames[4], { type: "update", seq: 2, tag: "w", patch: { progress: 5 }, phase: "active", device_id: "phone" });
  assert.equal(s.sentOfType("ack").length, 0);
  await h.client.stop();
});

test("keepalive: the interval asked for goes in auth; the granted one sets how seldom the client pings", async () => {
  const h = harness({ keepalive: 120 });
  h.client.start();
  await flush();
  const s = h.last();
  s.open();
  s.receive({ type: "auth_required", version: "lanpush.v1" });
  s.receive({ type: "auth_ok", device_id: "phone", epoch: "e1", seq: 0, version: "lanpush.v2", keepalive: 120 });
  await h.client.idle();
  assert.deepEqual(s.sent[0], { type: "auth", token: "secret", version: "lanpush.v2", keepalive: 120 });
  assert.equal(h.client.keepalive, 120);
  // Quiet for 239 s: no ping yet (the gateway's own pings, every 120 s, keep the link checked from its side).
  await h.timers.advance(239_000);
  assert.equal(s.sentOfType("ping").length, 0);
  await h.timers.advance(1_000);
  assert.equal(s.sentOfType("ping").length, 1);
  await h.client.stop();
});

test("keepalive: a gateway that grants none (an older one) leaves the default 30 s ping and no interval", async () => {
  const h = harness({ keepalive: 120 });
  h.client.start();
  const s = await h.handshake();
  assert.equal(h.client.keepalive, null);
  await h.timers.advance(30_000);
  assert.equal(s.sentOfType("ping").length, 1);
  await h.client.stop();
});

test("keepalive: nothing asked, nothing sent in auth", async () => {
  const h = harness();
  h.client.start();
  const s = await h.handshake();
  assert.equal("keepalive" in s.sent[0], false);
  await h.client.stop();
});
