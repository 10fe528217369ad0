import { Script } from "scripting";
import { LanpushClient } from "../../typescript/src/client";
import type { ConnectionStatus } from "../../typescript/src/events";
import type { Activity, HeldNotification } from "../../typescript/src/state";
import { sortedActivities } from "../../typescript/src/state";
import { ACTIVITY_NAME, LanpushActivity } from "./live_activity";
import { LocalNotifications } from "./localNotifications";
import { Mirror } from "./mirror";
import { pairDevice, pairingFailure } from "./pair";
import { ScriptingSocket } from "./socket";
import { loadSettings, saveSettings, ScriptingStorageStore, Settings, streamURL } from "./storage";

/**
 * The keepalive this script asks the gateway for, in seconds. Each of the gateway's pings wakes the phone's radio
 * (the default 10 s is 360 wakeups an idle hour); at 120 s it is 30 — plus the client's own ping every 240 s — and
 * a phone that vanished without a word (out of Wi-Fi range, suspended by iOS) counts as gone about 130 s later
 * (the interval plus the gateway's `session.ping_timeout`), which is when a `fallback` target takes over.
 */
export const PHONE_KEEPALIVE = 120;

/** Whether iOS keeps the script running when Scripting is not on screen (`BackgroundKeeper`). */
export type Keeper = "not requested" | "active" | "refused" | "ended";

/** A short, non-reversible name for a gateway and token, so the stored state of one never resumes another's. */
function fingerprint(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/** The running script: one lanpush client for the device, its mirror, and what the page shows. */
export class App {
  private client: LanpushClient | null = null;
  private mirror: Mirror | null = null;
  private notes: LocalNotifications | null = null;
  private readonly listeners = new Set<() => void>();
  status: ConnectionStatus | "not configured" | "stopped" = "not configured";
  detail = "";
  keeper: Keeper = "not requested";
  /** What the page's Gateway fields hold (the token field starts empty: the saved token is never shown). */
  draft: Settings;
  /** The last pairing's outcome, for the page. */
  pairing = "";

  constructor(public settings: Settings) {
    this.draft = { url: settings.url, token: "" };
  }

  get configured(): boolean {
    return this.settings.url !== "" && this.settings.token !== "";
  }

  get activities(): Activity[] {
    return this.client ? sortedActivities(this.client.state) : [];
  }

  /** Held plain notifications, newest first (the page lists them when local notifications are not delivered). */
  get notifications(): HeldNotification[] {
    return this.client ? [...this.client.state.notifications].reverse() : [];
  }

  get notificationsDelivered(): boolean {
    return this.notes?.delivered ?? true;
  }

  /** The gateway's ping interval granted for this session (seconds), or null (not connected, or an older gateway). */
  get keepalive(): number | null {
    return this.client?.keepalive ?? null;
  }

  get activitiesEnabled(): boolean | null {
    return this.mirror?.enabled ?? null;
  }

  /** Tags whose Live Activity iOS refused to start (tried again on their next update). */
  get refused(): string[] {
    return this.mirror ? [...this.mirror.refused] : [];
  }

  /** Tags whose content was shortened to fit ActivityKit's size limit, with the fields cut. */
  get cut(): [string, string[]][] {
    return this.mirror ? [...this.mirror.cut] : [];
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Connects with the current settings and asks iOS to keep the script running in the background. */
  async start(): Promise<void> {
    if (!this.configured) return;
    const client = new LanpushClient({
      url: streamURL(this.settings.url),
      token: this.settings.token,
      store: new ScriptingStorageStore(),
      storeKey: `lanpush.state.${fingerprint(`${this.settings.url}\n${this.settings.token}`)}`,
      createSocket: (url) => new ScriptingSocket(url),
      keepalive: PHONE_KEEPALIVE,
      // The app's own timers: they stop with the script.
      timers: { setTimeout: (callback, ms) => setTimeout(callback, ms), clearTimeout: (handle) => clearTimeout(handle as number) },
    });
    const mirror = new Mirror(client, LanpushActivity, ACTIVITY_NAME, () => this.changed());
    const notes = new LocalNotifications(client);
    client.on("status", (e) => {
      this.status = e.status;
      this.detail = e.detail.reason ?? "";
      this.changed();
    });
    client.on("auth_rejected", (e) => {
      this.detail = `token rejected: ${e.message}`;
      this.changed();
    });
    for (const type of ["activity", "notification", "clear", "synced"] as const) client.on(type, () => this.changed());
    this.client = client;
    this.mirror = mirror;
    this.notes = notes;
    // The Live Activities a previous run left on the Lock Screen are found before the first frame arrives.
    await mirror.attach();
    notes.attach();
    client.start();
    await this.keepAlive();
  }

  /** New settings (typed, or from pairing): kept, the old device's Live Activities end, the client starts over. */
  async use(settings: Settings): Promise<void> {
    saveSettings(settings);
    this.settings = loadSettings();
    this.draft = { url: this.settings.url, token: "" };
    await this.end();
    await this.start();
  }

  /** Pairs from a pairing URL or a short code (with the address typed beside it), then connects as that device. */
  async pair(input: string): Promise<boolean> {
    this.pairing = "Pairing…";
    this.changed();
    try {
      const paired = await pairDevice(input, this.draft.url);
      this.pairing = "";
      await this.use(paired);
      return true;
    } catch (e) {
      this.pairing = pairingFailure(e);
      this.changed();
      return false;
    }
  }

  /** Stop: every Live Activity ends and is dismissed, the client disconnects, the background request is released. */
  async shutdown(): Promise<void> {
    await this.end();
    this.status = "stopped";
    await BackgroundKeeper.stopKeepAlive();
    this.keeper = "not requested";
    this.changed();
  }

  /** The page came back (a resume): whether iOS still keeps the script running; asks again if it stopped. */
  async resumed(): Promise<void> {
    if (this.keeper === "active" && !(await BackgroundKeeper.isActive)) this.keeper = "ended";
    if (this.keeper === "ended" && this.client) await this.keepAlive();
    this.changed();
  }

  private async keepAlive(): Promise<void> {
    this.keeper = (await BackgroundKeeper.keepAlive()) ? "active" : "refused";
    this.changed();
  }

  /** Whether this user has Scripting Pro, which `BackgroundKeeper` needs (the app's docs mark it Pro). */
  get pro(): boolean {
    return Script.hasFullAccess();
  }

  private async end(): Promise<void> {
    const client = this.client;
    const mirror = this.mirror;
    this.client = null;
    this.mirror = null;
    this.notes?.detach();
    this.notes = null;
    if (mirror) await mirror.endAll();
    if (client) await client.stop();
    if (client) this.status = "offline";
    this.changed();
  }
}
