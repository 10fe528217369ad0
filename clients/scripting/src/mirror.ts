import { LiveActivity, LiveActivityState, Notification } from "scripting";
import type { LanpushClient } from "../../typescript/src/client";
import type { Activity, HeldNotification } from "../../typescript/src/state";
import type { ActivityContent } from "./content";

interface Mirrored {
  activity: LiveActivity<ActivityContent>;
  /** The lanpush activity it shows: a new one under the same tag (a later start) replaces it. */
  startedAt: number;
  started: boolean;
  ended: boolean;
  /** The script itself dismissed it (or lanpush did): a `dismissed` from the system is then no user action. */
  dismissing: boolean;
  listener: (state: LiveActivityState) => void;
}

/**
 * Mirrors every lanpush activity of the device into one real Live Activity per tag: start on start, update on
 * patches, end with the remaining dismissal time; a dismissal on the phone goes back to the gateway as a
 * `dismissed` frame. Plain notifications become local notifications.
 */
export class Mirror {
  private readonly mirrored = new Map<string, Mirrored>();
  private readonly unsubscribe: (() => void)[] = [];
  /** False once scheduling a local notification failed: the page then lists them instead. */
  notificationsDelivered = true;

  constructor(
    private readonly client: LanpushClient,
    private readonly create: () => LiveActivity<ActivityContent>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  attach(): void {
    const c = this.client;
    this.unsubscribe.push(
      c.on("activity", async (e) => {
        // Ends and dismissals have their own events; an activity that arrives already ended starts in `end`.
        if (e.current && e.current.phase !== "ended") await this.show(e.current, e.cause, e.alert);
      }),
      c.on("ended", (e) => this.end(e.activity)),
      c.on("dismissed", (e) => this.dismiss(e.tag, e.activity)),
      c.on("notification", (e) => this.notify(e.notification)),
      c.on("clear", (e) => this.clearNotifications(e.tag)),
    );
  }

  /** Live Activities currently shown, by tag. */
  get tags(): string[] {
    return [...this.mirrored.keys()];
  }

  /** The script stops: its activities end and are dismissed, so nothing stale stays on the Lock Screen. */
  async stop(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    for (const [tag, m] of [...this.mirrored]) {
      m.dismissing = true;
      if (m.started) {
        const content = this.lastContent.get(tag);
        if (content) await m.activity.end(content, { dismissTimeInterval: 0 });
      }
      m.activity.removeUpdateListener(m.listener);
      this.mirrored.delete(tag);
    }
  }

  private readonly lastContent = new Map<string, ActivityContent>();

  private content(a: Activity): ActivityContent {
    const content: ActivityContent = { tag: a.tag, title: a.attributes.title, state: a.state, phase: a.phase };
    const t = a.state.template as { template?: string; remaining_time?: number } | undefined;
    if (t && t.template === "generic" && typeof t.remaining_time === "number") {
      content.remaining_until = this.now() + t.remaining_time * 1000;
    }
    this.lastContent.set(a.tag, content);
    return content;
  }

  private options(a: Activity): { staleDate?: number; relevanceScore?: number } {
    const o: { staleDate?: number; relevanceScore?: number } = {};
    // The app takes the stale date in milliseconds; lanpush sends Unix seconds.
    if (a.stale_date !== undefined) o.staleDate = a.stale_date * 1000;
    if (a.relevance_score !== undefined) o.relevanceScore = a.relevance_score;
    return o;
  }

  private async show(a: Activity, cause: string, alert?: { title?: string; body?: string }): Promise<void> {
    let m = this.mirrored.get(a.tag);
    if (m && (cause === "start" || m.startedAt !== a.attributes.started_at)) {
      // Another activity under the same tag (a start frame always means one; `started_at` only has seconds).
      await this.finish(a.tag, m, 0);
      m = undefined;
    }
    const content = this.content(a);
    if (!m) {
      const activity = this.create();
      const record: Mirrored = { activity, startedAt: a.attributes.started_at, started: false, ended: false, dismissing: false, listener: () => {} };
      record.listener = (state) => this.systemState(a.tag, record, state);
      activity.addUpdateListener(record.listener);
      this.mirrored.set(a.tag, record);
      // Updates wait for the start to return (the app's rule); the client awaits this handler before the next frame.
      record.started = await activity.start(content, this.options(a));
      return;
    }
    if (!m.started || m.ended) return;
    if (cause === "lifecycle" && a.phase === "stale") return; // the system marks it stale by its stale date
    const options: { staleDate?: number; relevanceScore?: number; alert?: { title: string; body: string } } = this.options(a);
    if (alert && (alert.title || alert.body)) options.alert = { title: alert.title ?? "", body: alert.body ?? "" };
    await m.activity.update(content, options);
  }

  private async end(a: Activity): Promise<void> {
    let m = this.mirrored.get(a.tag);
    if (!m) {
      await this.show({ ...a, phase: "active" }, "start");
      m = this.mirrored.get(a.tag);
      if (!m) return;
    }
    const remaining = a.dismissal_date === undefined ? undefined : Math.max(0, Math.round(a.dismissal_date - this.now() / 1000));
    m.ended = true;
    if (remaining === 0) m.dismissing = true;
    if (!m.started) return;
    const options: { dismissTimeInterval?: number; staleDate?: number; relevanceScore?: number } = this.options(a);
    if (remaining !== undefined) options.dismissTimeInterval = remaining;
    await m.activity.end(this.content(a), options);
    if (remaining === 0) this.forget(a.tag, m);
  }

  private async dismiss(tag: string, last: Activity): Promise<void> {
    const m = this.mirrored.get(tag);
    if (!m) return;
    m.dismissing = true;
    if (m.started) await m.activity.end(this.content(last), { dismissTimeInterval: 0 });
    this.forget(tag, m);
  }

  private async finish(tag: string, m: Mirrored, dismissTimeInterval: number): Promise<void> {
    m.dismissing = true;
    const content = this.lastContent.get(tag);
    if (m.started && content) await m.activity.end(content, { dismissTimeInterval });
    this.forget(tag, m);
  }

  private forget(tag: string, m: Mirrored): void {
    m.activity.removeUpdateListener(m.listener);
    if (this.mirrored.get(tag) === m) this.mirrored.delete(tag);
  }

  /** The system reports a state change; `dismissed` that the script did not cause is the user's swipe. */
  private systemState(tag: string, m: Mirrored, state: LiveActivityState): void {
    if (state !== "dismissed") return;
    if (!m.dismissing) this.client.dismiss(tag);
    m.dismissing = true;
    this.forget(tag, m);
  }

  private async notify(n: HeldNotification): Promise<void> {
    const data = n.data as { tag?: unknown; group?: unknown; url?: unknown; silent?: unknown };
    const options: Parameters<typeof Notification.schedule>[0] = {
      title: n.title ?? "Home Assistant",
      userInfo: { lanpush_seq: n.seq, ...(typeof data.tag === "string" ? { tag: data.tag } : {}) },
    };
    if (n.message !== undefined) options.body = n.message;
    if (typeof data.group === "string") options.threadIdentifier = data.group;
    if (data.silent === true) options.silent = true;
    if (typeof data.url === "string" && /^https?:\/\//.test(data.url)) options.tapAction = { type: "openURL", url: data.url };
    try {
      if (!(await Notification.schedule(options))) this.notificationsDelivered = false;
    } catch {
      this.notificationsDelivered = false;
    }
  }

  private async clearNotifications(tag: string): Promise<void> {
    try {
      const delivered = await Notification.getAllDeliveredsOfCurrentScript();
      const ids = delivered.filter((d) => d.request.content.userInfo?.tag === tag).map((d) => d.request.identifier);
      if (ids.length > 0) await Notification.removeDelivereds(ids);
    } catch {
      // Nothing delivered to clear (or no permission): the page's list is cleared by the client state anyway.
    }
  }
}
