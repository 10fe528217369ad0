import assert from "node:assert/strict";
import { register } from "node:module";
import { join } from "node:path";
import { afterEach } from "node:test";
import { pathToFileURL } from "node:url";
import { LanpushClient } from "../../typescript/src/client.js";
import { MemoryStore } from "../../typescript/src/store.js";
import { eventually, Fleet, Gateway, GatewayOptions } from "../../typescript/test/support/gateway.js";
import { repoRoot } from "../../typescript/test/support/vectors.js";
import * as fake from "./fakeScripting.js";
import { ofType, texts } from "./tree.js";

/**
 * Running the committed Scripting bundle as the app would, against the fake app and a real lanpushd: a run is a new
 * instance of the script (`dist/index.tsx` imported again, with that run's own timers and sockets); the Lock Screen,
 * Storage and the Keychain carry over from one run to the next, as they do on a phone, until `fresh` starts over.
 */
register(new URL("./hooks.js", import.meta.url).href);
fake.install();

export const SCRIPT_DIR = join(repoRoot(), "clients", "scripting");
const fleet = new Fleet();

// A tap on a notification or a run URL with no live instance starts a new run, as Scripting does.
fake.setLauncher((query) => runScript(null, { fresh: false, query }));

afterEach(async () => {
  // A failed test leaves its script running: stop it, so its client does not outlive the test.
  if (fake.activeRun()) fake.kill();
});

export function gateway(options: GatewayOptions = {}): Promise<Gateway> {
  return fleet.gateway(options);
}

/**
 * Runs the bundled script. `fresh` (the default) starts from a phone that never ran it: nothing in Storage, the
 * Keychain or on the Lock Screen — then, with a gateway, its address and the phone's token already saved.
 */
export async function runScript(gw: Gateway | null, options: { fresh?: boolean; query?: Record<string, any>; name?: string } = {}): Promise<void> {
  if (options.fresh ?? true) {
    fake.reset();
    if (gw) {
      fake.storage.set("lanpush.url", JSON.stringify(`127.0.0.1:${gw.port}`));
      fake.keychain.set("lanpush.token", gw.tokens.phone);
    }
  } else {
    fake.newRun();
  }
  const run = fake.beginRun(options.query ?? {}, options.name);
  await import(`${pathToFileURL(join(SCRIPT_DIR, "dist", "index.tsx")).href}?run=${run}`);
  await eventually(() => assert.ok(fake.currentPage(), "the page is shown"));
}

/** The user taps Stop: the script ends its Live Activities and exits. */
export async function stopScript(): Promise<void> {
  button("Stop").props.action();
  await eventually(() => assert.ok(fake.calls.some((c) => c.api === "Script.exit")));
}

export function button(title: string): fake.Rendered {
  const b = ofType(fake.currentPage(), "Button").find((x) => x.props.title === title);
  assert.ok(b, `a button "${title}"`);
  return b;
}

/** A text field or secure field of the page, by its title. */
export function field(title: string): fake.Rendered {
  const f = [...ofType(fake.currentPage(), "TextField"), ...ofType(fake.currentPage(), "SecureField")].find((x) => x.props.title === title);
  assert.ok(f, `a field "${title}"`);
  return f;
}

export function pageTexts(): string[] {
  return texts(fake.currentPage());
}

export async function scriptLive(): Promise<void> {
  await eventually(() => assert.ok(pageTexts().includes("Live"), pageTexts().join(" | ")));
}

/** A second client of the same device, on Node's own WebSocket: an independent witness. */
export async function witness(gw: Gateway): Promise<LanpushClient> {
  const w = fleet.client(new LanpushClient({ url: gw.url, token: gw.tokens.phone, store: new MemoryStore(), WebSocket: (globalThis as any).NodeWebSocket }));
  w.start();
  await eventually(() => assert.equal(w.status, "live"));
  return w;
}

/** The Live Activity instance the running script made or found, in order. */
export function activity(index = 0): fake.FakeLiveActivity<any> {
  const a = fake.FakeLiveActivity.instances[index];
  assert.ok(a, `Live Activity #${index} was created`);
  return a;
}

/** This script's Live Activities on the Lock Screen (not dismissed), by tag, from their last content state. */
export function onLockScreen(): { [tag: string]: fake.OnLockScreen[] } {
  const out: { [tag: string]: fake.OnLockScreen[] } = {};
  for (const a of fake.lockScreenActivities("LanpushActivity")) {
    const tag = a.history.at(-1)?.contentState.tag ?? "?";
    (out[tag] ??= []).push(a);
  }
  return out;
}

export { eventually };
