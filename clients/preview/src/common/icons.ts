import { Color, withAlpha, parseColor } from "./color.js";
import { esc, Loose } from "./dom.js";

/**
 * Material Design Icons as SVG paths. lanpushd links the whole MDI set (7.4.47, the version HA's frontend uses)
 * into its binary and serves it at /preview/mdi.json: `{version, count, icons: {slug: path}}`. Nothing is fetched
 * from anywhere else. A slug the set does not have (a typo, a removed icon) is drawn as a tinted circle with its
 * initials, the slug as its tooltip.
 */
export interface IconSet {
  version: string;
  count: number;
  icons: { [slug: string]: string };
}

let set: IconSet | null = null;

export function iconSet(): IconSet | null {
  return set;
}

export async function loadIcons(): Promise<IconSet | null> {
  try {
    const r = await fetch("/preview/mdi.json");
    const data = r.ok ? ((await r.json()) as IconSet) : null;
    if (data && data.icons) set = data;
  } catch {
    /* the gateway is away: initials until the next load */
  }
  return set;
}

export function hasGlyph(name: string | null | undefined): name is string {
  return !!(name && set && Object.prototype.hasOwnProperty.call(set.icons, name));
}

/** SF Symbols (Aivi's template icons) → the MDI glyph that fits, first match wins. */
const SF: { [sf: string]: string[] } = {
  washer: ["washing-machine"], dryer: ["tumble-dryer"], dishwasher: ["dishwasher"], bolt: ["flash"],
  "bolt.car": ["car-electric", "ev-station"], "ev.charger": ["ev-station"], car: ["car"], thermometer: ["thermometer"],
  "robotic.vacuum": ["robot-vacuum", "robot"], house: ["home"], bell: ["bell"], timer: ["timer"], clock: ["clock"],
  fan: ["fan"], lightbulb: ["lightbulb"], lock: ["lock"], drop: ["water"], flame: ["fire"], leaf: ["leaf"],
  battery: ["battery"], printer: ["printer"], oven: ["stove"], stove: ["stove"], sun: ["white-balance-sunny"],
  moon: ["weather-night"], cloud: ["weather-cloudy"], snowflake: ["snowflake"], tv: ["television"],
  speaker: ["speaker"], shippingbox: ["package-variant"], box: ["package-variant"], truck: ["truck-delivery", "truck"],
  gauge: ["gauge"], iphone: ["cellphone"], "air.conditioner": ["air-conditioner"], refrigerator: ["fridge"],
  door: ["door"], cart: ["cart"], "cup.and.saucer": ["coffee"], mug: ["coffee"], "figure.walk": ["walk"],
};

export function sfToMdi(name: string): string | null {
  const parts = String(name).toLowerCase().split(".").filter((p) => p && !["fill", "circle", "square", "badge"].includes(p));
  for (let n = parts.length; n > 0; n--) {
    for (const c of SF[parts.slice(0, n).join(".")] || []) if (hasGlyph(c)) return c;
  }
  for (const p of parts) if (hasGlyph(p)) return p;
  return null;
}

export function initials(name: string): string {
  const parts = String(name).replace(/^(mdi|sf):/, "").split(/[-._\s]+/).filter(Boolean);
  if (!parts.length) return "?";
  if (parts.length >= 2) return (parts[0][0] + parts[1][0]).toUpperCase();
  return parts[0][0].toUpperCase() + (parts[0][1] || "");
}

let gradients = 0;

/** One icon: the MDI path when the set has it, else the initials of the slug. */
export function glyph(field: string, label: string, name: string | null, color: Color | null, gradient?: [string, string] | null): string {
  const c = color ? color.css : "currentColor";
  const attrs = `data-field="${field}" data-icon="${esc(label)}" data-icon-color="${color ? color.hex : ""}"`;
  if (hasGlyph(name)) {
    let fill = "currentColor";
    let defs = "";
    if (gradient) {
      const id = `lp-grad-${++gradients}`;
      defs = `<defs><linearGradient id="${id}" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${gradient[0]}"/>` +
        `<stop offset="1" stop-color="${gradient[1]}"/></linearGradient></defs>`;
      fill = `url(#${id})`;
    }
    return `<span class="ic mdi" ${attrs} data-icon-glyph="svg" data-mdi="${esc(name)}" style="color:${c}" title="${esc(label)}">` +
      `<svg viewBox="0 0 24 24" aria-hidden="true">${defs}<path fill="${fill}" d="${esc(set!.icons[name])}"/></svg></span>`;
  }
  const why = set ? `not in Material Design Icons ${set.version}` : "the icon set is not loaded";
  return `<span class="ic fb" ${attrs} data-icon-glyph="fallback" style="color:${c}" title="${esc(label)} (${esc(why)})" ` +
    `aria-label="${esc(label)}"><span>${esc(initials(label || "HA"))}</span></span>`;
}

/** The `icon` of a plain activity (`mdi:slug`; HA's default when none). */
export function stateIcon(field: string, s: Loose, color: Color | null): string {
  if (typeof s.icon === "string" && s.icon) return glyph(field, s.icon, s.icon.replace(/^mdi:/, ""), color);
  return glyph(field, "", "home-assistant", color);
}

/** A template icon: an SF Symbol name or an Icon object (Aivi's template docs), mapped to MDI where it can be. */
export function templateIcon(field: string, spec: unknown, fg: Color): string {
  if (!spec || (typeof spec !== "string" && typeof spec !== "object")) return "";
  const o = (typeof spec === "object" ? spec : {}) as Loose;
  const name = typeof spec === "string" ? spec : String(o.name ?? "");
  const primary = parseColor(o.primary_color, true);
  const secondary = parseColor(o.secondary_color, true);
  const color = primary || fg;
  let gradient: [string, string] | null = null;
  if (o.color_rendering === "gradient") {
    gradient = [color.css, secondary && o.rendering_mode === "palette" ? secondary.css : withAlpha(color, 0.55)];
  }
  return glyph(field, "sf:" + name, sfToMdi(name), color, gradient);
}
