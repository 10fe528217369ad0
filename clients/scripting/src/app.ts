import { LanpushClient } from "../../typescript/src/client";
import type { ConnectionStatus } from "../../typescript/src/events";
import type { Activity, HeldNotification } from "../../typescript/src/state";
import { sortedActivities } from "../../typescript/src/state";
import { LanpushActivity } from "./live_activity";
import { Mirror } from "./mirror";
import { ScriptingSocket } from "./socket";
import { ScriptingStorageStore, Settings, streamURL } from "./storage";

/** The running script: one lanpush client for the device, its mirror, and what the page shows. */
export class App {
  private client: LanpushClient | null = null;
  private mirror: Mirror | null = null;
  private readonly listeners = new Set<() => void>();
  status: ConnectionStatus | "not configured" = "not configured";
  detail = "";
  keepAlive: boolean | null = null;

  constructor(public settings: Settings) {}

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
    return this.mirror?.notificationsDelivered ?? true;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** (Re)connects with the current settings and keeps the app alive in the background while it runs. */
  async start(): Promise<void> {
    await this.stop();
    if (!this.configured) return;
    const client = new LanpushClient({
      url: streamURL(this.settings.url),
      token: this.settings.token,
      store: new ScriptingStorageStore(),
      // One key per gateway and token, so a changed setting never resumes another device's stream.
      storeKey: `lanpush.state.${this.settings.url}.${this.settings.token.slice(0, 8)}`,
      createSocket: (url) => new ScriptingSocket(url),
    });
    const mirror = new Mirror(client, LanpushActivity);
    mirror.attach();
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
    client.start();
    this.keepAlive = await BackgroundKeeper.keepAlive();
    this.changed();
  }

  /** Disconnects; the mirrored Live Activities end and are dismissed. */
  async stop(): Promise<void> {
    const client = this.client;
    const mirror = this.mirror;
    this.client = null;
    this.mirror = null;
    if (mirror) await mirror.stop();
    if (client) await client.stop();
    if (client) this.status = "offline";
    this.changed();
  }
}
