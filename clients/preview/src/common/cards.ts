import type { Activity, ActivityAlert } from "../../../typescript/src/index.js";
import { BLACK, Color, contrastOf, HA_BLUE, parseColor, WHITE } from "./color.js";
import { clamp, esc, isNum, Loose } from "./dom.js";
import { glyph, stateIcon, templateIcon } from "./icons.js";
import { barHTML, isTemplate, templateView, TemplateView } from "./templates.js";
import { timerSpan } from "./time.js";

/**
 * One activity as a phone draws it, following HA's Live Activity docs: the Lock Screen card and the three
 * Dynamic Island presentations. Both pages (the preview and the wall view) render through these functions,
 * as HTML strings built from escaped values.
 */
export interface ActView {
  act: Activity;
  /** An update's `alert`, shown on the card for a few seconds. */
  alert: ActivityAlert | null;
  alertUntil: number;
  /** generic.remaining_time is "seconds left" as of the update that carried it: anchored to its arrival. */
  remaining: { value: number; end: number } | null;
}

export const ALERT_MS = 6000;

export function newView(act: Activity): ActView {
  const view: ActView = { act, alert: null, alertUntil: 0, remaining: null };
  noteRemaining(view, true);
  return view;
}

/** The activity changed: keep the view's anchors, take the new state. */
export function updateView(view: ActView, act: Activity, alert?: ActivityAlert): void {
  view.act = act;
  noteRemaining(view, false);
  if (alert && typeof alert === "object") {
    view.alert = alert;
    view.alertUntil = Date.now() + ALERT_MS;
  }
}

function noteRemaining(view: ActView, force: boolean): void {
  const t = (view.act.state as Loose).template;
  const rt = t && t.template === "generic" && isNum(t.remaining_time) ? t.remaining_time : null;
  if (rt == null) {
    view.remaining = null;
    return;
  }
  if (force || !view.remaining || view.remaining.value !== rt) view.remaining = { value: rt, end: Date.now() + rt * 1000 };
}

export interface PlainView {
  s: Loose;
  bg: Color;
  fg: Color;
  icon: Color | null;
  hasBar: boolean;
  frac: number;
  pct: string | null;
  bar: Color;
  timer: boolean;
  critical: string | null;
  message: string;
  reverse: boolean;
}

export function plainView(act: Activity): PlainView {
  const s = (act.state || {}) as Loose;
  const bg = parseColor(s.background_color) || BLACK;
  const fg = parseColor(s.text_color) || contrastOf(bg);
  const icon = parseColor(s.color);
  const hasBar = isNum(s.progress) && isNum(s.progress_max) && s.progress_max > 0;
  const frac = hasBar ? clamp(s.progress / s.progress_max, 0, 1) : 0;
  return {
    s, bg, fg, icon, hasBar, frac,
    pct: hasBar ? Math.round(frac * 100) + "%" : null,
    bar: parseColor(s.progress_bar_color) || icon || HA_BLUE, // the docs: falls back to the icon colour
    timer: s.chronometer === true && isNum(s.countdown_end),
    critical: typeof s.critical_text === "string" && s.critical_text !== "" ? s.critical_text : null,
    message: typeof s.message === "string" ? s.message : "",
    reverse: typeof s.progress_bar_direction === "string" && /rtl|right|revers|backward|down/i.test(s.progress_bar_direction),
  };
}

/** The message line, or — with `chronometer` — a timer counting down to `countdown_end`, then up from it. */
function lineHTML(v: PlainView): string {
  return v.timer ? timerSpan("timer", "auto", v.s.countdown_end * 1000) : `<span data-field="message">${esc(v.message)}</span>`;
}

function lockPlain(act: Activity, v: PlainView): string {
  const trailing = v.pct != null
    ? `<div class="la-trail" data-field="trailing" data-source="progress">${v.pct}</div>`
    : v.critical != null ? `<div class="la-trail" data-field="trailing" data-source="critical_text">${esc(v.critical)}</div>` : "";
  return `<div class="la-row">${stateIcon("icon", v.s, v.icon || v.fg)}<div class="la-main">` +
    `<div class="la-title" data-field="title">${esc(act.attributes.title || "")}</div>` +
    `<div class="la-line">${lineHTML(v)}</div></div>${trailing}</div>` +
    (v.hasBar ? barHTML("progress-bar", v.frac, v.bar, v.reverse) : "");
}

export function badgeHTML(act: Activity): string {
  if (act.phase === "stale") return `<div class="badge stale" data-field="phase-badge">Stale · waiting for an update</div>`;
  if (act.phase === "ended") {
    return `<div class="badge ended" data-field="phase-badge">Ended` +
      (isNum(act.dismissal_date) ? ` · dismissed in ${timerSpan("dismissal", "down", act.dismissal_date * 1000)}` : "") + "</div>";
  }
  return "";
}

function alertHTML(view: ActView): string {
  if (!view.alert || Date.now() > view.alertUntil) return "";
  return `<div class="la-alert" data-field="alert"><b>${esc(view.alert.title || "")}</b> ${esc(view.alert.body || "")}</div>`;
}

/** The Lock Screen card: phase badge, alert, and the card itself in the payload's colours. */
export function lockHTML(view: ActView): string {
  const act = view.act;
  const v = plainView(act);
  const inner = isTemplate(act.state) ? templateView(view, v.fg).body : lockPlain(act, v);
  return `${badgeHTML(act)}${alertHTML(view)}<div class="la-card" data-field="card" data-background="${v.bg.hex}" ` +
    `data-text-color="${v.fg.hex}" style="background:${v.bg.css};color:${v.fg.css}">${inner}</div>`;
}

/** What the island presentations need, computed once per render. */
export interface Rendered {
  v: PlainView;
  tv: TemplateView | null;
}

export function rendered(view: ActView): Rendered {
  return { v: plainView(view.act), tv: isTemplate(view.act.state) ? templateView(view, WHITE) : null };
}

export function minimalHTML(view: ActView, r: Rendered, region: string): string {
  const act = view.act;
  const frac = r.tv ? r.tv.ring : r.v.hasBar ? r.v.frac : null;
  const color = r.tv ? r.tv.ringColor ?? WHITE : r.v.bar;
  const ring = frac == null ? "" : `<div class="ring" data-field="minimal-ring" data-value="${frac.toFixed(3)}" ` +
    `style="background:conic-gradient(${color.css} ${(frac * 360).toFixed(1)}deg, rgba(255,255,255,.16) 0)"></div>`;
  const icon = r.tv ? templateIcon("minimal-icon", (act.state as Loose).template.icon, WHITE) || glyph("minimal-icon", "", null, WHITE)
    : stateIcon("minimal-icon", r.v.s, r.v.icon || WHITE);
  return `<div class="di di-minimal" data-region="${region}" data-tag="${esc(act.tag)}">${ring}<div class="ring-hole">${icon}</div></div>`;
}

export function compactHTML(view: ActView, r: Rendered, region: string): string {
  const act = view.act;
  const v = r.v;
  let lead: string;
  let trail: string;
  if (r.tv) {
    lead = templateIcon("compact-icon", (act.state as Loose).template.icon, WHITE) || glyph("compact-icon", "", null, WHITE);
    trail = r.tv.compact;
  } else {
    lead = stateIcon("compact-icon", v.s, v.icon || WHITE);
    // HA's docs: the compact Dynamic Island always shows critical_text (the timer or the percentage only without it)
    const tint = v.icon ? ` style="color:${v.icon.css}"` : "";
    trail = v.critical != null ? `<span data-field="compact-trailing" data-source="critical_text"${tint}>${esc(v.critical)}</span>`
      : v.timer ? timerSpan("compact-trailing", "auto", v.s.countdown_end * 1000, v.icon ? `color:${v.icon.css}` : "", ' data-source="timer"')
        : v.pct != null ? `<span data-field="compact-trailing" data-source="progress"${tint}>${v.pct}</span>` : "";
  }
  return `<div class="di di-compact" data-region="${region}" data-tag="${esc(act.tag)}"><span class="di-lead">${lead}</span>` +
    `<span class="di-cam"></span><span class="di-trail">${trail}</span></div>`;
}

export function expandedHTML(view: ActView, r: Rendered): string {
  const act = view.act;
  const v = r.v;
  let inner: string;
  if (r.tv) inner = r.tv.body;
  else {
    const trailing = v.pct != null ? `<div class="dx-trail" data-field="expanded-trailing" data-source="progress">${v.pct}</div>`
      : v.critical != null ? `<div class="dx-trail" data-field="expanded-trailing" data-source="critical_text">${esc(v.critical)}</div>` : "";
    inner = `<div class="dx-top">${stateIcon("expanded-icon", v.s, v.icon || WHITE)}<div class="grow">` +
      `<div class="dx-title" data-field="expanded-title">${esc(act.attributes.title || "")}</div>` +
      `<div class="dx-line">${lineHTML(v)}</div></div>${trailing}</div>` + (v.hasBar ? barHTML("progress-bar", v.frac, v.bar, v.reverse) : "");
  }
  return `<div class="di di-expanded" data-region="island-expanded" data-tag="${esc(act.tag)}">${inner}</div>`;
}

/** The order a phone shows them: relevance_score (higher first), then newest, then tag. */
export function relevanceOrder<T extends { act: Activity }>(views: Iterable<T>): T[] {
  return Array.from(views).sort((a, b) =>
    (b.act.relevance_score ?? 0) - (a.act.relevance_score ?? 0) ||
    (b.act.attributes.started_at || 0) - (a.act.attributes.started_at || 0) || (a.act.tag < b.act.tag ? -1 : 1));
}

/** The card's element attributes tools and tests read. */
export function markActivity(el: HTMLElement, device: string, act: Activity): void {
  el.dataset.deviceId = device;
  el.dataset.tag = act.tag;
  el.dataset.phase = act.phase;
  el.dataset.template = isTemplate(act.state) ? String((act.state as Loose).template.template) : "none";
  el.dataset.relevance = isNum(act.relevance_score) ? String(act.relevance_score) : "";
}
