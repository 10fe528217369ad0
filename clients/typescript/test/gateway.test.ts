import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { before, describe, test } from "node:test";
import { LanpushClient, LanpushClientOptions } from "../src/client.js";
import type { ClientEvents } from "../src/events.js";
import { parseFrame } from "../src/protocol.js";
import { MemoryStore } from "../src/store.js";
import { sleep } from "./support/fakes.js";
import { clientView, eventually, Fleet, Gateway, lanpushdPath } from "./support/gateway.js";
import { ev, segmented, WASHER, WASHER_CLEAR } from "./support/payloads.js";
import { CountingSocket, CuttableProxy } from "./support/sockets.js";

/** Tests against the real lanpushd: every final state must equal the gateway's own `GET /v1/activities`. */

const fleet = new Fleet();

before(() => {
  assert.ok(existsSync(lanpushdPath()), `no lanpushd at ${lanpushdPath()}: run 'swift build --product lanpushd' or set LANPUSHD`);
});

function gateway(options = {}): Promise<Gateway> {
  return fleet.gateway(options);
}

const socketsOf = new Map<LanpushClient, CountingSocket[]>();

function client(gw: Gateway, device: string, options: Partial<LanpushClientOptions> = {}, port = gw.port): LanpushClient {
  const sockets: CountingSocket[] = [];
  const c = new LanpushClient({
    url: `ws://127.0.0.1:${port}/v1/stream`,
    token: gw.tokens[device],
    store: new MemoryStore(),
    createSocket: (url, protocols) => {
      const s = new CountingSocket(url, protocols);
      sockets.push(s);
      return s;
    },
    backoff: { initial: 100, max: 1000 },
    handshakeTimeout: 2000,
    ...options,
  });
  fleet.client(c);
  socketsOf.set(c, sockets);
  return c;
}

function record<K extends keyof ClientEvents>(c: LanpushClient, type: K): ClientEvents[K][] {
  const seen: ClientEvents[K][] = [];
  c.on(type, (e) => {
    seen.push(e);
  });
  return seen;
}

async function converged(c: LanpushClient, gw: Gateway, device = "phone", timeout = 15_000): Promise<void> {
  await eventually(async () => {
    const server = await gw.activities(device);
    const want: { [tag: string]: object } = {};
    for (const tag of Object.keys(server)) want[tag] = clientView(server[tag]);
    assert.deepEqual(c.state.activities, want);
  }, timeout);
}

async function live(c: LanpushClient): Promise<void> {
  await eventually(() => assert.equal(c.status, "live"));
}

describe("against lanpushd", { concurrency: false }, () => {
  test("the washer cycle: start, patches, end; the final state is the gateway's", async () => {
    const gw = await gateway();
    const c = client(gw, "phone");
    const activity = record(c, "activity");
    const ended = record(c, "ended");
    c.start();
    await live(c);
    for (const payload of WASHER) await gw.push("phone", payload);
    await gw.push("phone", WASHER_CLEAR);
    await eventually(() => assert.equal(ended.length, 1));
    await converged(c, gw);
    assert.deepEqual(activity.map((e) => e.cause), ["start", "update", "update", "end"]);
    const rinse = activity[1].current!;
    assert.equal(rinse.state.chronometer, true);
    assert.ok(Math.abs((rinse.state.countdown_end as number) - (Date.now() / 1000 + 2700)) < 30, "when_relative became an absolute time");
    // clear_notification ends the activity and dismisses it at once, as on the phone: the client no longer holds
    // it, and the `ended` event carried its final state.
    assert.equal(c.state.activities.washer_cycle, undefined);
    const final = ended[0].activity;
    assert.equal(final.attributes.title, "Washing Machine");
    assert.deepEqual(final.state, { message: "Cycle complete", title: "Washing Machine", progress: 3600, progress_max: 3600, icon: "mdi:washing-machine", color: "#4CAF50" });
  });

  test("EV charging and an Aivi segmented bar, updated together, converge", async () => {
    const gw = await gateway();
    const c = client(gw, "phone");
    c.start();
    await live(c);
    for (let p = 0; p <= 100; p += 5) {
      await gw.push("phone", ev(p));
      await gw.push("phone", segmented(Math.min(1, p / 100)));
    }
    await converged(c, gw);
    assert.equal(c.state.activities["ev-charging"].state.critical_text, "100%");
    const template = c.state.activities.supercharger.state.template as any;
    assert.equal(template.progress.value, 1);
    assert.equal(template.progress.segments[1].track_fill, "hatched");
  });

  test("a connection cut mid-stream resumes by replay and converges", async () => {
    const gw = await gateway();
    const proxy = await new CuttableProxy(gw.port).listen();
    const c = client(gw, "phone", {}, proxy.port);
    const replays = record(c, "replay");
    c.start();
    await live(c);
    for (let i = 0; i < 120; i++) {
      await gw.push("phone", { title: "T", message: `m${i}`, data: { tag: `t${i % 4}`, live_update: true, progress: i, progress_max: 120 } });
      if (i === 40 || i === 80) {
        await eventually(() => assert.equal(c.status, "live"));
        assert.ok(proxy.cut() > 0);
      }
    }
    await converged(c, gw);
    assert.ok(replays.length >= 2, `resumed by replay (${replays.length})`);
    proxy.close();
  });

  test("a clean restart (SIGTERM): 1001, the client comes back and resumes in the same epoch", async () => {
    const gw = await gateway();
    const c = client(gw, "phone");
    const replays = record(c, "replay");
    const statuses = record(c, "status");
    c.start();
    await live(c);
    for (const payload of WASHER.slice(0, 2)) await gw.push("phone", payload);
    await converged(c, gw);
    const { epoch, seq } = c.state;
    await gw.stop("SIGTERM");
    await eventually(() => assert.ok(statuses.some((s) => s.status === "offline" && s.detail.code === 1001)));
    await gw.start();
    // The gateway keeps no resume history across a restart: a client that was caught up replays (nothing),
    // one that was behind gets a snapshot of the same epoch.
    await eventually(() => assert.ok(replays.some((r) => r.from === seq), "resumed by replay from the seq it held"));
    await gw.push("phone", WASHER[2]);
    await converged(c, gw);
    assert.equal(c.state.epoch, epoch, "a clean stop keeps the epoch");
  });

  test("a kill -9 restart: a new epoch, a snapshot, the same picture", async () => {
    const gw = await gateway();
    const c = client(gw, "phone");
    const snapshots = record(c, "snapshot");
    c.start();
    await live(c);
    await gw.push("phone", ev(40));
    await gw.push("phone", WASHER[0]);
    await converged(c, gw);
    const epoch = c.state.epoch;
    await gw.stop("SIGKILL");
    await gw.start();
    await gw.push("phone", ev(45));
    await converged(c, gw);
    assert.notEqual(c.state.epoch, epoch);
    assert.equal(snapshots.at(-1)!.epoch, c.state.epoch);
    assert.equal(c.state.activities["ev-charging"].state.progress, 45);
  });

  test("register with supports_live_activities is accepted; an observer sees the device's frames and never acks", async () => {
    const gw = await gateway();
    const observer = client(gw, "phone", { role: "observer", token: gw.admin, device: "phone", store: undefined });
    const devices = record(observer, "device");
    const seen = record(observer, "activity");
    observer.start();
    await live(observer);
    const c = client(gw, "phone", { register: { push_token: "tok-phone", push_url: "https://relay.invalid/relay" }, supportsLiveActivities: true });
    const registered = record(c, "registered");
    c.start();
    await live(c);
    await eventually(() => assert.deepEqual(registered.map((r) => r.push_token), ["tok-phone"]));
    await gw.push("phone", ev(70));
    await converged(c, gw);
    await eventually(() => assert.ok(seen.some((e) => e.device === "phone" && e.current?.state.progress === 70)));
    assert.deepEqual(observer.devices.get("phone")!.activities, c.state.activities);
    await eventually(() => assert.ok(devices.some((d) => d.device === "phone" && d.connected === true)));
    const listed = (await gw.request("GET", "/v1/devices")).body.devices.find((d: any) => d.id === "phone");
    assert.equal(listed.sessions, 1, "the observer does not count as a session of the device");
    assert.equal(socketsOf.get(observer)![0].acked, 0, "observers never ack");
  });

  test("lanpush.v2: chosen by the subprotocol, or named in auth by a socket that offers none; activity frames are arrays", async () => {
    const gw = await gateway();
    const plain: CountingSocket[] = [];
    // The Scripting app's case: a socket that cannot offer subprotocols.
    const observer = client(gw, "phone", {
      role: "observer", token: gw.admin, store: undefined,
      createSocket: (url) => {
        const s = new CountingSocket(url, []);
        plain.push(s);
        return s;
      },
    });
    const seen = record(observer, "activity");
    observer.start();
    await live(observer);
    const c = client(gw, "phone");
    c.start();
    await live(c);
    await gw.push("phone", ev(10));
    await gw.push("phone", ev(20));
    await converged(c, gw);
    await eventually(() => assert.ok(seen.some((e) => e.device === "phone" && e.current?.state.progress === 20)));

    const device = socketsOf.get(c)![0];
    const authOk = (s: CountingSocket) => s.received.find((f) => f.type === "auth_ok");
    assert.equal(authOk(device).version, "lanpush.v2", `auth_ok ${JSON.stringify(authOk(device))}: this lanpushd does not speak lanpush.v2`);
    assert.equal(device.protocol, "lanpush.v2", "the gateway picked the first subprotocol offered");
    assert.equal(plain[0].protocol, "", "no subprotocol offered, none answered");
    assert.equal(authOk(plain[0]).version, "lanpush.v2", "the auth frame's version chose it");
    for (const [who, socket] of [["device", device], ["observer", plain[0]]] as const) {
      const activityTexts = socket.texts.filter((t) => ["start", "update"].includes(parseFrame(t)?.type ?? ""));
      assert.ok(activityTexts.length >= 1, `${who}: ${socket.texts.join("\n")}`);
      for (const text of activityTexts) assert.ok(Array.isArray(JSON.parse(text)), `${who}: ${text}`);
      for (const text of socket.texts.filter((t) => ["auth_ok", "synced"].includes(parseFrame(t)?.type ?? ""))) {
        assert.ok(!Array.isArray(JSON.parse(text)), `${who}: ${text} stays an object`);
      }
    }
    const observed = plain[0].texts.map((t) => JSON.parse(t)).filter((f) => Array.isArray(f));
    assert.ok(observed.every((f) => f[4]?.device_id === "phone"), `an observer's device_id is in the extras: ${JSON.stringify(observed)}`);
  });

  test("4001: a wrong token stops the client for good", async () => {
    const gw = await gateway();
    gw.tokens.intruder = "not-a-token";
    const c = client(gw, "intruder", { backoff: { initial: 50, max: 100 } });
    const rejected = record(c, "auth_rejected");
    c.start();
    await eventually(() => assert.equal(c.status, "auth_rejected"));
    await sleep(1500);
    assert.equal(socketsOf.get(c)!.length, 1, "one attempt, no retry");
    assert.equal(rejected.length, 1);
  });

  test("a handler that takes 100 ms per event slows the flow, never holds more than the window, and converges", async () => {
    const gw = await gateway({ session: { window: 32 } });
    const c = client(gw, "phone");
    let handled = 0;
    c.on("activity", async () => {
      handled += 1;
      await sleep(100);
    });
    c.start();
    await live(c);
    const updates = 150;
    for (let i = 0; i < updates; i++) {
      await gw.push("phone", { title: "Slow", message: `m${i}`, data: { tag: `s${i % 3}`, live_update: true, progress: i, progress_max: updates } });
    }
    await converged(c, gw, "phone", 30_000);
    const sockets = socketsOf.get(c)!;
    assert.equal(sockets.length, 1, "the session was never closed (no ack timeout)");
    const socket = sockets[0];
    assert.ok(socket.maxUnacked <= 32, `held ${socket.maxUnacked} unacknowledged frames`);
    assert.ok(handled < updates, `merged while the handler was busy: ${handled} events for ${updates} updates`);
  });
});
