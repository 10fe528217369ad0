/** Small helpers every page uses: DOM lookups, HTML escaping, number checks. */

/** Payload JSON as the pages read it: untrusted, checked field by field where it is used (hence `any`). */
export type Loose = { [key: string]: any };

export function $<E extends Element = HTMLElement>(selector: string, root: ParentNode = document): E {
  const el = root.querySelector<E>(selector);
  if (!el) throw new Error(`missing element ${selector}`);
  return el;
}

export function $opt<E extends Element = HTMLElement>(selector: string, root: ParentNode = document): E | null {
  return root.querySelector<E>(selector);
}

export function $$<E extends Element = HTMLElement>(selector: string, root: ParentNode = document): E[] {
  return Array.from(root.querySelectorAll<E>(selector));
}

const ESC: { [c: string]: string } = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Every value a payload supplies goes through this before it reaches innerHTML. */
export function esc(v: unknown): string {
  return String(v == null ? "" : v).replace(/[&<>"']/g, (c) => ESC[c]);
}

export function isNum(v: unknown): v is number {
  return typeof v === "number" && isFinite(v);
}

export function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

export function pad(n: number): string {
  return (n < 10 ? "0" : "") + n;
}

/** A JSON value shortened for one log line. */
export function short(v: unknown): string {
  const s = JSON.stringify(v);
  return s && s.length > 400 ? s.slice(0, 400) + "…" : s ?? "";
}

/** Reads a token (or other value) from the query string and removes it from the address bar. */
export function takeQueryParam(name: string): string | null {
  const params = new URLSearchParams(location.search);
  const value = params.get(name);
  if (value === null) return null;
  params.delete(name);
  const rest = params.toString();
  history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
  return value;
}

/** localStorage that never throws (private mode, storage disabled). */
export const storage = {
  get(key: string): string | null {
    try {
      return localStorage.getItem(key);
    } catch {
      return null;
    }
  },
  set(key: string, value: string): void {
    try {
      localStorage.setItem(key, value);
    } catch {
      /* private mode or full: the page still works, it just forgets */
    }
  },
  remove(key: string): void {
    try {
      localStorage.removeItem(key);
    } catch {
      /* as above */
    }
  },
};
