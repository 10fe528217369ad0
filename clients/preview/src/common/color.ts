/**
 * Colours as payloads give them: `#RGB`, `#RRGGBB`, `#AARRGGBB` (HA / Android order), CSS names, and Aivi's
 * SwiftUI system colour names (Aivi's template docs) in their dark-appearance values, as a Lock Screen uses.
 */
export interface Color {
  r: number;
  g: number;
  b: number;
  a: number;
  hex: string;
  css: string;
}

const AIVI: { [name: string]: string } = {
  red: "#FF453A", orange: "#FF9F0A", yellow: "#FFD60A", green: "#30D158", mint: "#63E6E2", teal: "#40CBE0",
  cyan: "#64D2FF", blue: "#0A84FF", indigo: "#5E5CE6", purple: "#BF5AF2", pink: "#FF375F", brown: "#AC8E68",
  gray: "#8E8E93", gray2: "#636366", gray3: "#48484A", gray4: "#3A3A3C", gray5: "#2C2C2E", gray6: "#1C1C1E",
};

export function mkColor(r: number, g: number, b: number, a = 1): Color {
  const h = (x: number) => x.toString(16).padStart(2, "0");
  return { r, g, b, a, hex: "#" + h(r) + h(g) + h(b), css: a >= 1 ? `rgb(${r}, ${g}, ${b})` : `rgba(${r}, ${g}, ${b}, ${+a.toFixed(3)})` };
}

export function fromHex(h: string): Color | null {
  if (!/^[0-9a-f]+$/i.test(h)) return null;
  const n = (i: number) => parseInt(h.substr(i, 2), 16);
  if (h.length === 3) return mkColor(parseInt(h[0] + h[0], 16), parseInt(h[1] + h[1], 16), parseInt(h[2] + h[2], 16));
  if (h.length === 6) return mkColor(n(0), n(2), n(4));
  if (h.length === 8) return mkColor(n(2), n(4), n(6), n(0) / 255); // #AARRGGBB, as HA / Android write it
  return null;
}

const cache = new Map<string, Color | null>();
let probe: CanvasRenderingContext2D | null = null;

/** A CSS colour name, resolved by the browser itself. */
function named(name: string): Color | null {
  probe = probe ?? document.createElement("canvas").getContext("2d");
  if (!probe) return null;
  probe.fillStyle = "#010203";
  probe.fillStyle = name;
  const got = String(probe.fillStyle);
  if (got === "#010203") return null;
  if (got[0] === "#") return fromHex(got.slice(1));
  const m = got.match(/[\d.]+/g);
  return m ? mkColor(+m[0], +m[1], +m[2], m[3] == null ? 1 : +m[3]) : null;
}

/** With `aivi`, Aivi's names come first (its `green` is the system green, not CSS's). */
export function parseColor(input: unknown, aivi = false): Color | null {
  if (typeof input !== "string" || !input.trim()) return null;
  const key = (aivi ? "a:" : "c:") + input;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const s = input.trim();
  const lower = s.toLowerCase();
  let out: Color | null = null;
  if (aivi && AIVI[lower]) out = fromHex(AIVI[lower].slice(1));
  else if (s[0] === "#") out = fromHex(s.slice(1));
  else if (/^[a-z]+$/.test(lower)) out = named(lower);
  cache.set(key, out);
  return out;
}

export function withAlpha(c: Color, a: number): string {
  return `rgba(${c.r}, ${c.g}, ${c.b}, ${a * c.a})`;
}

function luminance(c: Color): number {
  const f = (v: number) => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
}

export const BLACK = mkColor(0, 0, 0);
export const WHITE = mkColor(255, 255, 255);
export const HA_BLUE = mkColor(3, 169, 244);
export const AIVI_BLUE = fromHex("0A84FF")!;
export const TRACK_GRAY = mkColor(142, 142, 147);

/** HA's Live Activity docs: text_color defaults to a colour that contrasts the background. */
export function contrastOf(bg: Color): Color {
  return luminance(bg) > 0.179 ? BLACK : WHITE;
}
