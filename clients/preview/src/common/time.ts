import { intervalFill } from "../../../typescript/src/liveActivityRules.js";
import { $$, pad } from "./dom.js";

/**
 * Live timers tick on the page, never by pushes: a `[data-timer]` element carries its mode and target time
 * (`data-t`, ms), and one 250 ms ticker rewrites the text of every such element on the page.
 */
export type TimerMode = "auto" | "down" | "up" | "bounded";

export function fmtDur(sec: number): string {
  sec = Math.max(0, Math.floor(sec));
  const h = Math.floor(sec / 3600);
  const m = Math.floor((sec % 3600) / 60);
  const s = sec % 60;
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/**
 * auto: count down to t, then up from it (a chronometer); down: to t, stops at 0:00; up: since t; bounded: up
 * since t, stopping at `end` (the iOS companion app's bounded count-up, `chronometer_start`).
 */
export function timerText(mode: TimerMode, t: number, now: number, end = Infinity): string {
  const d = (t - now) / 1000;
  if (mode === "bounded") return fmtDur((Math.min(now, end) - t) / 1000);
  if (mode === "up") return fmtDur(-d);
  if (mode === "down") return fmtDur(Math.ceil(d));
  return d > 0 ? fmtDur(Math.ceil(d)) : fmtDur(-d);
}

export function timerMode(mode: TimerMode, t: number, now: number, end = Infinity): "down" | "up" | "stopped" {
  if (mode === "bounded") return now >= end ? "stopped" : "up";
  return mode === "auto" ? (t > now ? "down" : "up") : mode;
}

export function timerSpan(field: string, mode: TimerMode, t: number, style = "", extra = "", cls = "timer", end?: number): string {
  const now = Date.now();
  const until = end === undefined ? "" : ` data-end="${Math.round(end)}"`;
  return `<span class="${cls}" data-field="${field}" data-timer="${mode}" data-t="${Math.round(t)}"${until} ` +
    `data-counting="${timerMode(mode, t, now, end)}"${style ? ` style="${style}"` : ""}${extra}>${timerText(mode, t, now, end)}</span>`;
}



export function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "in 5 min", "40 s ago" for a Unix time in seconds. */
export function relTime(sec: number): string {
  const d = Math.round(sec - Date.now() / 1000);
  const a = Math.abs(d);
  const s = a < 90 ? `${a} s` : a < 5400 ? `${Math.round(a / 60)} min` : `${(a / 3600).toFixed(1)} h`;
  return d >= 0 ? `in ${s}` : `${s} ago`;
}

/** `[data-field=clock]` / `[data-field=date]` elements: the Lock Screen's clock. */
export function tickClock(root: ParentNode): void {
  const d = new Date();
  for (const el of $$("[data-field=clock]", root)) el.textContent = `${d.getHours()}:${pad(d.getMinutes())}`;
  const date = d.toLocaleDateString(undefined, { weekday: "long", day: "numeric", month: "long" });
  for (const el of $$("[data-field=date]", root)) el.textContent = date;
}

function tickTimers(): void {
  const now = Date.now();
  for (const el of $$("[data-timer]")) {
    const t = Number(el.dataset.t);
    const end = el.dataset.end === undefined ? Infinity : Number(el.dataset.end);
    const mode = el.dataset.timer as TimerMode;
    const text = timerText(mode, t, now, end);
    if (el.textContent !== text) el.textContent = text;
    const counting = timerMode(mode, t, now, end);
    if (el.dataset.counting !== counting) el.dataset.counting = counting;
  }
  for (const bar of $$("[data-timer-bar]")) {
    const fill = intervalFill(Number(bar.dataset.from), Number(bar.dataset.to), bar.dataset.drains === "true", now);
    bar.dataset.value = fill.toFixed(4);
    const el = bar.firstElementChild as HTMLElement | null;
    if (el) el.style.width = `${(fill * 100).toFixed(2)}%`;
  }
}

/** Starts the page's timers: `each` runs on every 250 ms tick too (alerts expiring, offline markers). */
export function startTicking(each: (now: number) => void): void {
  setInterval(() => {
    tickTimers();
    each(Date.now());
  }, 250);
  setInterval(() => tickClock(document), 1000);
}
