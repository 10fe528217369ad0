import { $$, pad } from "./dom.js";

/**
 * Live timers tick on the page, never by pushes: a `[data-timer]` element carries its mode and target time
 * (`data-t`, ms), and one 250 ms ticker rewrites the text of every such element on the page.
 */
export type TimerMode = "auto" | "down" | "up";

export function fmtDur(sec: number): string {
  sec = Math.max(0, Math.floor(sec));
  const h = Math.floor(sec / 3600);
  const m = Math.floor((sec % 3600) / 60);
  const s = sec % 60;
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** auto: count down to t, then up from it (a chronometer); down: to t, stops at 0:00; up: since t. */
export function timerText(mode: TimerMode, t: number, now: number): string {
  const d = (t - now) / 1000;
  if (mode === "up") return fmtDur(-d);
  if (mode === "down") return fmtDur(Math.ceil(d));
  return d > 0 ? fmtDur(Math.ceil(d)) : fmtDur(-d);
}

export function timerMode(mode: TimerMode, t: number, now: number): "down" | "up" {
  return mode === "auto" ? (t > now ? "down" : "up") : mode;
}

export function timerSpan(field: string, mode: TimerMode, t: number, style = "", extra = "", cls = "timer"): string {
  const now = Date.now();
  return `<span class="${cls}" data-field="${field}" data-timer="${mode}" data-t="${Math.round(t)}" ` +
    `data-counting="${timerMode(mode, t, now)}"${style ? ` style="${style}"` : ""}${extra}>${timerText(mode, t, now)}</span>`;
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
    const mode = el.dataset.timer as TimerMode;
    const text = timerText(mode, t, now);
    if (el.textContent !== text) el.textContent = text;
    const counting = timerMode(mode, t, now);
    if (el.dataset.counting !== counting) el.dataset.counting = counting;
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
