import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { register } from "node:module";
import { join } from "node:path";
import { after, afterEach, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { LanpushClient } from "../../typescript/src/client.js";
import { MemoryStore } from "../../typescript/src/store.js";
import { sleep } from "../../typescript/test/support/fakes.js";
import { eventually, Gateway } from "../../typescript/test/support/gateway.js";
import { ev, segmented, WASHER, WASHER_CLEAR } from "../../typescript/test/support/payloads.js";
import { repoRoot } from "../../typescript/test/support/vectors.js";
import * as fake from "./fakeScripting.js";
import { all, ofType, region, texts } from "./tree.js";

/**
 * The committed Scripting-app bundle, run under Node against the fake app and the real lanpushd: what it asks
 * ActivityKit to do, what the Lock Screen and the island show, and what goes back to the gateway.
 */

register(new URL("./hooks.js", import.meta.url).href);
fake.install();

const SCRIPT_DIR = join(repoRoot(), "clients", "scripting");
const gateways: Gateway[] = [];
const witnesses: LanpushClient[] = [];
let runs = 0;

afterEach(async () => {
  // A failed test leaves its script running: stop it, so its client does not outlive the test.
  if (fake.currentPage()) await stopScript();
});

after(async () => {
  for (const w of witnesses) await w.stop();
  for (const g of gateways) await g.dispose();
});

async function gateway(): Promise<Gateway> {
  const gw = await new Gateway().start();
  gateways.push(gw);
  return gw;
}

/** Runs the bundled script as the app would, with the gateway's URL and the device token already saved. */
async function runScript(gw: Gateway | null): Promise<void> {
  fake.reset();
  if (gw) {
    fake.storage.set("lanpush.url", JSON.stringify(`127.0.0.1:${gw.port}`));
    fake.storage.set("lanpush.token", JSON.stringify(gw.tokens.phone));
  }
  await import(`${pathToFileURL(join(SCRIPT_DIR, "dist", "index.tsx")).href}?run=${++runs}`);
  await eventually(() => assert.ok(fake.currentPage(), "the page is shown"));
}

async function stopScript(): Promise<void> {
  fake.closePage();
  await eventually(() => assert.ok(fake.calls.some((c) => c.api === "Script.exit")));
}

function button(title: string): fake.Rendered {
  const b = ofType(fake.currentPage(), "Button").find((x) => x.props.title === title);
  assert.ok(b, `a button "${title}"`);
  return b;
}

function field(title: string): fake.Rendered {
  const f = ofType(fake.currentPage(), "TextField").find((x) => x.props.title === title);
  assert.ok(f, `a field "${title}"`);
  return f;
}

function pageTexts(): string[] {
  return texts(fake.currentPage());
}

async function scriptLive(): Promise<void> {
  await eventually(() => assert.ok(pageTexts().includes("Live"), pageTexts().join(" | ")));
}

/** A second client of the same device, on Node's own WebSocket: an independent witness. */
async function witness(gw: Gateway): Promise<LanpushClient> {
  const w = new LanpushClient({ url: gw.url, token: gw.tokens.phone, store: new MemoryStore(), WebSocket: (globalThis as any).NodeWebSocket });
  witnesses.push(w);
  w.start();
  await eventually(() => assert.equal(w.status, "live"));
  return w;
}

function activity(index = 0): fake.FakeLiveActivity<any> {
  const a = fake.FakeLiveActivity.instances[index];
  assert.ok(a, `Live Activity #${index} was created`);
  return a;
}

describe("the Scripting script", { concurrency: false }, () => {
  test("the bundle is what the sources build to", () => {
    const r = spawnSync(join(SCRIPT_DIR, "build.sh"), ["--check"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
  });

  test("the washer cycle: one start, updates, one end dismissed at once; the Lock Screen follows HA's rules", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    assert.ok(fake.calls.some((c) => c.api === "BackgroundKeeper.keepAlive"), "kept alive in the background");
    await gw.push("phone", WASHER[0]);
    await gw.push("phone", WASHER[1]);
    await eventually(() => assert.equal(activity().calls.length, 2));
    const a = activity();
    assert.deepEqual(a.calls.map((c) => c.method), ["start", "update"]);
    assert.equal(a.calls[0].contentState.title, "Washing Machine");

    const rinse = a.rendered();
    const lock = region(rinse, "content");
    assert.ok(texts(lock).includes("Washing Machine"), "the title is the header");
    assert.ok(texts(lock).includes("25%"), "900 of 3600 shows 25% top right");
    assert.ok(!texts(lock).includes("Rinsing · 1 of 2"), "the timer replaces the message");
    const [timer] = ofType(lock, "DateLabel");
    assert.equal(timer.props.style, "timer");
    const countdownEnd = a.calls[1].contentState.state.countdown_end;
    assert.equal(timer.props.date.getTime(), countdownEnd * 1000);
    assert.equal(ofType(lock, "ProgressView")[0].props.value, 0.25);
    assert.equal(ofType(lock, "ProgressView")[0].props.tint, "#2196F3", "the bar takes the icon color");
    assert.equal(ofType(lock, "Image")[0].props.systemName, "washer", "mdi:washing-machine as an SF Symbol");
    assert.equal(all(lock)[0].props.activityBackgroundTint, "#000000", "black by default");
    assert.equal(ofType(lock, "Text")[0].props.foregroundStyle, "#FFFFFF", "text contrasting the background");

    await gw.push("phone", WASHER[2]);
    await eventually(() => assert.equal(a.calls.length, 3));
    assert.ok(texts(region(a.rendered(), "content")).includes("Cycle complete"), "no chronometer: the message is back");
    const deleted = await gw.request("DELETE", "/v1/activities/washer_cycle?dismissal=immediate&device=phone");
    assert.equal(deleted.status, 200);
    await eventually(() => assert.equal(a.calls.at(-1)!.method, "end"));
    await sleep(200);
    assert.deepEqual(a.calls.map((c) => c.method), ["start", "update", "update", "end"]);
    assert.equal(a.calls[3].options.dismissTimeInterval, 0);
    assert.equal(fake.FakeLiveActivity.instances.length, 1, "one Live Activity per tag");
    await stopScript();
  });

  test("lanpush.v2 through the app's socket: named in the auth frame; the gateway's array frames start and update the Live Activity", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    // The app's WebSocket offers no subprotocol: only the auth frame's version can have chosen v2.
    const socket = fake.sockets.at(-1)!;
    assert.deepEqual(JSON.parse(socket.sent[0]), { type: "auth", token: gw.tokens.phone, version: "lanpush.v2" });
    await gw.push("phone", WASHER[0]);
    await gw.push("phone", WASHER[1]);
    await eventually(() => assert.equal(activity().calls.length, 2));
    const a = activity();
    assert.equal(a.calls[1].contentState.state.progress, 900);
    assert.ok(texts(region(a.rendered(), "content")).includes("25%"));
    const arrays = socket.delivered.map((t) => JSON.parse(t)).filter((f) => Array.isArray(f));
    assert.deepEqual(arrays.map((f) => f[0]), ["start", "update"], "the gateway sent arrays, and the script applied them");
    await stopScript();
  });

  test("clear_notification ends the activity, visible for what is left of its dismissal time", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", WASHER[0]);
    await eventually(() => assert.equal(activity().calls.length, 1));
    await gw.push("phone", WASHER_CLEAR);
    await eventually(() => assert.equal(activity().calls.at(-1)!.method, "end"));
    const listed = (await gw.activities("phone")).washer_cycle;
    const expected = listed ? Math.max(0, Math.round(listed.dismissal_date - Date.now() / 1000)) : 0;
    const got = activity().calls.at(-1)!.options.dismissTimeInterval;
    assert.ok(Math.abs(got - expected) <= 2, `dismissTimeInterval ${got}, the gateway's dismissal date leaves ${expected}`);
    await stopScript();
  });

  test("the compact island always shows critical_text; the Lock Screen shows the percentage instead", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", {
      title: "Dishwasher", message: "Pre-wash in progress",
      data: { tag: "dishwasher", live_update: true, critical_text: "Pre-wash", progress: 20, progress_max: 100, notification_icon: "mdi:dishwasher", notification_icon_color: "#26C6DA", background_color: "#FFFFFF" },
    });
    await eventually(() => assert.equal(activity().calls.length, 1));
    const tree = activity().rendered();
    assert.deepEqual(texts(region(tree, "compactTrailing")), ["Pre-wash"]);
    const lock = region(tree, "content");
    assert.ok(texts(lock).includes("20%") && !texts(lock).includes("Pre-wash"));
    assert.ok(texts(lock).includes("Pre-wash in progress"));
    assert.equal(all(lock)[0].props.activityBackgroundTint, "#FFFFFF");
    assert.equal(ofType(lock, "Text")[0].props.foregroundStyle, "#000000", "dark text on a light card");
    assert.equal(ofType(region(tree, "compactLeading"), "Image")[0].props.systemName, "dishwasher");
    await stopScript();
  });

  test("a dismissal on the phone reaches the gateway: every session sees the activity dismissed", async () => {
    const gw = await gateway();
    const w = await witness(gw);
    const dismissed: string[] = [];
    w.on("dismissed", (e) => {
      dismissed.push(e.tag);
    });
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", ev(45));
    await eventually(() => assert.equal(activity().calls.length, 1));
    activity().userDismiss();
    await eventually(() => assert.deepEqual(dismissed, ["ev-charging"]));
    assert.deepEqual(await gw.activities("phone"), {});
    await sleep(200);
    assert.deepEqual(activity().calls.map((c) => c.method), ["start"], "the script does not end what the user dismissed");
    await stopScript();
  });

  test("stale date in milliseconds, relevance and alert on updates; a new activity under the tag replaces the old one", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    const stale = Math.round(Date.now() / 1000) + 3600;
    await gw.push("phone", { ...ev(50), data: { ...ev(50).data, stale_date: stale, relevance_score: 0.75 } });
    await eventually(() => assert.equal(activity().calls.length, 1));
    await gw.push("phone", { ...ev(55), data: { ...ev(55).data, alert: { title: "EV", body: "55 % reached" } } });
    await eventually(() => assert.equal(activity().calls.length, 2));
    assert.deepEqual(activity().calls[0].options, { staleDate: stale * 1000, relevanceScore: 0.75 });
    assert.deepEqual(activity().calls[1].options.alert, { title: "EV", body: "55 % reached" });
    await gw.request("DELETE", "/v1/activities/ev-charging?dismissal=600&device=phone");
    await eventually(() => assert.equal(activity().calls.at(-1)!.method, "end"));
    assert.ok(Math.abs(activity().calls.at(-1)!.options.dismissTimeInterval - 600) <= 2);
    await gw.push("phone", ev(5));
    await eventually(() => assert.equal(fake.FakeLiveActivity.instances.length, 2));
    await eventually(() => assert.equal(activity(1).calls[0]?.method, "start"));
    await stopScript();
  });

  test("Aivi templates: a layered segmented bar with a hatched track, a monitor with a live timer", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", segmented(0.9));
    await eventually(() => assert.equal(activity().calls.length, 1));
    const lock = region(activity().rendered(), "content");
    assert.ok(texts(lock).includes("90%") && texts(lock).includes("3 min left"), "header values");
    assert.ok(texts(lock).includes("Standard") && texts(lock).includes("Extended"), "labels under the segments");
    const rects = ofType(lock, "RoundedRectangle");
    assert.ok(rects.some((r) => r.props.stroke === "systemGray"), "the hatched track is drawn as an outline");
    const fills = rects.filter((r) => r.props.fill === "systemGreen").map((r) => r.props.frame.width);
    assert.equal(fills.length, 2);
    assert.ok(fills[0] > fills[1] && fills[1] > 0, `the second segment is half full: ${fills}`);
    assert.deepEqual(texts(region(activity().rendered(), "compactTrailing")), ["90%"], "compact_value");
    const until = new Date(Date.now() + 20 * 60_000).toISOString();
    await gw.push("phone", {
      title: "Vacuum", message: "Mopping",
      data: { tag: "vacuum", live_update: true, template: { template: "monitor", icon: "robotic.vacuum", primary_column: "right", left_column: { value: { value: "Mopping", text_color: "indigo" } }, right_column: { header: "Done in", value: { value: until, formatter: "time_until" } } } },
    });
    await eventually(() => assert.equal(activity(1).calls.length, 1));
    const monitor = region(activity(1).rendered(), "content");
    assert.equal(ofType(monitor, "DateLabel")[0].props.date.getTime(), Date.parse(until));
    assert.equal(ofType(monitor, "Text").find((t) => t.children[0] === "Mopping")!.props.foregroundStyle, "systemIndigo");
    assert.equal(ofType(monitor, "Image")[0].props.systemName, "robotic.vacuum");
    await stopScript();
  });

  test("plain notifications become local notifications, and a clear removes them", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", { title: "Front door", message: "Opened", data: { tag: "door", group: "doors" } });
    await eventually(() => assert.ok(fake.calls.some((c) => c.api === "Notification.schedule")));
    const scheduled = fake.calls.find((c) => c.api === "Notification.schedule")!.args[0];
    assert.equal(scheduled.title, "Front door");
    assert.equal(scheduled.body, "Opened");
    assert.equal(scheduled.threadIdentifier, "doors");
    assert.equal(scheduled.userInfo.tag, "door");
    await eventually(() => assert.ok(pageTexts().includes("Front door: Opened"), "listed on the page too"));
    await gw.push("phone", { message: "clear_notification", data: { tag: "door" } });
    await eventually(() => assert.equal(fake.delivered.length, 0));
    await eventually(() => assert.ok(!pageTexts().includes("Front door: Opened")));
    await stopScript();
  });

  test("closing the script ends and dismisses its activities and releases the keep-alive", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", WASHER[1]);
    await gw.push("phone", ev(60));
    await eventually(() => assert.equal(fake.FakeLiveActivity.instances.length, 2));
    await eventually(() => assert.ok(fake.FakeLiveActivity.instances.every((a) => a.calls.length >= 1)));
    await stopScript();
    for (const a of fake.FakeLiveActivity.instances) {
      const last = a.calls.at(-1)!;
      assert.equal(last.method, "end");
      assert.equal(last.options.dismissTimeInterval, 0);
    }
    assert.ok(fake.calls.some((c) => c.api === "BackgroundKeeper.stopKeepAlive"));
  });

  test("first run: the page asks for the gateway and token, saves them, connects", async () => {
    const gw = await gateway();
    await runScript(null);
    assert.ok(pageTexts().includes("Pair this phone, or enter the gateway and a device token"));
    const fields = ofType(fake.currentPage(), "TextField");
    fields.find((f) => f.props.title === "URL")!.props.onChanged(`ws://127.0.0.1:${gw.port}`);
    fields.find((f) => f.props.title === "Device token")!.props.onChanged(gw.tokens.phone);
    ofType(fake.currentPage(), "Button").find((b) => b.props.title === "Connect")!.props.action();
    await scriptLive();
    assert.equal(JSON.parse(fake.storage.get("lanpush.token")!), gw.tokens.phone);
    await stopScript();
  });

  test("pairing by scanning the QR code: the code is redeemed once, the phone becomes the device", async () => {
    const gw = await gateway();
    const made = await gw.request("POST", "/v1/pairings", { device: "iphone", name: "iPhone" });
    assert.equal(made.status, 201);
    await runScript(null);
    fake.scans.push(made.body.url);
    button("Scan the pairing QR code").props.action();
    await scriptLive();
    assert.ok(fake.calls.some((c) => c.api === "QRCode.scan"));
    const redeemed = fake.calls.filter((c) => c.api === "fetch");
    assert.equal(redeemed.length, 1);
    assert.equal(redeemed[0].args[0], `http://127.0.0.1:${gw.port}/v1/pair`);
    assert.equal(JSON.parse(fake.storage.get("lanpush.url")!), `127.0.0.1:${gw.port}`, "the address that answered is kept");
    const devices = await gw.request("GET", "/v1/devices");
    assert.ok(devices.body.devices.some((d: any) => d.id === "iphone" && d.connected), JSON.stringify(devices.body));
    await gw.push("iphone", WASHER[0]);
    await eventually(() => assert.equal(activity().calls[0]?.method, "start"));
    // The same code again (scanned twice) is refused and says so; the session goes on.
    fake.scans.push(made.body.url);
    button("Scan the pairing QR code").props.action();
    await eventually(() => assert.ok(pageTexts().some((t) => t.startsWith("That code is unknown, already used or expired")), pageTexts().join(" | ")));
    assert.ok(pageTexts().includes("Live"));
    await stopScript();
  });

  test("pairing with the short code typed beside the gateway's address; a cancelled scan does nothing", async () => {
    const gw = await gateway();
    const made = await gw.request("POST", "/v1/pairings", { device: "ipad" });
    await runScript(null);
    button("Scan the pairing QR code").props.action();  // nothing queued: the user cancelled the scanner
    await sleep(100);
    assert.ok(!fake.calls.some((c) => c.api === "fetch"));
    field("URL").props.onChanged("127.0.0.1:9");  // loopback, nothing listening
    field("Pairing URL or short code").props.onChanged("wxyz-0000");
    button("Pair").props.action();
    await eventually(() => assert.ok(pageTexts().some((t) => /no gateway answered|aborted|fetch failed/i.test(t)), pageTexts().join(" | ")), 15_000);
    field("URL").props.onChanged(`127.0.0.1:${gw.port}`);
    field("Pairing URL or short code").props.onChanged(made.body.short_code.toLowerCase());
    button("Pair").props.action();
    await scriptLive();
    const devices = await gw.request("GET", "/v1/devices");
    assert.ok(devices.body.devices.some((d: any) => d.id === "ipad" && d.connected));
    await stopScript();
  });

  test("a wrong token shows as rejected and is not retried", async () => {
    const gw = await gateway();
    fake.reset();
    await runScript(null);
    const fields = ofType(fake.currentPage(), "TextField");
    fields.find((f) => f.props.title === "URL")!.props.onChanged(`127.0.0.1:${gw.port}`);
    fields.find((f) => f.props.title === "Device token")!.props.onChanged("wrong");
    const before = fake.sockets.length;
    ofType(fake.currentPage(), "Button").find((b) => b.props.title === "Connect")!.props.action();
    await eventually(() => assert.ok(pageTexts().some((t) => t.startsWith("Token rejected")), pageTexts().join(" | ")));
    await sleep(1500);
    assert.equal(fake.sockets.length - before, 1, "one attempt: the app's socket reports no close code, auth_invalid decides");
    await stopScript();
  });
});
