import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, test } from "node:test";
import { sleep } from "../../typescript/test/support/fakes.js";
import { ev, segmented, WASHER, WASHER_CLEAR } from "../../typescript/test/support/payloads.js";
import * as fake from "./fakeScripting.js";
import { activity, button, eventually, field, gateway, pageTexts, runScript, SCRIPT_DIR, scriptLive, stopScript, witness } from "./harness.js";
import { all, ofType, region, texts } from "./tree.js";

/**
 * The committed Scripting-app bundle, run under Node against the fake app and the real lanpushd: what it asks
 * ActivityKit to do, what the Lock Screen and the island show, and what goes back to the gateway.
 */

describe("the Scripting script: what the Lock Screen shows", { concurrency: false }, () => {
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
    // A countdown, as the iOS app draws one: from now down to countdown_end.
    const [timer] = ofType(lock, "TimerIntervalLabel");
    const countdownEnd = a.calls[1].contentState.state.countdown_end;
    assert.equal(timer.props.to.getTime(), countdownEnd * 1000);
    assert.equal(timer.props.countsDown, true);
    assert.ok(Math.abs(timer.props.from.getTime() - Date.now()) < 5_000);
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
    assert.deepEqual(JSON.parse(socket.sent[0]), { type: "auth", token: gw.tokens.phone, version: "lanpush.v2", keepalive: 120 });
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

  test("stale date in milliseconds (else the iOS app's 30 minutes), relevance and alert on updates; a new activity under the tag replaces the old one", async () => {
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
    // No stale date of lanpush's: the iOS companion app's own rule, 30 minutes after the update.
    const appRule = activity().calls[1].options.staleDate - Date.now();
    assert.ok(appRule > 29 * 60_000 && appRule <= 30 * 60_000, `stale in ${appRule} ms`);
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

  test("first run: the page asks for the gateway and token, keeps the token in the Keychain, connects", async () => {
    const gw = await gateway();
    await runScript(null);
    assert.ok(pageTexts().includes("Pair this phone, or enter the gateway and a device token"));
    field("URL").props.onChanged(`ws://127.0.0.1:${gw.port}`);
    field("Device token").props.onChanged(gw.tokens.phone);
    assert.equal(field("Device token").type, "SecureField", "the token is typed into a secure field");
    button("Connect").props.action();
    await scriptLive();
    assert.equal(fake.keychain.get("lanpush.token"), gw.tokens.phone);
    assert.ok(![...fake.storage.values()].some((v) => v.includes(gw.tokens.phone)), "nothing in Storage holds the token");
    assert.equal(field("Device token").props.value, "", "the saved token is never shown");
    assert.ok(!JSON.stringify(fake.currentPage()).includes(gw.tokens.phone), "not even in a prompt");
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
    await runScript(null);
    field("URL").props.onChanged(`127.0.0.1:${gw.port}`);
    field("Device token").props.onChanged("wrong");
    const before = fake.sockets.length;
    button("Connect").props.action();
    await eventually(() => assert.ok(pageTexts().some((t) => t.startsWith("Token rejected")), pageTexts().join(" | ")));
    await sleep(1500);
    assert.equal(fake.sockets.length - before, 1, "one attempt: the app's socket reports no close code, auth_invalid decides");
    await stopScript();
  });

  test("the content state the iOS app draws: a changed title, decreasing bars, rounding, bounded count-ups, the tap", async () => {
    await runScript(null);
    const draw = (state: object, phase = "active") =>
      fake.render(fake.FakeLiveActivity.builders.get("LanpushActivity")!({ tag: "t", title: (state as any).title ?? "Washer", state, phase }));
    // The title an update carries is the header (HALockScreenView: state.title ?? attributes.title).
    assert.ok(texts(region(draw({ message: "", title: "Dryer" }), "content")).includes("Dryer"));
    // decreasing drains the bar; the percentage still says how far along it is.
    const lock = region(draw({ message: "m", progress: 30, progress_max: 100, progress_bar_direction: "Decreasing" }), "content");
    assert.equal(ofType(lock, "ProgressView")[0].props.value, 0.7);
    assert.ok(texts(lock).includes("30%"));
    // Fractional values rounded as the app decodes them, halves away from zero: 20.5 of 40.4 is 21 of 40.
    assert.ok(texts(region(draw({ message: "m", progress: 20.5, progress_max: 40.4 }), "content")).includes("53%"));
    assert.equal(ofType(region(draw({ message: "m", progress: 3, progress_max: 0.4 }), "content"), "ProgressView").length, 0, "max rounds to 0: no bar");
    // A bounded count-up (chronometer_start): counts up from its start, stops at its end, its bar fills.
    const now = Math.round(Date.now() / 1000);
    const up = region(draw({ message: "m", chronometer: true, chronometer_start: now - 60, countdown_end: now + 60 }), "content");
    const [label] = ofType(up, "TimerIntervalLabel");
    assert.equal(label.props.countsDown, false);
    assert.equal(label.props.from.getTime(), (now - 60) * 1000);
    assert.equal(label.props.to.getTime(), (now + 60) * 1000);
    assert.equal(ofType(up, "ProgressView")[0].props.countsDown, false);
    // A chronometer whose end has passed counts up from it, with no bar.
    const past = region(draw({ message: "m", chronometer: true, countdown_end: now - 90 }), "content");
    assert.equal(ofType(past, "DateLabel")[0].props.date.getTime(), (now - 90) * 1000);
    assert.equal(ofType(past, "ProgressView").length, 0);
    // A running countdown without progress: the system drains its bar from now to the end.
    const down = ofType(region(draw({ message: "m", chronometer: true, countdown_end: now + 600 }), "content"), "ProgressView")[0];
    assert.equal(down.props.timerTo.getTime(), (now + 600) * 1000);
    assert.equal(down.props.countsDown, true);
    // A tap: a web address as itself, a Home Assistant path through the companion app's navigate link.
    assert.equal(all(region(draw({ message: "m", url: "https://example.com/x" }), "content"))[0].props.widgetURL, "https://example.com/x");
    assert.equal(all(region(draw({ message: "m", url: "/lovelace/laundry" }), "content"))[0].props.widgetURL, "homeassistant://navigate/lovelace/laundry");
    await stopScript();
  });

  test("icons: any case, a family's symbol for an unlisted variant, a dot for the rest; Aivi icon objects keep their rendering", async () => {
    await runScript(null);
    const draw = (state: object) => fake.render(fake.FakeLiveActivity.builders.get("LanpushActivity")!({ tag: "t", title: "T", state, phase: "active" }));
    const symbol = (icon: string) => ofType(region(draw({ message: "", icon }), "compactLeading"), "Image")[0].props.systemName;
    assert.equal(symbol("mdi:Washing-Machine"), "washer");
    assert.equal(symbol("mdi:washing-machine-alert"), "washer", "the family's symbol");
    assert.equal(symbol("mdi:lightning-bolt"), "bolt.fill", "from the iOS app's own examples");
    assert.equal(symbol("mdi:battery-40"), "battery.50");
    assert.equal(symbol("mdi:zodiac-aquarius"), "circle.fill");
    const template = (icon: object) => ({ message: "", template: { template: "monitor", icon, left_column: { value: { value: "x" } } } });
    const [palette] = ofType(region(draw(template({ name: "thermometer.sun", rendering_mode: "palette", primary_color: "red", secondary_color: "orange", tertiary_color: "gray6", color_rendering: "gradient" })), "content"), "Image");
    assert.equal(palette.props.symbolRenderingMode, "palette");
    assert.deepEqual(palette.props.foregroundStyle, {
      primary: { color: "systemRed", gradient: true }, secondary: { color: "systemOrange", gradient: true }, tertiary: { color: "systemGray6", gradient: true },
    });
    const [hier] = ofType(region(draw(template({ name: "sun.max", rendering_mode: "hierarchical", primary_color: "#FF9800" })), "content"), "Image");
    assert.equal(hier.props.symbolRenderingMode, "hierarchical");
    assert.equal(hier.props.foregroundStyle, "#FF9800");
    await stopScript();
  });

  test("the content state holds what the Live Activity draws, within ActivityKit's 4 KB; what is cut is said on the page", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    const long = "Rinse ".repeat(1000);
    await gw.push("phone", { title: "Washing Machine", message: long, data: { tag: "washer_cycle", live_update: true, progress: 10, progress_max: 100, url: "/lovelace/laundry", progress_bar_direction: "decreasing" } });
    await eventually(() => assert.equal(activity().calls.length, 1));
    const sent = activity().calls[0].contentState;
    // UTF-8 bytes, counted by an independent route: each percent-escape of encodeURIComponent is one byte.
    const bytes = encodeURIComponent(JSON.stringify(sent)).replace(/%[0-9A-F]{2}/g, "x").length;
    assert.ok(bytes <= 3584 && bytes > 3000, `${bytes} bytes`);
    assert.ok(sent.state.message.endsWith("…") && sent.state.message.startsWith("Rinse Rinse"));
    assert.equal(sent.state.progress_bar_direction, "decreasing", "what the card draws is kept whole");
    assert.equal(sent.state.url, "/lovelace/laundry");
    assert.deepEqual(Object.keys(sent.state).sort(), ["message", "progress", "progress_bar_direction", "progress_max", "title", "url"]);
    await eventually(() => assert.ok(pageTexts().some((t) => t.startsWith("washer_cycle: shortened") && t.includes("state.message")), pageTexts().join(" | ")));
    // A short message again: nothing is cut, and the page says nothing.
    await gw.push("phone", { title: "Washing Machine", message: "Spinning", data: { tag: "washer_cycle", live_update: true, progress: 50, progress_max: 100 } });
    await eventually(() => assert.equal(activity().calls.at(-1)!.contentState.state.message, "Spinning"));
    await eventually(() => assert.ok(!pageTexts().some((t) => t.startsWith("washer_cycle: shortened"))));
    await stopScript();
  });

  test("through the gateway: the title an update carries, and a negative relative when as a bounded count-up", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", { title: "Workout", message: "Plank", data: { tag: "plank", live_update: true, chronometer: true, when: -60, when_relative: true } });
    await eventually(() => assert.equal(activity().calls.length, 1));
    const state = (await gw.activities("phone")).plank.state;
    assert.equal(state.countdown_end - state.chronometer_start, 60, "the gateway's bounded count-up: 60 s from now");
    const [label] = ofType(region(activity().rendered(), "content"), "TimerIntervalLabel");
    assert.equal(label.props.countsDown, false, "counts up");
    assert.equal(label.props.from.getTime(), state.chronometer_start * 1000);
    assert.equal(label.props.to.getTime(), state.countdown_end * 1000);
    await gw.push("phone", { title: "Workout · set 2", message: "Rest", data: { tag: "plank", live_update: true } });
    await eventually(() => assert.equal(activity().calls.length, 2));
    assert.equal((await gw.activities("phone")).plank.state.title, "Workout · set 2");
    assert.ok(texts(region(activity().rendered(), "content")).includes("Workout · set 2"), "the header follows the title");
    assert.equal(activity().calls.length, 2, "the same Live Activity, updated");
    await stopScript();
  });
});
