import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { scriptingRunURL } from "../../typescript/src/scriptingRunURL.js";
import { sleep } from "../../typescript/test/support/fakes.js";
import { ev, WASHER } from "../../typescript/test/support/payloads.js";
import * as fake from "./fakeScripting.js";
import { eventually, field, gateway, onLockScreen, pageTexts, runScript, scriptLive, stopScript } from "./harness.js";
import { region, texts } from "./tree.js";

/**
 * The script over a day on a phone: run again, killed with its Live Activities still on the Lock Screen, refused by
 * iOS, switched off and on, swiped away and brought back, paired from the Camera, tapped from a notification, kept
 * running (or not) in the background.
 */

const lockTexts = (a: fake.OnLockScreen) => texts(region(fake.renderedOn(a), "content"));

describe("the Scripting script over a day", { concurrency: false }, () => {
  test("a second run with stored state shows every activity it holds, though the replay brings nothing new", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", WASHER[1]);
    await gw.push("phone", ev(60));
    await eventually(() => assert.deepEqual(Object.keys(onLockScreen()).sort(), ["ev-charging", "washer_cycle"]));
    await stopScript();
    assert.deepEqual(onLockScreen(), {}, "Stop ends and dismisses them");

    await runScript(null, { fresh: false });
    await scriptLive();
    const socket = fake.sockets.at(-1)!;
    assert.ok(socket.delivered.some((t) => t.includes('"replay"')), "resumed from the stored state, by replay");
    await eventually(() => assert.deepEqual(Object.keys(onLockScreen()).sort(), ["ev-charging", "washer_cycle"]));
    const shown = onLockScreen();
    assert.equal(shown.washer_cycle.length, 1);
    assert.ok(lockTexts(shown.washer_cycle[0]).includes("25%"));
    assert.ok(lockTexts(shown["ev-charging"][0]).includes("60%"));
    await stopScript();
  });

  test("killed and run again: each tag keeps exactly one Live Activity, found again; strays are ended, other scripts' left alone", async () => {
    const gw = await gateway();
    const foreign = fake.startForeignActivity("SomeoneElsesTimer");
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", WASHER[1]);
    await gw.push("phone", ev(40));
    await eventually(() => assert.deepEqual(Object.keys(onLockScreen()).sort(), ["ev-charging", "washer_cycle"]));
    const washerId = onLockScreen().washer_cycle[0].id;
    fake.kill();
    // While the app is dead lanpush ends the charge; the Lock Screen still shows both, frozen.
    assert.equal((await gw.request("DELETE", "/v1/activities/ev-charging?dismissal=immediate&device=phone")).status, 200);
    assert.equal(fake.lockScreenActivities("LanpushActivity").length, 2);

    await runScript(null, { fresh: false });
    await scriptLive();
    assert.ok(fake.calls.some((c) => c.api === "LiveActivity.from" && c.args[0] === washerId), "found again by its id");
    await eventually(() => assert.deepEqual(Object.keys(onLockScreen()), ["washer_cycle"]), 5000);
    await gw.push("phone", WASHER[2]);
    await eventually(() => assert.ok(lockTexts(onLockScreen().washer_cycle[0]).includes("Cycle complete")));
    assert.equal(onLockScreen().washer_cycle.length, 1, "one Live Activity for washer_cycle, not a frozen one beside it");
    assert.equal(onLockScreen().washer_cycle[0].id, washerId);
    assert.ok(!fake.calls.some((c) => c.api === "LiveActivity.start"), "nothing started anew");
    assert.equal(foreign.state, "active");
    assert.deepEqual(foreign.history, [], "another script's Live Activity is never touched");
    await stopScript();
  });

  test("start() refused: the page says so, and the next update tries again", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    fake.device.refuseStarts = 1;
    await gw.push("phone", WASHER[0]);
    await eventually(() => assert.ok(pageTexts().some((t) => t.startsWith("Not on the Lock Screen yet") && t.includes("washer_cycle")), pageTexts().join(" | ")));
    assert.deepEqual(onLockScreen(), {});
    await gw.push("phone", WASHER[1]);
    await eventually(() => assert.equal(onLockScreen().washer_cycle?.length, 1));
    assert.ok(lockTexts(onLockScreen().washer_cycle[0]).includes("25%"), "started with the current state");
    await eventually(() => assert.ok(!pageTexts().some((t) => t.startsWith("Not on the Lock Screen yet"))));
    await stopScript();
  });

  test("Live Activities switched off: the page says how to turn them on; switched on, the held ones start", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    // iOS tells the app asynchronously; once the page says so, the script knows.
    fake.setActivitiesEnabled(false);
    await eventually(() => assert.ok(pageTexts().some((t) => t.startsWith("Live Activities are off for Scripting")), pageTexts().join(" | ")));
    await gw.push("phone", WASHER[1]);
    await eventually(async () => assert.ok((await gw.activities("phone")).washer_cycle));
    await sleep(300);
    assert.deepEqual(onLockScreen(), {});
    assert.ok(!fake.calls.some((c) => c.api === "LiveActivity.start"), `not even tried while off: ${fake.calls.map((c) => c.api).join(", ")}`);
    fake.setActivitiesEnabled(true);
    await eventually(() => assert.equal(onLockScreen().washer_cycle?.length, 1));
    assert.ok(lockTexts(onLockScreen().washer_cycle[0]).includes("25%"));
    await eventually(() => assert.ok(!pageTexts().some((t) => t.startsWith("Live Activities are off"))));
    await stopScript();
  });

  test("swiping the page down minimizes the script: it keeps mirroring; opening it brings the page back; Stop ends it", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    assert.ok(fake.calls.some((c) => c.api === "Script.enableMinimize" && c.args[0] === true));
    await gw.push("phone", WASHER[0]);
    await eventually(() => assert.equal(onLockScreen().washer_cycle?.length, 1));
    fake.swipeDown();
    assert.equal(fake.pageState(), "minimized");
    await gw.push("phone", WASHER[1]);
    await eventually(() => assert.ok(lockTexts(onLockScreen().washer_cycle[0]).includes("25%")), 5000);
    assert.ok(!fake.calls.some((c) => c.api === "Script.exit"));
    await fake.openScript();
    assert.equal(fake.pageState(), "shown");
    assert.ok(pageTexts().includes("Live"));
    await stopScript();
    assert.deepEqual(onLockScreen(), {});
    assert.ok(fake.calls.some((c) => c.api === "BackgroundKeeper.stopKeepAlive"));
  });

  test("without minimizing (Scripting's multiple windows mode) closing the page leaves the script running; a new run brings it back", async () => {
    const gw = await gateway();
    await runScript(gw);
    fake.app.minimization = false;
    await scriptLive();
    await gw.push("phone", WASHER[0]);
    await eventually(() => assert.equal(onLockScreen().washer_cycle?.length, 1));
    const sockets = fake.sockets.length;
    fake.swipeDown();
    assert.equal(fake.pageState(), "none");
    await gw.push("phone", WASHER[1]);
    await eventually(() => assert.ok(lockTexts(onLockScreen().washer_cycle[0]).includes("25%")), 5000);
    await fake.openScript();
    await eventually(() => assert.equal(fake.pageState(), "shown"));
    assert.equal(fake.sockets.length, sockets, "the same client: no second session");
    await stopScript();
  });

  test("pairing from the iPhone Camera: the run URL carries the pairing URL, which the script redeems", async () => {
    const gw = await gateway();
    const made = await gw.request("POST", "/v1/pairings", { device: "iphone", name: "iPhone" });
    assert.equal(made.status, 201);
    const runURL = scriptingRunURL(made.body.url);
    // What Scripting hands the script is exactly the pairing URL.
    assert.deepEqual(fake.parseRunURL(runURL), { name: "lanpush", query: { pair: made.body.url } });
    fake.reset();
    await fake.openURL(runURL);
    await scriptLive();
    const devices = await gw.request("GET", "/v1/devices");
    assert.ok(devices.body.devices.some((d: any) => d.id === "iphone" && d.connected), JSON.stringify(devices.body));
    assert.equal(fake.storage.get("lanpush.url"), JSON.stringify(`127.0.0.1:${gw.port}`));
    await gw.push("iphone", WASHER[0]);
    await eventually(() => assert.equal(onLockScreen().washer_cycle?.length, 1));
    // Scanned again while the script runs (minimized): the running instance resumes and pairs as the new device.
    fake.swipeDown();
    const again = await gw.request("POST", "/v1/pairings", { device: "ipad" });
    const sockets = fake.sockets.length;
    await fake.openURL(scriptingRunURL(again.body.url));
    assert.equal(fake.pageState(), "shown");
    await eventually(async () => {
      const d = await gw.request("GET", "/v1/devices");
      assert.ok(d.body.devices.some((x: any) => x.id === "ipad" && x.connected));
    });
    assert.equal(fake.sockets.length, sockets + 1, "the running instance reconnected as the new device; no second instance");
    await stopScript();
  });

  test("tapping a notification goes back to the running script: no second client", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    await gw.push("phone", { title: "Front door", message: "Opened", data: { tag: "door" } });
    await eventually(() => assert.equal(fake.delivered.length, 1));
    fake.swipeDown();
    const sockets = fake.sockets.length;
    await fake.tapNotification(fake.delivered[0].request.identifier);
    await eventually(() => assert.equal(fake.pageState(), "shown"));
    await sleep(300);
    assert.equal(fake.sockets.length, sockets, "no second session of the device");
    // A notification with a Home Assistant path opens the companion app there instead.
    await gw.push("phone", { title: "Laundry", message: "Done", data: { tag: "laundry", url: "/lovelace/laundry" } });
    await eventually(() => assert.equal(fake.delivered.length, 2));
    await fake.tapNotification(fake.delivered[1].request.identifier);
    assert.deepEqual(fake.opened, ["homeassistant://navigate/lovelace/laundry"]);
    await stopScript();
  });

  test("a token an older version kept in Storage moves to the Keychain", async () => {
    const gw = await gateway();
    fake.reset();
    fake.storage.set("lanpush.url", JSON.stringify(`127.0.0.1:${gw.port}`));
    fake.storage.set("lanpush.token", JSON.stringify(gw.tokens.phone));
    await runScript(null, { fresh: false });
    await scriptLive();
    assert.equal(fake.keychain.get("lanpush.token"), gw.tokens.phone);
    assert.equal(fake.storage.has("lanpush.token"), false);
    assert.ok(!pageTexts().some((t) => t.includes(gw.tokens.phone)));
    assert.match(field("Device token").props.prompt, /^saved: •+ \S{4}$/);
    await stopScript();
  });

  test("keepalive: the script asks for 120 s and says what the gateway granted", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    const socket = fake.sockets.at(-1)!;
    assert.equal(JSON.parse(socket.sent[0]).keepalive, 120);
    const authOk = JSON.parse(socket.delivered.find((t) => t.includes('"auth_ok"'))!);
    assert.equal(authOk.keepalive, 120, "within the gateway's default bounds (15–300 s)");
    assert.ok(pageTexts().includes("Keepalive 120 s: lanpush counts this phone gone about 130 s after it goes silent"), pageTexts().join(" | "));
    await stopScript();
  });

  test("the background: kept running with Pro; without it, or once iOS ends it, the page says what the phone will do", async () => {
    const gw = await gateway();
    await runScript(gw);
    await scriptLive();
    await eventually(() => assert.ok(pageTexts().some((t) => t.startsWith("Running in the background"))));
    fake.suspendByIOS();
    fake.swipeDown();
    await fake.openScript();
    await eventually(() => assert.ok(pageTexts().some((t) => t.startsWith("iOS ended the background time")), pageTexts().join(" | ")));
    assert.equal(fake.calls.filter((c) => c.api === "BackgroundKeeper.keepAlive").length, 2, "asked again");
    await stopScript();

    fake.reset();
    fake.app.pro = false;
    fake.storage.set("lanpush.url", JSON.stringify(`127.0.0.1:${gw.port}`));
    fake.keychain.set("lanpush.token", gw.tokens.phone);
    await runScript(null, { fresh: false });
    await scriptLive();
    await eventually(() => assert.ok(pageTexts().some((t) => t.startsWith("Background time needs Scripting Pro") && t.includes("freeze")), pageTexts().join(" | ")));
    await stopScript();
  });
});
