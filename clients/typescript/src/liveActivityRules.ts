import type { Activity } from "./state.js";

/**
 * How Home Assistant's iOS companion app draws a Live Activity's content state, for every renderer lanpush has
 * (the live preview, the wall view, the Scripting script), so that each shows what the phone shows. Each rule names
 * the file of home-assistant/iOS it follows; where Android's companion app differs, the comment says how.
 */

type Loose = { [key: string]: any };

/**
 * `progress` and `progress_max` as the app decodes them: any JSON number rounded to the nearest integer, halves
 * away from zero (Swift's `rounded()`), anything else absent (HALiveActivityAttributes.swift,
 * `ContentState.decodeRoundedInt`; NotificationCommands/HandlerLiveActivity.swift rounds the same way). Android's
 * MessagingManager.kt `handleProgress` reads them with `toIntOrNull()`, so a fractional value shows no bar there.
 */
export function roundedInteger(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  const r = Math.sign(value) * Math.round(Math.abs(value));
  return r === 0 ? 0 : r;
}

export interface Progress {
  progress: number;
  max: number;
  /** `progress / max` as the app computes it (not clamped: the bar and the percentage clamp). */
  fraction: number;
}

/** The bar's numbers, or null when the app draws no bar: both values needed, `progress_max` above 0 (`progressFraction`). */
export function progressOf(state: Loose): Progress | null {
  const progress = roundedInteger(state.progress);
  const max = roundedInteger(state.progress_max);
  if (progress === undefined || max === undefined || max <= 0) return null;
  return { progress, max, fraction: progress / max };
}

/** "25%": the fraction clamped to 0…1, times 100, rounded (HALockScreenView.swift, `HAActivityVisualStyle.percentString`). */
export function percentText(fraction: number): string {
  return `${Math.round(Math.min(Math.max(fraction, 0), 1) * 100)}%`;
}

/**
 * `progress_bar_direction`: `increasing` or `decreasing`, case-insensitive; anything else is no direction, so each
 * bar keeps its default (`resolvedProgressBarDirection`). Android's companion app has no such field.
 */
export function barDirection(state: Loose): "increasing" | "decreasing" | null {
  const d = typeof state.progress_bar_direction === "string" ? state.progress_bar_direction.toLowerCase() : "";
  return d === "increasing" || d === "decreasing" ? d : null;
}

/**
 * How much of the static bar is filled: `decreasing` fills what remains (1 − fraction) so the bar drains as progress
 * advances; the percentage keeps showing the fraction (`progressBarFillFraction`). Clamped as HAActivityProgressBar
 * clamps it. Null when there is no bar.
 */
export function barFill(state: Loose): number | null {
  const p = progressOf(state);
  if (!p) return null;
  const f = barDirection(state) === "decreasing" ? 1 - p.fraction : p.fraction;
  return Math.min(Math.max(f, 0), 1);
}

/** The header: the content state's `title` when it is a non-empty string (it may change on update), else the start's. */
export function titleOf(activity: Pick<Activity, "attributes" | "state">): string {
  const t = (activity.state as Loose).title;
  return typeof t === "string" && t !== "" ? t : activity.attributes.title ?? "";
}

/**
 * The chronometer (HAActivityTimerProgressBar.swift, `HAActivityChronometerText`), times in ms: with a
 * `chronometer_start` before `countdown_end` it counts up from the start and stops at the end (a negative relative
 * `when`: a bounded count-up); else it counts down while `countdown_end` is ahead and up from it once it has passed.
 * Android's companion app (`handleChronometer`) counts down to a future `when` and up from a past one, unbounded.
 */
export type Chronometer =
  | { kind: "countdown"; end: number }
  | { kind: "countup"; since: number }
  | { kind: "bounded"; start: number; end: number };

export function chronometerOf(state: Loose, nowMs: number): Chronometer | null {
  if (state.chronometer !== true || typeof state.countdown_end !== "number") return null;
  const end = state.countdown_end * 1000;
  if (typeof state.chronometer_start === "number" && state.chronometer_start * 1000 < end) {
    return { kind: "bounded", start: state.chronometer_start * 1000, end };
  }
  return end > nowMs ? { kind: "countdown", end } : { kind: "countup", since: end };
}

/**
 * The bar under a chronometer when there is no static bar: a countdown drains from the moment it is drawn to its
 * end unless `increasing`, a bounded count-up fills from its start unless `decreasing`; an unbounded count-up has
 * none (`HAActivityTimerProgressBar.interval`). The interval it runs over (Unix ms), whether it empties, and its fill
 * at `nowMs` (0…1); null: no bar. `drawnAtMs` is when the view was drawn (the update's arrival).
 */
export interface TimerBar {
  from: number;
  to: number;
  drains: boolean;
  fill: number;
}

export function timerBar(state: Loose, nowMs: number, drawnAtMs: number): TimerBar | null {
  if (progressOf(state)) return null;
  const c = chronometerOf(state, drawnAtMs);
  if (!c || c.kind === "countup") return null;
  const from = c.kind === "bounded" ? c.start : Math.min(drawnAtMs, c.end);
  const drains = c.kind === "bounded" ? barDirection(state) === "decreasing" : barDirection(state) !== "increasing";
  return { from, to: c.end, drains, fill: intervalFill(from, c.end, drains, nowMs) };
}

/** A bar running over `from`…`to` (Unix ms) at `nowMs`: how much of it is filled, emptying or filling. */
export function intervalFill(from: number, to: number, drains: boolean, nowMs: number): number {
  const done = to > from ? Math.min(Math.max((nowMs - from) / (to - from), 0), 1) : 1;
  return drains ? 1 - done : done;
}

/**
 * The app's own stale date, set on every start and update it makes (LiveActivityRegistry.swift,
 * `computeStaleDate`): a chronometer's end plus 2 s (never before 2 s from now), else 30 minutes after the update.
 * Unix ms. lanpush's own `stale_date`, when an update has one, takes its place.
 */
export const APP_STALE_AFTER_MS = 30 * 60 * 1000;

export function appStaleDate(state: Loose, updatedAtMs: number): number {
  if (state.chronometer === true && typeof state.countdown_end === "number") {
    return Math.max(state.countdown_end * 1000 + 2000, updatedAtMs + 2000);
  }
  return updatedAtMs + APP_STALE_AFTER_MS;
}

/**
 * Where a tap on the activity goes. The app forwards `url` like a notification's (HALiveActivityConfiguration.swift
 * `haLiveActivityTapURL`, App/Frontend/IncomingURLHandler.swift `navigate`): a relative Home Assistant path opens in
 * the companion app's frontend, a URL with a scheme opens as itself. `homeassistant://navigate/PATH` is the deep link
 * both companion apps register for the first (the Android app's LinkHandler.kt too).
 */
export interface TapTarget {
  kind: "path" | "url";
  /** What the state says. */
  raw: string;
  /** What to open. */
  href: string;
}

export function tapTarget(url: unknown): TapTarget | null {
  if (typeof url !== "string" || url.trim() === "") return null;
  const raw = url.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) return { kind: "url", raw, href: raw };
  const path = raw.startsWith("/") ? raw : `/${raw}`;
  return { kind: "path", raw, href: `homeassistant://navigate${path}` };
}
