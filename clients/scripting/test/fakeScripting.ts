/**
 * A stand-in for the Scripting app under Node: the `scripting` module (what the hooks resolve `import … from
 * "scripting"` to) and the app's globals, exactly the surface `scripting.d.ts` declares — every part is held to its
 * declaration with `satisfies` — plus what a phone does around a script: a Lock Screen that outlives it, runs that
 * can be minimized, resumed and killed, settings the user switches. Tests drive it through the helpers exported here.
 */
import { createElement, Fragment } from "./fake/render.js";
import { forgetInstances, resetLiveActivities } from "./fake/liveActivity.js";
import { calls } from "./fake/record.js";
import { resetRuntime, scriptContext, ScriptingWebSocketFake } from "./fake/runtime.js";
import { BackgroundKeeperFake, KeychainFake, QRCodeFake, resetServices, StorageFake } from "./fake/services.js";

export type { Rendered } from "./fake/render.js";
export {
  Button, createElement, DateLabel, Fragment, HStack, Image, List, LiveActivityUI, LiveActivityUIExpandedBottom,
  LiveActivityUIExpandedCenter, LiveActivityUIExpandedLeading, LiveActivityUIExpandedTrailing, NavigationStack,
  ProgressView, render, RoundedRectangle, Section, SecureField, Spacer, Text, TextField, TimerIntervalLabel, useEffect,
  useState, VStack, ZStack,
} from "./fake/render.js";
export {
  device, FakeLiveActivity, LiveActivity, lockScreenActivities, renderedOn, setActivitiesEnabled, startForeignActivity,
} from "./fake/liveActivity.js";
export type { OnLockScreen } from "./fake/liveActivity.js";
export { calls } from "./fake/record.js";
export {
  activeRun, app, beginRun, currentPage, kill, Navigation, openScript, opened, openURL, pageState, parseRunURL, Script,
  setLauncher, swipeDown,
} from "./fake/runtime.js";
export { delivered, fetch, keeper, keychain, Notification, scans, storage, suspendByIOS, tapNotification } from "./fake/services.js";

/** Puts the app's globals in place (Node's own WebSocket is kept as `NodeWebSocket` for the fake to use). */
export function install(): void {
  const g = globalThis as any;
  if (!g.NodeWebSocket) g.NodeWebSocket = g.WebSocket;
  g.WebSocket = ScriptingWebSocketFake;
  g.Storage = StorageFake;
  g.Keychain = KeychainFake;
  g.BackgroundKeeper = BackgroundKeeperFake;
  g.QRCode = QRCodeFake;
  g.createElement = createElement;
  g.Fragment = Fragment;
  // The hooks give each run of the bundle its own timers and socket (fake/runtime.ts).
  g.__scriptingRun = scriptContext;
}

/** Forgets everything, the Lock Screen, Storage and Keychain included (between tests). */
export function reset(): void {
  resetRuntime();
  resetLiveActivities();
  resetServices();
  calls.length = 0;
}

/** A new run starts: what the previous one called is forgotten (the Lock Screen, Storage and Keychain are not). */
export function newRun(): void {
  calls.length = 0;
  forgetInstances();
}

export const sockets = ScriptingWebSocketFake.opened;
