import { barFill, chronometerOf, Chronometer, percentText, progressOf, tapTarget, timerBar } from "../../typescript/src/liveActivityRules";
import { color, contrasting, hex } from "./colors";
import { sfSymbol } from "./icons";

type JSONObject = { [key: string]: any };

/**
 * What the script hands a Live Activity as its content state (`contentState.ts` builds it): JSON only, since
 * ActivityKit serializes it, so times are numbers and the builder makes the dates.
 */
export interface ActivityContent {
  tag: string;
  /** The title to show now: the content state's `title` (it may change on update), else the start's. */
  title: string;
  /** The Home Assistant content state, cut to the keys the Live Activity draws (`message`, `progress`, `template`, …). */
  state: JSONObject;
  phase: "active" | "stale" | "ended";
  /** Unix ms; the generic template's `remaining_time` made absolute when the update arrived. */
  remaining_until?: number;
}

/** What the Lock Screen and the island show, derived from the HA display rules (companion docs, Live Activities). */
export interface Display {
  title: string;
  /** Shown when there is no timer. */
  message: string;
  /** `chronometer` with a `countdown_end` (and maybe `chronometer_start`): a timer replaces the message line. */
  timer?: Chronometer;
  /** Top right: the percentage when there is a progress bar (it replaces `critical_text` there), else `critical_text`. */
  topRight?: string;
  /** The compact island's trailing text: always `critical_text` when there is one. */
  compactTrailing?: string;
  /** 0…1: how much of the static bar is filled (`progress_bar_direction: decreasing` fills what remains). */
  fill?: number;
  /** The bar under a running timer when there is no static bar: from, to (Unix ms) and whether it empties. */
  timerBar?: { from: number; to: number; countsDown: boolean };
  background: `#${string}`;
  text: `#${string}` | ReturnType<typeof contrasting>;
  /** `progress_bar_color`, falling back to the icon color. */
  bar: ReturnType<typeof color>;
  icon: string;
  iconColor: ReturnType<typeof color>;
  url?: string;
}

export function display(content: ActivityContent, nowMs: number = Date.now()): Display {
  const s = content.state;
  const background = hex(s.background_color) ?? "#000000";
  const text = hex(s.text_color) ?? contrasting(background);
  const iconColor = color(s.color);
  const p = progressOf(s);
  const percent = p ? percentText(p.fraction) : undefined;
  const critical = typeof s.critical_text === "string" && s.critical_text !== "" ? s.critical_text : undefined;
  const d: Display = {
    title: content.title,
    message: typeof s.message === "string" ? s.message : "",
    topRight: percent ?? critical,
    compactTrailing: critical ?? percent,
    background,
    text,
    bar: color(s.progress_bar_color) ?? iconColor,
    icon: sfSymbol(s.icon),
    iconColor,
  };
  const timer = chronometerOf(s, nowMs);
  if (timer) d.timer = timer;
  const fill = barFill(s);
  if (fill !== null) d.fill = fill;
  // The system animates a timer's bar itself (ProgressView over a date interval) from the moment it draws it.
  const tb = timerBar(s, nowMs, nowMs);
  if (tb) d.timerBar = { from: tb.from, to: tb.to, countsDown: tb.drains };
  const tap = tapTarget(typeof s.template?.tap_url === "string" ? s.template.tap_url : s.url);
  if (tap) d.url = tap.href;
  return d;
}
