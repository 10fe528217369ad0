import type * as S from "scripting";
import { satisfies } from "./satisfies.js";
import { record } from "./record.js";
import { render, Rendered } from "./render.js";

/**
 * ActivityKit as the Scripting app exposes it (`LiveActivity`, held to `scripting.d.ts` with `satisfies`), with
 * what a test needs and a phone has: the Lock Screen outlives the script — a killed script's Live Activities stay
 * there, frozen, until a new run finds them by id (`from`) or ends them — it holds other scripts' Live Activities
 * too, iOS may refuse a start, and the user can switch Live Activities off and back on.
 */

/** One Live Activity on the Lock Screen, whichever script instance holds it. */
export interface OnLockScreen {
  id: string;
  name: string;
  state: S.LiveActivityState;
  /** Every start, update and end it got, from any instance. */
  history: { method: "start" | "update" | "end"; contentState: any; options?: any }[];
  /** Instances bound to it (the one that started it, and every `from`): they hear its state changes. */
  holders: Set<FakeLiveActivity<any>>;
}

export const device = {
  activitiesEnabled: true,
  /** The next this many starts are refused (iOS's limit on running activities, a failure of the app's). */
  refuseStarts: 0,
};

let lockScreen: OnLockScreen[] = [];
let nextId = 1;
const enabledListeners = new Set<(enabled: boolean) => void>();

/** What the Lock Screen shows now: every Live Activity not dismissed, oldest first. */
export function lockScreenActivities(name?: string): OnLockScreen[] {
  return lockScreen.filter((a) => a.state !== "dismissed" && (name === undefined || a.name === name));
}

/** Another script's Live Activity, which this script must never touch. */
export function startForeignActivity(name: string): OnLockScreen {
  const a: OnLockScreen = { id: `activity-${nextId++}`, name, state: "active", history: [], holders: new Set() };
  lockScreen.push(a);
  return a;
}

/** The user switches Live Activities for Scripting off or on in iOS Settings. */
export function setActivitiesEnabled(enabled: boolean): void {
  device.activitiesEnabled = enabled;
  setTimeout(() => {
    for (const l of [...enabledListeners]) l(enabled);
  }, 0);
}

/** The app was killed: its instances and listeners are gone; the Lock Screen keeps what it shows. */
export function forgetInstances(): void {
  FakeLiveActivity.instances.length = 0;
  enabledListeners.clear();
  for (const a of lockScreen) a.holders.clear();
}

export function resetLiveActivities(): void {
  forgetInstances();
  lockScreen = [];
  device.activitiesEnabled = true;
  device.refuseStarts = 0;
}

/** What a Live Activity shows: the registered builder run on its last content state. */
export function renderedOn(a: OnLockScreen): Rendered {
  const last = a.history[a.history.length - 1];
  return render(FakeLiveActivity.builders.get(a.name)!(last.contentState));
}

function structuredJSON<T>(value: T): T {
  // ActivityKit serializes the content state: anything that does not survive JSON would be lost on a phone.
  return JSON.parse(JSON.stringify(value));
}

export class FakeLiveActivity<T> {
  static builders = new Map<string, S.LiveActivityUIBuilder<any>>();
  /** The instances the running script made or found, in order. */
  static instances: FakeLiveActivity<any>[] = [];
  /** This instance's own calls. */
  readonly calls: { method: "start" | "update" | "end"; contentState: any; options?: any }[] = [];
  private readonly listeners = new Set<(state: S.LiveActivityState) => void>();
  private shown: OnLockScreen | null = null;

  static register<T>(name: string, builder: S.LiveActivityUIBuilder<T>): () => FakeLiveActivity<T> {
    record("LiveActivity.register", name);
    FakeLiveActivity.builders.set(name, builder);
    return () => {
      const a = new FakeLiveActivity<T>(name);
      FakeLiveActivity.instances.push(a);
      return a;
    };
  }

  constructor(public name: string = "") {}

  get activityId(): string | undefined {
    return this.shown?.id;
  }

  get started(): boolean {
    return this.shown !== null;
  }

  /** The Live Activity this instance shows, once started or found. */
  get onLockScreen(): OnLockScreen | null {
    return this.shown;
  }

  private note(method: "start" | "update" | "end", contentState: T, options?: any): void {
    const call = { method, contentState: structuredJSON(contentState), options };
    this.calls.push(call);
    this.shown?.history.push(call);
  }

  async start(contentState: T, options?: S.LiveActivityOptions): Promise<boolean> {
    record("LiveActivity.start", this.name);
    if (this.shown || !device.activitiesEnabled) return false;
    if (device.refuseStarts > 0) {
      device.refuseStarts--;
      return false;
    }
    this.shown = { id: `activity-${nextId++}`, name: this.name, state: "active", history: [], holders: new Set([this]) };
    lockScreen.push(this.shown);
    this.note("start", contentState, options);
    return true;
  }

  async update(contentState: T, options?: S.LiveActivityUpdateOptions): Promise<boolean> {
    const live = this.shown?.state === "active" || this.shown?.state === "stale";
    this.note("update", contentState, options);
    return live;
  }

  async end(contentState: T, options?: S.LiveActivityEndOptions): Promise<boolean> {
    this.note("end", contentState, options);
    const a = this.shown;
    if (!a || a.state === "dismissed") return false;
    const immediate = options?.dismissTimeInterval !== undefined && options.dismissTimeInterval <= 0;
    setState(a, immediate ? "dismissed" : "ended");
    return true;
  }

  async getActivityState(): Promise<S.LiveActivityState | null> {
    return this.shown?.state ?? null;
  }

  addUpdateListener(listener: (state: S.LiveActivityState) => void): void {
    this.listeners.add(listener);
  }

  removeUpdateListener(listener: (state: S.LiveActivityState) => void): void {
    this.listeners.delete(listener);
  }

  static async areActivitiesEnabled(): Promise<boolean> {
    return device.activitiesEnabled;
  }

  static addActivitiesEnabledListener(listener: (enabled: boolean) => void): void {
    enabledListeners.add(listener);
  }

  static removeActivitiesEnabledListener(listener: (enabled: boolean) => void): void {
    enabledListeners.delete(listener);
  }

  static async from<T>(activityId: string, name: string): Promise<FakeLiveActivity<T> | null> {
    record("LiveActivity.from", activityId, name);
    const a = lockScreen.find((x) => x.id === activityId && x.name === name && x.state !== "dismissed");
    if (!a) return null;
    const instance = new FakeLiveActivity<T>(name);
    instance.shown = a;
    a.holders.add(instance);
    FakeLiveActivity.instances.push(instance);
    return instance;
  }

  static async getAllActivitiesIds(): Promise<string[]> {
    return lockScreenActivities().map((a) => a.id);
  }

  /** The user swipes the Live Activity away on the Lock Screen. */
  userDismiss(): void {
    if (this.shown) setState(this.shown, "dismissed");
  }

  /** What the Live Activity shows now. */
  rendered(): Rendered {
    return renderedOn(this.shown!);
  }

  hear(state: S.LiveActivityState): void {
    for (const l of [...this.listeners]) l(state);
  }
}

function setState(a: OnLockScreen, state: S.LiveActivityState): void {
  a.state = state;
  // The system reports state changes asynchronously.
  setTimeout(() => {
    for (const holder of [...a.holders]) holder.hear(state);
  }, 0);
}

export const LiveActivity = satisfies<typeof S.LiveActivity>()(FakeLiveActivity);
