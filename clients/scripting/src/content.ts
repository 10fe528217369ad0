import { color, contrasting, hex } from "./colors";
import { sfSymbol } from "./icons";

type JSONObject = { [key: string]: any };

/**
 * What the script hands a Live Activity as its content state: JSON only (ActivityKit serializes it), so times
 * are numbers and the builder makes the dates.
 */
export interface ActivityContent {
  tag: string;
  /** Static: the title the activity started with. */
  title: string;
  /** The Home Assistant content state (`message`, `progress`, `template`, …). */
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
  /** `chronometer` with a `countdown_end`: a timer replaces the message line (Unix ms). */
  timer?: number;
  /** Top right: the percentage when there is a progress bar (it replaces `critical_text` there), else `critical_text`. */
  topRight?: string;
  /** The compact island's trailing text: always `critical_text` when there is one. */
  compactTrailing?: string;
  /** 0…1 when `progress` and `progress_max` are both set. */
  fraction?: number;
  background: `#${string}`;
  text: `#${string}` | ReturnType<typeof contrasting>;
  /** `progress_bar_color`, falling back to the icon color. */
  bar: ReturnType<typeof color>;
  icon: string;
  iconColor: ReturnType<typeof color>;
  url?: string;
}

export function display(content: ActivityContent): Display {
  const s = content.state;
  const background = hex(s.background_color) ?? "#000000";
  const text = hex(s.text_color) ?? contrasting(background);
  const iconColor = color(s.color);
  const hasBar = typeof s.progress === "number" && typeof s.progress_max === "number" && s.progress_max > 0;
  const fraction = hasBar ? Math.min(1, Math.max(0, s.progress / s.progress_max)) : undefined;
  const percent = fraction === undefined ? undefined : `${Math.round(fraction * 100)}%`;
  const critical = typeof s.critical_text === "string" && s.critical_text !== "" ? s.critical_text : undefined;
  const timer = s.chronometer === true && typeof s.countdown_end === "number" ? s.countdown_end * 1000 : undefined;
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
  if (timer !== undefined) d.timer = timer;
  if (fraction !== undefined) d.fraction = fraction;
  // A tap opens the URL; HA's relative paths (`/lovelace/0`) mean the companion app, which this is not.
  const url = typeof s.template?.tap_url === "string" ? s.template.tap_url : s.url;
  if (typeof url === "string" && /^[a-z][a-z0-9+.-]*:/i.test(url)) d.url = url;
  return d;
}
