import type * as S from "scripting";
import { record } from "./record.js";
import { satisfies } from "./satisfies.js";
import { app, launch, openURL } from "./runtime.js";

/**
 * The app's services the script uses, each held to `scripting.d.ts` with `satisfies`: local notifications (and
 * what a tap on one does), `Storage` and `Keychain` (both outlive a run, as on a phone), `BackgroundKeeper` (Pro
 * only; iOS may end the background time), the QR code scanner and `fetch` over Node's.
 */

// ---- Notifications ----

type ScheduleOptions = Parameters<typeof S.Notification.schedule>[0];

export const delivered: (S.NotificationInfo & { tapAction: ScheduleOptions["tapAction"] })[] = [];
let notificationId = 0;

export const Notification = satisfies<typeof S.Notification>()({
  async schedule(options: ScheduleOptions): Promise<boolean> {
    record("Notification.schedule", options);
    delivered.push({
      date: new Date(),
      request: {
        identifier: `n${++notificationId}`,
        content: {
          title: options.title, subtitle: options.subtitle ?? "", body: options.body ?? "", userInfo: options.userInfo ?? {},
          threadIdentifier: options.threadIdentifier ?? "",
        },
      },
      tapAction: options.tapAction,
    });
    return true;
  },
  async getAllDeliveredsOfCurrentScript(): Promise<S.NotificationInfo[]> {
    record("Notification.getAllDeliveredsOfCurrentScript");
    return delivered.map(({ date, request }) => ({ date, request }));
  },
  async removeDelivereds(identifiers: string[]): Promise<void> {
    record("Notification.removeDelivereds", identifiers);
    for (const id of identifiers) {
      const i = delivered.findIndex((d) => d.request.identifier === id);
      if (i >= 0) delivered.splice(i, 1);
    }
  },
});

/**
 * The user taps a delivered notification. Its tap action decides (the app's `Notification.schedule` docs): none
 * does nothing, an URL is opened, and without one Scripting runs the script that scheduled it — a new instance.
 */
export async function tapNotification(identifier: string): Promise<void> {
  const n = delivered.find((d) => d.request.identifier === identifier);
  if (!n) throw new Error(`no delivered notification ${identifier}`);
  const tap = n.tapAction;
  if (tap === "none") return;
  if (tap && tap.type === "openURL") return openURL(tap.url);
  return launch({});
}

// ---- Storage and Keychain ----

export const storage = new Map<string, string>();
export const keychain = new Map<string, string>();

export const StorageFake = satisfies<typeof Storage>()({
  set<T>(key: string, value: T): boolean {
    storage.set(key, JSON.stringify(value));
    return true;
  },
  get<T>(key: string): T | null {
    const v = storage.get(key);
    return v === undefined ? null : (JSON.parse(v) as T);
  },
  remove(key: string): void {
    storage.delete(key);
  },
  contains(key: string): boolean {
    return storage.has(key);
  },
});

export const KeychainFake = satisfies<typeof Keychain>()({
  set(key: string, value: string): boolean {
    keychain.set(key, value);
    return true;
  },
  get(key: string): string | null {
    return keychain.get(key) ?? null;
  },
  remove(key: string): boolean {
    return keychain.delete(key);
  },
  contains(key: string): boolean {
    return keychain.has(key);
  },
});

// ---- BackgroundKeeper ----

export const keeper = { active: false };

export const BackgroundKeeperFake = satisfies<typeof BackgroundKeeper>()({
  get isActive(): Promise<boolean> {
    return Promise.resolve(keeper.active);
  },
  async keepAlive(): Promise<boolean> {
    record("BackgroundKeeper.keepAlive");
    // A Pro feature (the app's documentation index marks it so): without Pro the request is refused.
    keeper.active = app.pro;
    return keeper.active;
  },
  async stopKeepAlive(): Promise<void> {
    record("BackgroundKeeper.stopKeepAlive");
    keeper.active = false;
  },
});

/** iOS ends the background time (memory pressure, its own limits): the app is suspended until it is opened again. */
export function suspendByIOS(): void {
  keeper.active = false;
}

// ---- QR code scanner ----

/** What the next `QRCode.scan()` reads (null: the user cancelled). */
export const scans: (string | null)[] = [];

export const QRCodeFake = satisfies<typeof QRCode>()({
  async scan(): Promise<string | null> {
    record("QRCode.scan");
    return scans.shift() ?? null;
  },
});

// ---- Network: the app's fetch over Node's ----

/** Node's fetch behind the app's signature (`timeout` in seconds); every request is recorded. */
export const fetch = satisfies<typeof S.fetch>()(async (url, init) => {
  record("fetch", url, init);
  const signal = init?.timeout ? (globalThis as any).AbortSignal.timeout(init.timeout * 1000) : undefined;
  const r = await (globalThis as any).fetch(url, { method: init?.method, headers: init?.headers, body: init?.body, signal });
  return { status: r.status, json: () => r.json() };
});

export function resetServices(): void {
  delivered.length = 0;
  storage.clear();
  keychain.clear();
  scans.length = 0;
  keeper.active = false;
}
