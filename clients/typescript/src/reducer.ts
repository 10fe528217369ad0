import { clone, deepEqual, mergePatch } from "./mergePatch.js";
import type { ActivityAlert, EndFrame, EventFrame, JSONObject, Phase, SnapshotActivity, StartFrame, UpdateFrame } from "./protocol.js";
import { Activity, DeviceState, HeldNotification } from "./state.js";

/** Why an activity's view changed. */
export type ActivityCause = "snapshot" | "start" | "update" | "end" | "lifecycle";

/** What a UI can drive from; produced by `reduce` in frame order. */
export type StateEvent =
  /** An activity's previous and new view; `current` is null once it is gone (dismissed). */
  | {
      type: "activity";
      tag: string;
      previous: Activity | null;
      current: Activity | null;
      cause: ActivityCause;
      /** Belongs to this one event: show it once, never replay it. */
      alert?: ActivityAlert;
      silent?: boolean;
    }
  /** The activity ended (or an ended one got a new dismissal date): show it until `dismissal_date`. */
  | { type: "ended"; tag: string; activity: Activity }
  /** The activity is gone: its last view. */
  | { type: "dismissed"; tag: string; activity: Activity }
  | { type: "notification"; notification: HeldNotification }
  | { type: "clear"; tag: string; removed: HeldNotification[] }
  | { type: "notifications_dropped"; count: number; through: number }
  | { type: "snapshot"; epoch: string; seq: number }
  | { type: "replay"; epoch: string; from: number }
  | { type: "synced"; seq: number };

export interface ReduceOptions {
  /** Unix seconds: an ended activity whose dismissal date is not after `now` is removed. */
  now: number;
  /** Plain notifications held at most (the oldest go first). Default 100, the gateway's queue size. */
  maxNotifications?: number;
}

export interface ReduceResult {
  state: DeviceState;
  events: StateEvent[];
  /** The seq to acknowledge once the events were handled; null when the frame needs no ack. */
  ack: number | null;
  /**
   * Set when the frame cannot be applied to what the client holds (an update of an activity it never saw):
   * the client must drop its resume point and subscribe afresh to get a snapshot.
   */
  resync?: string;
}

/**
 * Applies one server frame to a device's state. Pure: `state` is not modified, unchanged activities are shared.
 * Every language's client must agree with it on the shared protocol vectors (docs/CLIENTS.md).
 */
export function reduce(state: DeviceState, frame: EventFrame, options: ReduceOptions): ReduceResult {
  const r = new Reduction(state, options);
  r.apply(frame);
  return { state: r.next, events: r.events, ack: r.ack, ...(r.resync ? { resync: r.resync } : {}) };
}

class Reduction {
  readonly next: DeviceState;
  readonly events: StateEvent[] = [];
  ack: number | null = null;
  resync?: string;

  constructor(readonly prev: DeviceState, readonly options: ReduceOptions) {
    this.next = { ...prev, activities: { ...prev.activities }, notifications: prev.notifications };
  }

  apply(frame: EventFrame): void {
    switch (frame.type) {
      case "snapshot":
        return this.snapshot(frame.epoch, frame.seq, frame.activities);
      case "replay":
        this.next.epoch = frame.epoch;
        this.events.push({ type: "replay", epoch: frame.epoch, from: frame.from });
        return;
      case "synced":
        this.events.push({ type: "synced", seq: frame.seq });
        return;
      case "notifications_dropped":
        this.events.push({ type: "notifications_dropped", count: frame.count, through: frame.through });
        return;
      case "start":
        this.start(frame);
        break;
      case "update":
        this.update(frame);
        break;
      case "end":
        this.end(frame);
        break;
      case "lifecycle":
        this.lifecycle(frame.tag, frame.phase);
        break;
      case "notification":
        this.notification({
          seq: frame.seq,
          ...(frame.title !== undefined ? { title: frame.title } : {}),
          ...(frame.message !== undefined ? { message: frame.message } : {}),
          data: clone(frame.data ?? {}),
        });
        break;
      case "clear":
        this.clear(frame.tag);
        break;
    }
    this.next.seq = Math.max(this.next.seq, frame.seq);
    this.ack = frame.seq;
  }

  private gone(a: { phase: Phase; dismissal_date?: number }): boolean {
    return a.phase === "dismissed" || (a.phase === "ended" && a.dismissal_date !== undefined && a.dismissal_date <= this.options.now);
  }

  private put(tag: string, current: Activity | null, cause: ActivityCause, extra: { alert?: ActivityAlert; silent?: boolean } = {}) {
    const previous = this.prev.activities[tag] ?? null;
    if (current) {
      this.next.activities[tag] = current;
    } else {
      delete this.next.activities[tag];
    }
    if (previous === null && current === null) return;
    this.events.push({ type: "activity", tag, previous, current, cause, ...extra });
  }

  private snapshot(epoch: string, seq: number, list: SnapshotActivity[]) {
    this.next.epoch = epoch;
    this.next.seq = seq;
    this.ack = seq;
    const incoming = new Map<string, Activity>();
    for (const a of list) {
      if (this.gone(a)) continue;
      incoming.set(a.tag, fromWire(a, a.phase));
    }
    const tags = new Set([...Object.keys(this.prev.activities), ...incoming.keys()]);
    for (const tag of [...tags].sort()) {
      const previous = this.prev.activities[tag];
      const current = incoming.get(tag) ?? null;
      if (previous && current && sameActivity(previous, current)) continue;
      this.put(tag, current, "snapshot");
      if (current && current.phase === "ended" && previous?.phase !== "ended") {
        this.events.push({ type: "ended", tag, activity: current });
      }
      if (!current && previous) this.events.push({ type: "dismissed", tag, activity: previous });
    }
    this.events.push({ type: "snapshot", epoch, seq });
  }

  private start(f: StartFrame) {
    const phase = f.phase ?? "active";
    const previous = this.prev.activities[f.tag];
    const activity = fromWire(f, phase);
    if (this.gone({ phase, dismissal_date: f.dismissal_date })) {
      // Started and gone while the client was away: nothing to show; whatever it held under the tag is over.
      if (previous) {
        this.put(f.tag, null, "start");
        this.events.push({ type: "dismissed", tag: f.tag, activity: previous });
      }
      return;
    }
    this.put(f.tag, activity, "start", f.alert ? { alert: f.alert } : {});
    if (activity.phase === "ended") this.events.push({ type: "ended", tag: f.tag, activity });
  }

  private update(f: UpdateFrame) {
    const held = this.prev.activities[f.tag];
    if (!held || held.phase === "ended") {
      this.resync = `update of '${f.tag}' (seq ${f.seq}) that the client does not hold live`;
      return;
    }
    const next: Activity = {
      ...held,
      state: mergePatch(held.state, f.patch) as JSONObject,
      phase: f.phase === "stale" ? "stale" : "active",
    };
    // null: the update has no stale date (stale dates belong to each update); absent: unchanged.
    if (f.stale_date === null) delete next.stale_date;
    else if (f.stale_date !== undefined) next.stale_date = f.stale_date;
    if (f.relevance_score !== undefined) next.relevance_score = f.relevance_score;
    const extra: { alert?: ActivityAlert; silent?: boolean } = {};
    if (f.alert) extra.alert = f.alert;
    if (f.silent) extra.silent = true;
    this.put(f.tag, next, "update", extra);
  }

  private end(f: EndFrame) {
    const held = this.prev.activities[f.tag];
    if (!held) {
      this.resync = `end of '${f.tag}' (seq ${f.seq}) that the client does not hold`;
      return;
    }
    const ended: Activity = { ...held, state: mergePatch(held.state, f.patch) as JSONObject, phase: "ended" };
    if (f.dismissal_date !== undefined) ended.dismissal_date = f.dismissal_date;
    if (f.stale_date === null) delete ended.stale_date;
    else if (f.stale_date !== undefined) ended.stale_date = f.stale_date;
    if (f.relevance_score !== undefined) ended.relevance_score = f.relevance_score;
    if (this.gone({ phase: f.phase === "dismissed" ? "dismissed" : "ended", dismissal_date: ended.dismissal_date })) {
      // Ended and dismissed at once (a clear_notification, as on the phone): the final view, then gone.
      this.put(f.tag, null, "end");
      this.events.push({ type: "ended", tag: f.tag, activity: ended });
      this.events.push({ type: "dismissed", tag: f.tag, activity: ended });
      return;
    }
    this.put(f.tag, ended, "end");
    this.events.push({ type: "ended", tag: f.tag, activity: ended });
  }

  private lifecycle(tag: string, phase: Phase) {
    const held = this.prev.activities[tag];
    if (!held) return;
    if (phase === "dismissed") {
      this.put(tag, null, "lifecycle");
      this.events.push({ type: "dismissed", tag, activity: held });
      return;
    }
    if (phase === "ended") {
      const ended: Activity = { ...held, phase: "ended" };
      this.put(tag, ended, "lifecycle");
      this.events.push({ type: "ended", tag, activity: ended });
      return;
    }
    if (held.phase === "ended" || held.phase === phase) return;
    this.put(tag, { ...held, phase }, "lifecycle");
  }

  private notification(n: HeldNotification) {
    // A snapshot is preceded by the queued notifications the client "may not have": skip the ones it has.
    if (this.prev.notifications.some((h) => h.seq === n.seq && sameNotification(h, n))) return;
    const limit = this.options.maxNotifications ?? 100;
    const list = [...this.prev.notifications, n];
    this.next.notifications = list.length > limit ? list.slice(list.length - limit) : list;
    this.events.push({ type: "notification", notification: n });
  }

  private clear(tag: string) {
    const removed = this.prev.notifications.filter((n) => n.data.tag === tag);
    if (removed.length > 0) this.next.notifications = this.prev.notifications.filter((n) => n.data.tag !== tag);
    this.events.push({ type: "clear", tag, removed });
  }
}

function fromWire(
  a: { tag: string; attributes: Activity["attributes"]; state: JSONObject; stale_date?: number; relevance_score?: number; dismissal_date?: number },
  phase: Phase,
): Activity {
  const activity: Activity = {
    tag: a.tag,
    attributes: clone(a.attributes as unknown as JSONObject) as unknown as Activity["attributes"],
    state: clone(a.state),
    phase: phase === "dismissed" ? "ended" : phase,
  };
  if (a.stale_date !== undefined) activity.stale_date = a.stale_date;
  if (a.relevance_score !== undefined) activity.relevance_score = a.relevance_score;
  if (a.dismissal_date !== undefined) activity.dismissal_date = a.dismissal_date;
  return activity;
}

function sameActivity(a: Activity, b: Activity): boolean {
  return deepEqual(a as unknown as JSONObject, b as unknown as JSONObject);
}

function sameNotification(a: HeldNotification, b: HeldNotification): boolean {
  return a.title === b.title && a.message === b.message && deepEqual(a.data, b.data);
}
