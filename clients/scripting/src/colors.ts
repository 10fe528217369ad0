import type { Color } from "scripting";

/**
 * Colors as Home Assistant payloads and Aivi templates name them, turned into what the Scripting app draws.
 * HA accepts hex (`#RGB`, `#RRGGBB`, `#AARRGGBB`) and CSS names; Aivi uses SwiftUI's named system colors.
 */
const CSS: { [name: string]: string } = {
  black: "#000000", white: "#FFFFFF", red: "#FF0000", green: "#008000", blue: "#0000FF", yellow: "#FFFF00",
  orange: "#FFA500", purple: "#800080", pink: "#FFC0CB", gray: "#808080", grey: "#808080", silver: "#C0C0C0",
  navy: "#000080", teal: "#008080", cyan: "#00FFFF", aqua: "#00FFFF", magenta: "#FF00FF", fuchsia: "#FF00FF",
  lime: "#00FF00", maroon: "#800000", olive: "#808000", brown: "#A52A2A", gold: "#FFD700", indigo: "#4B0082",
  violet: "#EE82EE", coral: "#FF7F50", salmon: "#FA8072", tomato: "#FF6347", crimson: "#DC143C", khaki: "#F0E68C",
  turquoise: "#40E0D0", darkblue: "#00008B", darkgreen: "#006400", darkred: "#8B0000", darkgray: "#A9A9A9",
  darkgrey: "#A9A9A9", lightgray: "#D3D3D3", lightgrey: "#D3D3D3", lightblue: "#ADD8E6", lightgreen: "#90EE90",
  skyblue: "#87CEEB", steelblue: "#4682B4", royalblue: "#4169E1", dodgerblue: "#1E90FF", forestgreen: "#228B22",
  seagreen: "#2E8B57", slategray: "#708090", slategrey: "#708090", midnightblue: "#191970", chocolate: "#D2691E",
  firebrick: "#B22222", orangered: "#FF4500", darkorange: "#FF8C00", goldenrod: "#DAA520", beige: "#F5F5DC",
  ivory: "#FFFFF0", lavender: "#E6E6FA", plum: "#DDA0DD", orchid: "#DA70D6", tan: "#D2B48C", wheat: "#F5DEB3",
};

/** Aivi's color identifiers are SwiftUI's system colors (Aivi template docs, "Color"). */
const AIVI: { [name: string]: Color } = {
  red: "systemRed", orange: "systemOrange", yellow: "systemYellow", green: "systemGreen", mint: "systemMint",
  teal: "systemTeal", cyan: "systemCyan", blue: "systemBlue", indigo: "systemIndigo", purple: "systemPurple",
  pink: "systemPink", brown: "systemBrown", gray: "systemGray", gray2: "systemGray2", gray3: "systemGray3",
  gray4: "systemGray4", gray5: "systemGray5", gray6: "systemGray6",
};

/** `#RRGGBB` for a HA color, or undefined when it is not one. */
export function hex(value: unknown): `#${string}` | undefined {
  if (typeof value !== "string") return undefined;
  const v = value.trim().toLowerCase();
  if (CSS[v]) return CSS[v] as `#${string}`;
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(v);
  if (!m) return undefined;
  let digits = m[1];
  if (digits.length === 3) digits = digits.split("").map((c) => c + c).join("");
  if (digits.length === 8) digits = digits.slice(2); // #AARRGGBB: the alpha is dropped
  return `#${digits.toUpperCase()}`;
}

/** A HA color or an Aivi name, whichever it is. */
export function color(value: unknown): Color | undefined {
  if (typeof value === "string" && AIVI[value.trim().toLowerCase()]) return AIVI[value.trim().toLowerCase()];
  return hex(value);
}

/** Black or white, whichever reads better on `background` (WCAG relative luminance). */
export function contrasting(background: `#${string}`): Color {
  const channel = (i: number) => {
    const c = parseInt(background.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return luminance > 0.179 ? "#000000" : "#FFFFFF";
}
