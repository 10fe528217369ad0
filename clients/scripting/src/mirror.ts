import { LiveActivity, LiveActivityState } from "scripting";
import type { LanpushClient } from "../../typescript/src/client";
import { appStaleDate } from "../../typescript/src/liveActivityRules";
import type { Activity } from "../../typescript/src/state";
import { ActivityIds } from "./activityIds";
import type { ActivityContent } from "./content";
import { buildContent } from "./contentState";

interface Mirrored {
  /** Null until a start succeeded (or the Live Activity was found again after a restart). */
  activity: LiveActivity<ActivityContent> | null;
  /** The lanpush activity it shows: a new one under the same tag (a later start) replaces it. */
  startedAt: number;
  ended: boolean;
  /** The script itself dismissed it (or lanpush did): a `dismissed` from the system is then no user action. */
  dismissing: boolean;
  /** Found again after a restart: its content is brought up to date once the stream is synced. */
  stale: boolean;
  listener: (state: LiveActivityState) => void;
}

type Options = { staleDate?: number; relevanceScore?: number };

/**
 * Mirrors every lanpush activity of the device into exactly one Live Activity per tag: started on start (or found
 * again after the app was killed, by the id kept in Storage), updated on patches, ended with the remaining dismissal
 * time; a dismissal on the phone goes back to the gateway as a `dismissed` frame. Once the stream is synced, every
 * held activity has its Live Activity — a replay of unchanged activities sends no events — and Live Activities this
 * script left behind for activities lanpush no longer has are ended. A start iOS refuses (Live Activities switched
 * off, too many running) is tried again on the activity's next update and when they are switched back on.
 */
export class Mirror {
  private readonly mirrored = new Map<string, Mirrored>();
  private readonly unsubscribe: (() => void)[] = [];
  private readonly ids = new ActivityIds();
  /** Tags whose start iOS refused, and tags whose content was cut to fit, for the page. */
  readonly refused = new Set<string>();
  readonly cut = new Map<string, string[]>();
  enabled: boolean | null = null;
  private readonly onEnabled = (enabled: boolean) => void this.enabledChanged(enabled);

  constructor(
    private readonly client: LanpushClient,
    private readonly create: () => LiveActivity<ActivityContent>,
    private readonly name: string,
    private readonly changed: () => void,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Finds the Live Activities a previous run left on the Lock Screen, then follows the client. */
  async attach(): Promise<void> {
    this.enabled = await LiveActivity.areActivitiesEnabled();
    LiveActivity.addActivitiesEnabledListener(this.onEnabled);
    await this.reattach();
    const c = this.client;
    this.unsubscribe.push(
      () => LiveActivity.removeActivitiesEnabledListener(this.onEnabled),
      c.on("activity", async (e) => {
        // Ends and dismissals have their own events; an activity that arrives already ended starts in `end`.
        if (e.current && e.current.phase !== "ended") await this.show(e.current, e.cause, e.alert);
      }),
      c.on("ended", (e) => this.end(e.activity)),
      c.on("dismissed", (e) => this.dismiss(e.tag, e.activity)),
      c.on("synced", () => this.reconcile()),
    );
  }

  /** Live Activities currently shown, by tag. */
  get tags(): string[] {
    return [...this.mirrored].filter(([, m]) => m.activity !== null).map(([tag]) => tag);
  }

  /** Stops following the client; the Live Activities stay (a restart of the client finds them again). */
  detach(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }

  /** The user stops the script: every Live Activity ends and is dismissed, so nothing frozen stays behind. */
  async endAll(): Promise<void> {
    this.detach();
    for (const [tag, m] of [...this.mirrored]) await this.finish(tag, m, 0, this.lastContent.get(tag));
    for (const [tag, stored] of this.ids.entries) {
      const orphan = await LiveActivity.from<ActivityContent>(stored.id, this.name);
      if (orphan) await orphan.end({ tag, title: "", state: { message: "" }, phase: "ended" }, { dismissTimeInterval: 0 });
      this.ids.delete(tag);
    }
  }

  private async reattach(): Promise<void> {
    const running = new Set(await LiveActivity.getAllActivitiesIds());
    for (const [tag, stored] of this.ids.entries) {
      const activity = running.has(stored.id) ? await LiveActivity.from<ActivityContent>(stored.id, this.name) : null;
      const state = activity ? await activity.getActivityState() : null;
      if (!activity || state === null || state === "dismissed") {
        this.ids.delete(tag);
        continue;
      }
      this.track(tag, { activity, startedAt: stored.started_at, ended: state === "ended", dismissing: false, stale: true, listener: () => {} });
    }
  }

  /** After `synced`: every held activity shown, every Live Activity found again brought up to date, strays ended. */
  private async reconcile(): Promise<void> {
    const held = this.client.state.activities;
    for (const [tag, m] of [...this.mirrored]) {
      const a = held[tag];
      if (!a || a.attributes.started_at !== m.startedAt) await this.finish(tag, m, 0, this.lastContent.get(tag));
    }
    for (const a of Object.values(held)) {
      const m = this.mirrored.get(a.tag);
      if (a.phase === "ended") {
        if (m && m.stale) await this.end(a);
        continue;
      }
      if (!m || !m.activity || m.stale) await this.show(a, "sync");
    }
    this.changed();
  }

  private readonly lastContent = new Map<string, ActivityContent>();

  private content(a: Activity): ActivityContent {
    const built = buildContent(a, this.now());
    if (built.cut.length > 0) this.cut.set(a.tag, built.cut);
    else this.cut.delete(a.tag);
    this.lastContent.set(a.tag, built.content);
    return built.content;
  }

  /**
   * lanpush's stale date when the update has one (the app takes milliseconds); else the iOS companion app's own
   * rule (LiveActivityRegistry.swift `computeStaleDate`): a running timer is stale 2 s after its end, anything else
   * 30 minutes after its last update.
   */
  private options(a: Activity): Options {
    const o: Options = { staleDate: a.stale_date !== undefined ? a.stale_date * 1000 : appStaleDate(a.state, this.now()) };
    if (a.relevance_score !== undefined) o.relevanceScore = a.relevance_score;
    return o;
  }

  private track(tag: string, m: Mirrored): void {
    m.listener = (state) => this.systemState(tag, m, state);
    m.activity?.addUpdateListener(m.listener);
    this.mirrored.set(tag, m);
  }

  private async show(a: Activity, cause: string, alert?: { title?: string; body?: string }): Promise<void> {
    let m = this.mirrored.get(a.tag);
    if (m && (cause === "start" || m.startedAt !== a.attributes.started_at)) {
      // Another activity under the same tag (a start frame always means one; `started_at` only has seconds).
      await this.finish(a.tag, m, 0, this.lastContent.get(a.tag));
      m = undefined;
    }
    if (!m) {
      m = { activity: null, startedAt: a.attributes.started_at, ended: false, dismissing: false, stale: false, listener: () => {} };
      this.track(a.tag, m);
    }
    if (!m.activity) return this.start(a, m);
    if (m.ended) return;
    if (cause === "lifecycle" && a.phase === "stale" && !m.stale) return; // the system marks it stale by its stale date
    const options: Options & { alert?: { title: string; body: string } } = this.options(a);
    if (alert && (alert.title || alert.body)) options.alert = { title: alert.title ?? "", body: alert.body ?? "" };
    m.stale = false;
    await m.activity.update(this.content(a), options);
  }

  private async start(a: Activity, m: Mirrored): Promise<void> {
    if (this.enabled === false) {
      this.refused.add(a.tag);
      this.changed();
      return;
    }
    const activity = this.create();
    // Updates wait for the start to return (the app's rule); the client awaits this handler before the next frame.
    const started = await activity.start(this.content(a), this.options(a));
    if (this.mirrored.get(a.tag) !== m) return;
    if (!started) {
      this.refused.add(a.tag);
      this.changed();
      return;
    }
    this.refused.delete(a.tag);
    m.activity = activity;
    activity.addUpdateListener(m.listener);
    if (activity.activityId !== undefined) this.ids.set(a.tag, { id: activity.activityId, started_at: a.attributes.started_at });
    this.changed();
  }

  private async enabledChanged(enabled: boolean): Promise<void> {
    this.enabled = enabled;
    this.changed();
    if (!enabled) return;
    for (const tag of [...this.refused]) {
      const a = this.client.state.activities[tag];
      if (a && a.phase !== "ended") await this.show(a, "retry");
    }
  }

  private async end(a: Activity): Promise<void> {
    let m = this.mirrored.get(a.tag);
    if (!m || !m.activity) {
      await this.show({ ...a, phase: "active" }, "start");
      m = this.mirrored.get(a.tag);
      if (!m || !m.activity) return;
    }
    const remaining = a.dismissal_date === undefined ? undefined : Math.max(0, Math.round(a.dismissal_date - this.now() / 1000));
    m.ended = true;
    m.stale = false;
    if (remaining === 0) m.dismissing = true;
    const options: Options & { dismissTimeInterval?: number } = this.options(a);
    if (remaining !== undefined) options.dismissTimeInterval = remaining;
    await m.activity.end(this.content(a), options);
    if (remaining === 0) this.forget(a.tag, m);
  }

  private async dismiss(tag: string, last: Activity): Promise<void> {
    const m = this.mirrored.get(tag);
    if (!m) return;
    await this.finish(tag, m, 0, this.content(last));
  }

  private async finish(tag: string, m: Mirrored, dismissTimeInterval: number, content?: ActivityContent): Promise<void> {
    m.dismissing = true;
    if (m.activity) await m.activity.end(content ?? { tag, title: "", state: { message: "" }, phase: "ended" }, { dismissTimeInterval });
    this.forget(tag, m);
  }

  private forget(tag: string, m: Mirrored): void {
    m.activity?.removeUpdateListener(m.listener);
    if (this.mirrored.get(tag) !== m) return;
    this.mirrored.delete(tag);
    this.refused.delete(tag);
    this.cut.delete(tag);
    this.ids.delete(tag, m.activity?.activityId);
    this.changed();
  }

  /** The system reports a state change; `dismissed` that the script did not cause is the user's swipe. */
  private systemState(tag: string, m: Mirrored, state: LiveActivityState): void {
    if (state !== "dismissed") return;
    if (!m.dismissing) this.client.dismiss(tag);
    m.dismissing = true;
    this.forget(tag, m);
  }
}
