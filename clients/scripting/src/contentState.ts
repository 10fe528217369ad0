import type { Activity } from "../../typescript/src/state";
import { titleOf } from "../../typescript/src/liveActivityRules";
import type { ActivityContent } from "./content";

type JSONObject = { [key: string]: any };

/**
 * The content state a Live Activity is started and updated with: only what `live_activity.tsx` draws, within
 * ActivityKit's budget. Apple caps the dynamic data of an ActivityKit update at 4 KB (ActivityKit documentation,
 * "Updating and ending your Live Activity"); the Scripting app wraps the script's JSON in its own content state, so
 * the script keeps its JSON under `BUDGET` bytes of UTF-8 and, past it, shortens the longest texts (the message
 * first) until it fits, saying which fields it cut.
 */
export const BUDGET = 3584;

/** The plain Home Assistant keys the Lock Screen and the island draw. */
const DRAWN = [
  "message", "title", "critical_text", "progress", "progress_max", "chronometer", "countdown_end", "chronometer_start",
  "icon", "color", "background_color", "text_color", "progress_bar_color", "progress_bar_direction", "url",
];

/** Aivi's templates, the members each one draws (Aivi template docs): nested objects keep only their drawn keys. */
const VALUE = ["value", "text_color", "formatter"];
const ICON = ["name", "rendering_mode", "primary_color", "secondary_color", "tertiary_color", "color_rendering"];
const SEGMENT = ["value", "fill_color", "track_color", "track_fill", "label"];
const COLUMN: { [key: string]: string[] | null } = { header: null, value: VALUE, footer: null };
const TEMPLATE: { [key: string]: string[] | null | { [key: string]: any } } = {
  template: null, icon: ICON, tap_url: null,
  header_left: VALUE, header_right: VALUE, footer_left: VALUE, footer_right: VALUE, compact_value: VALUE,
  progress: { style: null, value: null, color: null, display: null, segments: SEGMENT },
  primary_column: null, left_column: COLUMN, right_column: COLUMN,
  state: null, remaining_time: null,
};

function pick(value: any, shape: string[] | null | { [key: string]: any }): any {
  if (shape === null) return value;
  if (Array.isArray(value)) return value.map((v) => pick(v, shape));
  if (typeof value !== "object" || value === null) return Array.isArray(shape) ? value : undefined;
  const out: JSONObject = {};
  const keys = Array.isArray(shape) ? shape : Object.keys(shape);
  for (const k of keys) {
    if (value[k] === undefined) continue;
    const sub = Array.isArray(shape) ? null : shape[k];
    const v = pick(value[k], sub);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** UTF-8 bytes of a string (the app has no TextEncoder in its declared globals). */
export function utf8Length(text: string): number {
  let n = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
}

/** The string-valued places of a value, with their paths (`state.message`, `state.template.left_column.footer`). */
function strings(value: any, path: string, out: { path: string; holder: any; key: string | number }[]): void {
  if (Array.isArray(value)) value.forEach((v, i) => (typeof v === "string" ? out.push({ path: `${path}[${i}]`, holder: value, key: i }) : strings(v, `${path}[${i}]`, out)));
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "string") out.push({ path: `${path}.${k}`, holder: value, key: k });
      else strings(v, `${path}.${k}`, out);
    }
  }
}

export interface Built {
  content: ActivityContent;
  /** Fields shortened to fit the budget (empty when nothing was cut). */
  cut: string[];
}

export function buildContent(a: Activity, nowMs: number): Built {
  const state: JSONObject = pick(a.state, DRAWN.reduce((o, k) => ({ ...o, [k]: null }), {} as JSONObject));
  if (a.state.template && typeof a.state.template === "object") state.template = pick(a.state.template, TEMPLATE);
  const content: ActivityContent = { tag: a.tag, title: titleOf(a), state, phase: a.phase };
  const t = a.state.template as { template?: string; remaining_time?: number } | undefined;
  if (t && t.template === "generic" && typeof t.remaining_time === "number") content.remaining_until = nowMs + t.remaining_time * 1000;
  const cut = new Set<string>();
  for (let size = utf8Length(JSON.stringify(content)); size > BUDGET;) {
    const places: { path: string; holder: any; key: string | number }[] = [];
    strings(content, "content", places);
    // The message goes first (HA's long free text), then whichever text is longest; tags, colors and names last.
    const cuttable = places.filter((p) => !/\.(tag|template|icon|name|color|.*_color|url|tap_url|formatter|style|display|rendering_mode|color_rendering|progress_bar_direction|primary_column|track_fill)$/.test(p.path));
    const message = cuttable.find((p) => p.path === "content.state.message" && String(p.holder[p.key]).length > 1);
    const longest = message ?? cuttable.sort((x, y) => String(y.holder[y.key]).length - String(x.holder[x.key]).length)[0];
    const text = longest ? String(longest.holder[longest.key]) : "";
    if (!longest || text.length <= 1) break;
    // Enough characters off the end to save the excess and the ellipsis's three bytes.
    const chars = [...text];
    let keep = chars.length;
    for (let saved = 0; keep > 0 && saved < size - BUDGET + 3; ) saved += utf8Length(chars[--keep]);
    longest.holder[longest.key] = chars.slice(0, keep).join("") + "…";
    cut.add(longest.path.replace(/^content\./, ""));
    size = utf8Length(JSON.stringify(content));
  }
  return { content, cut: [...cut] };
}
