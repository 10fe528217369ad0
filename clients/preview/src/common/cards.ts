import type { Activity, ActivityAlert } from "../../../typescript/src/index.js";
import {
  appStaleDate, barDirection, barFill, Chronometer, chronometerOf, percentText, progressOf, tapTarget, TapTarget, timerBar, TimerBar, titleOf,
} from "../../../typescript/src/liveActivityRules.js";
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
  /** When the last start or update arrived (ms): a countdown's bar runs from it, the app's stale rule counts from it. */
  updatedAt: number;
  /**
   * When the iOS app would mark it stale (ms): its own rule, since lanpush set no `stale_date` (a `stale_date` of
   * lanpush's comes back as the `stale` phase instead). Null: lanpush decides.
   */
  staleAt: number | null;
}

export const ALERT_MS = 6000;

export function newView(act: Activity): ActView {
  const view: ActView = { act, alert: null, alertUntil: 0, remaining: null, updatedAt: Date.now(), staleAt: null };
  noteRemaining(view, true);
  noteStale(view);
  return view;
}

/** The activity changed: keep the view's anchors, take the new state. */
export function updateView(view: ActView, act: Activity, alert?: ActivityAlert): void {
  const changed = view.act !== act;
  view.act = act;
  if (changed) view.updatedAt = Date.now();
  noteRemaining(view, false);
  noteStale(view);
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

function noteStale(view: ActView): void {
  view.staleAt = view.act.stale_date === undefined ? appStaleDate(view.act.state, view.updatedAt) : null;
}

/** Stale on the phone: by lanpush's `stale_date` (the phase), or by the app's own rule once its time has come. */
export function staleSource(view: ActView, now = Date.now()): "lanpush" | "app" | null {
  if (view.act.phase === "stale") return "lanpush";
  if (view.act.phase === "active" && view.staleAt !== null && now >= view.staleAt) return "app";
  return null;
}

export interface PlainView {
  s: Loose;
  title: string;
  bg: Color;
  fg: Color;
  icon: Color | null;
  hasBar: boolean;
  /** The progress as the app reads it: rounded `progress` over rounded `progress_max`, clamped. */
  frac: number;
  /** How much of the bar is filled: `progress_bar_direction: decreasing` fills what remains. */
  fill: number;
  pct: string | null;
  bar: Color;
  timer: Chronometer | null;
  /** The bar under a running timer, when there is no static one. */
  timerBar: TimerBar | null;
  critical: string | null;
  message: string;
  direction: "increasing" | "decreasing" | null;
  tap: TapTarget | null;
}

export function plainView(act: Activity, updatedAt = Date.now()): PlainView {
  const s = (act.state || {}) as Loose;
  const bg = parseColor(s.background_color) || BLACK;
  const fg = parseColor(s.text_color) || contrastOf(bg);
  const icon = parseColor(s.color);
  const p = progressOf(s);
  const now = Date.now();
  return {
    s, bg, fg, icon, title: titleOf(act), hasBar: p !== null,
    frac: p ? clamp(p.fraction, 0, 1) : 0,
    fill: barFill(s) ?? 0,
    pct: p ? percentText(p.fraction) : null,
    bar: parseColor(s.progress_bar_color) || icon || HA_BLUE, // the docs: falls back to the icon colour
    timer: chronometerOf(s, now),
    timerBar: timerBar(s, now, updatedAt),
    critical: typeof s.critical_text === "string" && s.critical_text !== "" ? s.critical_text : null,
    message: typeof s.message === "string" ? s.message : "",
    direction: barDirection(s),
    tap: tapTarget(isTemplate(s) ? s.template.tap_url ?? s.url : s.url),
  };
}

/** A running timer as the iOS app draws it: a bounded count-up stops at its end; a countdown turns into a count-up. */
function timerHTML(field: string, t: Chronometer, style = "", extra = ""): string {
  if (t.kind === "bounded") return timerSpan(field, "bounded", t.start, style, `${extra} data-kind="bounded"`, "timer", t.end);
  if (t.kind === "countup") return timerSpan(field, "up", t.since, style, `${extra} data-kind="countup"`);
  return timerSpan(field, "auto", t.end, style, `${extra} data-kind="countdown"`);
}

/** The message line, or — with `chronometer` — the timer. */
function lineHTML(v: PlainView): string {
  return v.timer ? timerHTML("timer", v.timer) : `<span data-field="message">${esc(v.message)}</span>`;
}

/** The static bar, or a running timer's (which the page's ticker animates). */
function plainBarHTML(v: PlainView): string {
  if (v.hasBar) return barHTML("progress-bar", v.fill, v.bar, v.direction);
  const t = v.timerBar;
  if (!t) return "";
  return barHTML("timer-bar", t.fill, v.bar, t.drains ? "decreasing" : "increasing", "bar",
    ` data-timer-bar data-from="${Math.round(t.from)}" data-to="${Math.round(t.to)}" data-drains="${t.drains}"`);
}

function lockPlain(act: Activity, v: PlainView): string {
  const trailing = v.pct != null
    ? `<div class="la-trail" data-field="trailing" data-source="progress">${v.pct}</div>`
    : v.critical != null ? `<div class="la-trail" data-field="trailing" data-source="critical_text">${esc(v.critical)}</div>` : "";
  return `<div class="la-row">${stateIcon("icon", v.s, v.icon || v.fg)}<div class="la-main">` +
    `<div class="la-title" data-field="title">${esc(v.title)}</div>` +
    `<div class="la-line">${lineHTML(v)}</div></div>${trailing}</div>` + plainBarHTML(v);
}

export function badgeHTML(view: ActView): string {
  const act = view.act;
  const stale = staleSource(view);
  if (stale) return `<div class="badge stale" data-field="phase-badge" data-source="${stale}">Stale · waiting for an update</div>`;
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
  const v = plainView(act, view.updatedAt);
  const inner = isTemplate(act.state) ? templateView(view, v.fg).body : lockPlain(act, v);
  // A tap opens what the phone opens (`data-tap-href`; the pages' click handler follows it).
  const tap = v.tap ? ` data-tap="${v.tap.kind}" data-url="${esc(v.tap.raw)}" data-tap-href="${esc(v.tap.href)}"` : "";
  return `${badgeHTML(view)}${alertHTML(view)}<div class="la-card" data-field="card" data-background="${v.bg.hex}" ` +
    `data-text-color="${v.fg.hex}"${tap} style="background:${v.bg.css};color:${v.fg.css}">${inner}</div>`;
}

/** What the island presentations need, computed once per render. */
export interface Rendered {
  v: PlainView;
  tv: TemplateView | null;
}

export function rendered(view: ActView): Rendered {
  return { v: plainView(view.act, view.updatedAt), tv: isTemplate(view.act.state) ? templateView(view, WHITE) : null };
}

export function minimalHTML(view: ActView, r: Rendered, region: string): string {
  const act = view.act;
  const frac = r.tv ? r.tv.ring : r.v.hasBar ? r.v.fill : null;
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
      : v.timer ? timerHTML("compact-trailing", v.timer, v.icon ? `color:${v.icon.css}` : "", ' data-source="timer"')
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
      `<div class="dx-title" data-field="expanded-title">${esc(v.title)}</div>` +
      `<div class="dx-line">${lineHTML(v)}</div></div>${trailing}</div>` + plainBarHTML(v);
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
export function markActivity(el: HTMLElement, device: string, view: ActView): void {
  const act = view.act;
  el.dataset.deviceId = device;
  el.dataset.tag = act.tag;
  el.dataset.phase = act.phase;
  el.dataset.template = isTemplate(act.state) ? String((act.state as Loose).template.template) : "none";
  el.dataset.relevance = isNum(act.relevance_score) ? String(act.relevance_score) : "";
  const stale = staleSource(view);
  if (stale) el.dataset.stale = stale;
  else delete el.dataset.stale;
}

/**
 * Views whose staleness changed since it was last drawn (the app's rule turns an activity stale by the clock, with
 * no frame): the pages' tickers redraw them.
 */
export function staleChanged(view: ActView & { staleDrawn?: string | null }, now: number): boolean {
  const stale = staleSource(view, now);
  if ((view.staleDrawn ?? null) === stale) return false;
  view.staleDrawn = stale;
  return true;
}

/**
 * A tap on a card opens what the phone opens: a web address in a new tab, a Home Assistant path in the companion
 * app (its `homeassistant://navigate` link), as the apps' `url` does.
 */
export function followTaps(root: HTMLElement): void {
  root.addEventListener("click", (e) => {
    const card = (e.target as Element).closest<HTMLElement>("[data-tap-href]");
    if (!card || (e.target as Element).closest("button, a, input")) return;
    const href = card.dataset.tapHref!;
    if (card.dataset.tap === "url" && /^https?:/i.test(href)) window.open(href, "_blank", "noopener");
    else window.location.assign(href);
  });
}
