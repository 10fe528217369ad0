import { AIVI_BLUE, Color, parseColor, TRACK_GRAY, withAlpha } from "./color.js";
import { clamp, esc, Loose } from "./dom.js";
import { templateIcon } from "./icons.js";
import { timerSpan } from "./time.js";
import type { ActView } from "./cards.js";

/**
 * Aivi's templates (Aivi's template docs): `progress` (simple bar, or 1–4 segments `split` with gaps or
 * `layered` on one track, hatched tracks, labels), `monitor` (two columns, the primary one emphasized,
 * `time_since` / `time_until` values as live counters) and `generic` (state, percentage, bar, remaining time).
 */
export interface TemplateView {
  /** The Lock Screen / expanded content. */
  body: string;
  /** The compact Dynamic Island's trailing value. */
  compact: string;
  /** The minimal presentation's progress ring (null: none). */
  ring: number | null;
  ringColor?: Color;
}

export function isTemplate(state: Loose): boolean {
  const t = state && state.template;
  return !!(t && typeof t === "object" && ["progress", "monitor", "generic"].includes(t.template));
}

/** A bar filled to `frac` from the leading edge; `direction` is the payload's `progress_bar_direction`, when it has one. */
export function barHTML(field: string, frac: number, color: Color, direction: string | null = null, cls = "bar", extra = ""): string {
  const fill = field === "progress-bar" ? "progress-fill" : field + "-fill";
  return `<div class="${cls}" data-field="${field}" data-color="${color.hex}" data-value="${frac.toFixed(4)}"` +
    `${direction ? ` data-direction="${direction}"` : ""}${extra}><div class="fill" data-field="${fill}" ` +
    `style="width:${(frac * 100).toFixed(2)}%;background:${color.css}"></div></div>`;
}

export function valueHTML(v: unknown, field: string, cls = ""): string {
  if (!v || typeof v !== "object") return "";
  const o = v as Loose;
  if (o.value == null) return "";
  const c = parseColor(o.text_color, true);
  const style = c ? `color:${c.css}` : "";
  if (o.formatter === "time_since" || o.formatter === "time_until") {
    const t = Date.parse(o.value);
    if (isFinite(t)) {
      return timerSpan(field, o.formatter === "time_since" ? "up" : "down", t, style, ` data-formatter="${o.formatter}"`, `timer tv ${cls}`);
    }
  }
  return `<span class="tv ${cls}" data-field="${field}"${style ? ` style="${style}"` : ""}>${esc(o.value)}</span>`;
}

function trackBackground(track: Color | null, hatched: boolean): string {
  const base = track || TRACK_GRAY;
  if (hatched) return `repeating-linear-gradient(135deg, ${withAlpha(base, 0.85)} 0 2px, ${withAlpha(base, 0.18)} 2px 6px)`;
  return withAlpha(base, track ? 0.55 : 0.35);
}

function templateBar(p: Loose, fallback: Color): string {
  if (!p || typeof p !== "object") return "";
  const value = clamp(+p.value || 0, 0, 1);
  if (p.style === "segmented" && Array.isArray(p.segments)) {
    const display = p.display === "layered" ? "layered" : "split";
    let start = 0;
    const segs: string[] = [];
    const fills: string[] = [];
    const labels: string[] = [];
    (p.segments as Loose[]).forEach((g, i) => {
      const share = Math.max(0, +g.value || 0);
      const fill = parseColor(g.fill_color, true) || fallback;
      const hatched = g.track_fill === "hatched";
      const track = trackBackground(parseColor(g.track_color, true), hatched);
      const within = share > 0 ? clamp((value - start) / share, 0, 1) : 0;
      const attrs = `data-segment data-index="${i}" data-share="${share}" data-fill-color="${fill.hex}" ` +
        `data-track-fill="${hatched ? "hatched" : "solid"}" data-filled="${within.toFixed(3)}" style="flex:${share} 1 0"`;
      if (display === "split") {
        segs.push(`<div class="seg" ${attrs}><div class="seg-track" style="background:${track}"></div>` +
          `<div class="seg-fill" style="width:${(within * 100).toFixed(2)}%;background:${fill.css}"></div></div>`);
      } else {
        segs.push(`<div class="zone" ${attrs}><div class="seg-track" style="background:${track}"></div></div>`);
        fills.push(`<div class="zone" style="flex:${share} 1 0;background:${fill.css}"></div>`);
      }
      labels.push(`<div class="seg-label" data-field="segment-label" data-index="${i}" style="flex:${share} 1 0">${esc(g.label || "")}</div>`);
      start += share;
    });
    const inner = display === "layered"
      ? `<div class="zones">${segs.join("")}</div><div class="zones fills" style="clip-path:inset(0 ${(100 - value * 100).toFixed(2)}% 0 0)">${fills.join("")}</div>`
      : segs.join("");
    const hasLabels = (p.segments as Loose[]).some((g) => g.label);
    return `<div class="segbar ${display}" data-field="segments" data-style="segmented" data-display="${display}" ` +
      `data-count="${p.segments.length}" data-value="${value}">${inner}</div>` +
      (hasLabels ? `<div class="seg-labels ${display}">${labels.join("")}</div>` : "");
  }
  const color = parseColor(p.color, true) || fallback;
  return barHTML("template-bar", value, color, null, "bar tbar", ' data-style="simple"');
}

function accentOf(t: Loose): Color {
  const spec = t.icon;
  return (spec && typeof spec === "object" && parseColor(spec.primary_color, true)) || AIVI_BLUE;
}

function progressView(t: Loose, fg: Color): TemplateView {
  const accent = accentOf(t);
  const p: Loose = t.progress || {};
  const segmented = p.style === "segmented";
  const foot = t.footer_left || t.footer_right
    ? `<div class="tp-foot"><span class="grow">${valueHTML(t.footer_left, "footer-left")}</span>${valueHTML(t.footer_right, "footer-right")}</div>` : "";
  const value = clamp(+p.value || 0, 0, 1);
  return {
    body: `<div class="tpl tp" data-region="template-progress" data-style="${segmented ? "segmented" : "simple"}"` +
      `${segmented ? ` data-display="${p.display === "layered" ? "layered" : "split"}"` : ""}>` +
      `<div class="tp-head">${templateIcon("icon", t.icon, fg)}<span class="grow">${valueHTML(t.header_left, "header-left", "big")}</span>` +
      `${valueHTML(t.header_right, "header-right")}</div>${templateBar(p, accent)}${foot}</div>`,
    compact: t.compact_value ? valueHTML(t.compact_value, "compact-trailing")
      : t.header_right ? valueHTML(t.header_right, "compact-trailing")
        : `<span data-field="compact-trailing">${Math.round(value * 100)}%</span>`,
    ring: value,
    ringColor: parseColor(p.color, true) || accent,
  };
}

function monitorView(t: Loose, fg: Color): TemplateView {
  const primary = t.primary_column === "right" ? "right" : "left";
  const cols = ["left", "right"].filter((k) => t[k + "_column"]).map((k) => {
    const c: Loose = t[k + "_column"];
    const isPrimary = k === primary;
    return `<div class="tm-col${isPrimary ? " primary" : ""}" data-column="${k}" data-primary="${isPrimary}">` +
      (c.header ? `<div class="tm-h" data-field="column-header">${esc(c.header)}</div>` : "") +
      `<div class="tm-v">${valueHTML(c.value, "column-value")}</div>` +
      (c.footer ? `<div class="tm-f" data-field="column-footer">${esc(c.footer)}</div>` : "") + "</div>";
  });
  const pc: Loose | undefined = t[primary + "_column"] || t.left_column || t.right_column;
  return {
    body: `<div class="tpl tm" data-region="template-monitor" data-primary-column="${primary}">${templateIcon("icon", t.icon, fg)}` +
      `<div class="tm-cols" data-count="${cols.length}">${cols.join("")}</div></div>`,
    compact: pc ? valueHTML(pc.value, "compact-trailing") : "",
    ring: null,
  };
}

/** generic (Aivi's legacy template): bar, state, remaining time counting down from the update that carried it. */
function genericView(t: Loose, fg: Color, view: ActView): TemplateView {
  const accent = accentOf(t);
  const value = clamp(+t.progress || 0, 0, 1);
  const rem = view.remaining ? `<div class="tg-rem">${timerSpan("remaining", "down", view.remaining.end)} left</div>` : "";
  return {
    body: `<div class="tpl tg" data-region="template-generic"><div class="tg-row">${templateIcon("icon", t.icon, fg)}` +
      `<div class="grow"><div class="tg-state" data-field="generic-state">${esc(t.state || "")}</div>${rem}</div>` +
      `<div class="tg-pct" data-field="generic-percent">${Math.round(value * 100)}%</div></div>` +
      `${barHTML("template-bar", value, accent, null, "bar tbar", ' data-style="generic"')}</div>`,
    compact: view.remaining ? timerSpan("compact-trailing", "down", view.remaining.end)
      : `<span data-field="compact-trailing">${Math.round(value * 100)}%</span>`,
    ring: value,
    ringColor: accent,
  };
}

/** Lock Screen (and expanded) content of an Aivi template; compact trailing; progress value for the minimal ring. */
export function templateView(view: ActView, fg: Color): TemplateView {
  const t = (view.act.state as Loose).template as Loose;
  if (t.template === "progress") return progressView(t, fg);
  if (t.template === "monitor") return monitorView(t, fg);
  return genericView(t, fg, view);
}
