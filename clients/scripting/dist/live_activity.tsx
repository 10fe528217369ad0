// src/live_activity.tsx
import {
  LiveActivity,
  LiveActivityUI,
  LiveActivityUIExpandedBottom,
  LiveActivityUIExpandedLeading,
  LiveActivityUIExpandedTrailing
} from "scripting";

// src/render.tsx
import { DateLabel as DateLabel2, HStack as HStack2, Image as Image2, ProgressView as ProgressView2, Spacer as Spacer2, Text as Text2, VStack as VStack2 } from "scripting";

// src/colors.ts
var CSS = {
  black: "#000000",
  white: "#FFFFFF",
  red: "#FF0000",
  green: "#008000",
  blue: "#0000FF",
  yellow: "#FFFF00",
  orange: "#FFA500",
  purple: "#800080",
  pink: "#FFC0CB",
  gray: "#808080",
  grey: "#808080",
  silver: "#C0C0C0",
  navy: "#000080",
  teal: "#008080",
  cyan: "#00FFFF",
  aqua: "#00FFFF",
  magenta: "#FF00FF",
  fuchsia: "#FF00FF",
  lime: "#00FF00",
  maroon: "#800000",
  olive: "#808000",
  brown: "#A52A2A",
  gold: "#FFD700",
  indigo: "#4B0082",
  violet: "#EE82EE",
  coral: "#FF7F50",
  salmon: "#FA8072",
  tomato: "#FF6347",
  crimson: "#DC143C",
  khaki: "#F0E68C",
  turquoise: "#40E0D0",
  darkblue: "#00008B",
  darkgreen: "#006400",
  darkred: "#8B0000",
  darkgray: "#A9A9A9",
  darkgrey: "#A9A9A9",
  lightgray: "#D3D3D3",
  lightgrey: "#D3D3D3",
  lightblue: "#ADD8E6",
  lightgreen: "#90EE90",
  skyblue: "#87CEEB",
  steelblue: "#4682B4",
  royalblue: "#4169E1",
  dodgerblue: "#1E90FF",
  forestgreen: "#228B22",
  seagreen: "#2E8B57",
  slategray: "#708090",
  slategrey: "#708090",
  midnightblue: "#191970",
  chocolate: "#D2691E",
  firebrick: "#B22222",
  orangered: "#FF4500",
  darkorange: "#FF8C00",
  goldenrod: "#DAA520",
  beige: "#F5F5DC",
  ivory: "#FFFFF0",
  lavender: "#E6E6FA",
  plum: "#DDA0DD",
  orchid: "#DA70D6",
  tan: "#D2B48C",
  wheat: "#F5DEB3"
};
var AIVI = {
  red: "systemRed",
  orange: "systemOrange",
  yellow: "systemYellow",
  green: "systemGreen",
  mint: "systemMint",
  teal: "systemTeal",
  cyan: "systemCyan",
  blue: "systemBlue",
  indigo: "systemIndigo",
  purple: "systemPurple",
  pink: "systemPink",
  brown: "systemBrown",
  gray: "systemGray",
  gray2: "systemGray2",
  gray3: "systemGray3",
  gray4: "systemGray4",
  gray5: "systemGray5",
  gray6: "systemGray6"
};
function hex(value) {
  if (typeof value !== "string")
    return void 0;
  const v = value.trim().toLowerCase();
  if (CSS[v])
    return CSS[v];
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(v);
  if (!m)
    return void 0;
  let digits = m[1];
  if (digits.length === 3)
    digits = digits.split("").map((c) => c + c).join("");
  if (digits.length === 8)
    digits = digits.slice(2);
  return `#${digits.toUpperCase()}`;
}
function color(value) {
  if (typeof value === "string" && AIVI[value.trim().toLowerCase()])
    return AIVI[value.trim().toLowerCase()];
  return hex(value);
}
function contrasting(background) {
  const channel = (i) => {
    const c = parseInt(background.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return luminance > 0.179 ? "#000000" : "#FFFFFF";
}

// src/icons.ts
var MDI_TO_SF = {
  "washing-machine": "washer",
  "tumble-dryer": "dryer",
  dishwasher: "dishwasher",
  "ev-station": "ev.charger",
  "ev-plug-type2": "ev.plug.ac.type.2",
  "car-electric": "bolt.car",
  car: "car",
  "car-battery": "minus.plus.batteryblock",
  battery: "battery.100",
  "battery-charging": "battery.100.bolt",
  "battery-50": "battery.50",
  "battery-low": "battery.25",
  "home-assistant": "house",
  home: "house",
  "home-outline": "house",
  door: "door.left.hand.closed",
  "door-open": "door.left.hand.open",
  "door-closed": "door.left.hand.closed",
  garage: "door.garage.closed",
  "garage-open": "door.garage.open",
  lock: "lock",
  "lock-open": "lock.open",
  "lock-open-variant": "lock.open",
  lightbulb: "lightbulb",
  "lightbulb-on": "lightbulb.fill",
  thermometer: "thermometer",
  "water-percent": "humidity",
  water: "drop",
  "water-boiler": "heater.vertical",
  fire: "flame",
  radiator: "heater.vertical",
  fan: "fan",
  "air-conditioner": "air.conditioner.horizontal",
  snowflake: "snowflake",
  bell: "bell",
  "bell-ring": "bell.badge",
  alert: "exclamationmark.triangle",
  "alert-circle": "exclamationmark.circle",
  information: "info.circle",
  timer: "timer",
  "timer-outline": "timer",
  "timer-sand": "hourglass",
  clock: "clock",
  "clock-outline": "clock",
  "package-variant": "shippingbox",
  "package-variant-closed": "shippingbox",
  "truck-delivery": "box.truck",
  "robot-vacuum": "robotic.vacuum",
  "robot-mower": "leaf",
  "power-plug": "powerplug",
  flash: "bolt",
  lightning: "bolt",
  "solar-power": "sun.max",
  "solar-panel": "sun.max",
  "weather-sunny": "sun.max",
  "weather-rainy": "cloud.rain",
  "weather-cloudy": "cloud",
  coffee: "cup.and.saucer",
  "coffee-maker": "cup.and.saucer",
  stove: "stove",
  oven: "oven",
  microwave: "microwave",
  printer: "printer",
  "printer-3d": "printer",
  music: "music.note",
  speaker: "hifispeaker",
  television: "tv",
  cellphone: "iphone",
  wifi: "wifi",
  account: "person",
  "account-group": "person.3",
  motion: "figure.walk",
  "motion-sensor": "sensor",
  "shield-home": "shield",
  "shield-check": "checkmark.shield",
  cctv: "video",
  camera: "camera",
  check: "checkmark",
  "check-circle": "checkmark.circle",
  close: "xmark",
  "trash-can": "trash",
  delete: "trash",
  calendar: "calendar",
  "map-marker": "mappin",
  airplane: "airplane",
  train: "tram",
  bus: "bus",
  bike: "bicycle",
  walk: "figure.walk",
  run: "figure.run",
  "food-fork-drink": "fork.knife",
  pot: "frying.pan",
  leaf: "leaf",
  sprinkler: "sprinkler",
  pool: "figure.pool.swim",
  "heat-pump": "heat.waves",
  gauge: "gauge.with.dots.needle.33percent"
};
var FALLBACK_SYMBOL = "circle.fill";
function sfSymbol(icon) {
  if (typeof icon !== "string")
    return FALLBACK_SYMBOL;
  const slug = icon.startsWith("mdi:") ? icon.slice(4) : icon;
  return MDI_TO_SF[slug] ?? FALLBACK_SYMBOL;
}

// src/content.ts
function display(content) {
  const s = content.state;
  const background = hex(s.background_color) ?? "#000000";
  const text = hex(s.text_color) ?? contrasting(background);
  const iconColor = color(s.color);
  const hasBar = typeof s.progress === "number" && typeof s.progress_max === "number" && s.progress_max > 0;
  const fraction = hasBar ? Math.min(1, Math.max(0, s.progress / s.progress_max)) : void 0;
  const percent = fraction === void 0 ? void 0 : `${Math.round(fraction * 100)}%`;
  const critical = typeof s.critical_text === "string" && s.critical_text !== "" ? s.critical_text : void 0;
  const timer = s.chronometer === true && typeof s.countdown_end === "number" ? s.countdown_end * 1e3 : void 0;
  const d = {
    title: content.title,
    message: typeof s.message === "string" ? s.message : "",
    topRight: percent ?? critical,
    compactTrailing: critical ?? percent,
    background,
    text,
    bar: color(s.progress_bar_color) ?? iconColor,
    icon: sfSymbol(s.icon),
    iconColor
  };
  if (timer !== void 0)
    d.timer = timer;
  if (fraction !== void 0)
    d.fraction = fraction;
  const url = typeof s.template?.tap_url === "string" ? s.template.tap_url : s.url;
  if (typeof url === "string" && /^[a-z][a-z0-9+.-]*:/i.test(url))
    d.url = url;
  return d;
}

// src/templates.tsx
import { DateLabel, HStack, Image, ProgressView, RoundedRectangle, Spacer, Text, VStack, ZStack } from "scripting";
var BAR_WIDTH = 300;
var BAR_HEIGHT = 8;
function hasTemplate(content) {
  const t = content.state.template;
  return typeof t === "object" && t !== null && typeof t.template === "string";
}
function template(content) {
  return content.state.template;
}
function Value({ value, size, fallback }) {
  if (!value || value.value === void 0)
    return null;
  const tint = color(value.text_color) ?? fallback;
  const formatter = value.formatter;
  if (formatter === "time_since" || formatter === "time_until") {
    const at = Date.parse(String(value.value));
    if (!Number.isNaN(at))
      return /* @__PURE__ */ createElement(DateLabel, { date: new Date(at), style: "timer", font: size, monospacedDigit: true, foregroundStyle: tint });
  }
  return /* @__PURE__ */ createElement(Text, { font: size, lineLimit: 1, foregroundStyle: tint }, String(value.value));
}
function TemplateIcon({ content, size }) {
  const icon = template(content).icon;
  const name = typeof icon === "string" ? icon : typeof icon === "object" && icon !== null ? String(icon.name) : "circle.fill";
  const tint = typeof icon === "object" && icon !== null ? color(icon.primary_color) : void 0;
  return /* @__PURE__ */ createElement(Image, { systemName: name, font: size, foregroundStyle: tint ?? "white" });
}
function SegmentedBar({ bar }) {
  const segments = Array.isArray(bar.segments) ? bar.segments : [];
  const value = Math.min(1, Math.max(0, Number(bar.value) || 0));
  const layered = bar.display === "layered";
  const gap = layered ? 0 : 3;
  let start = 0;
  const parts = segments.map((segment, i) => {
    const share = Math.max(0, Number(segment.value) || 0);
    const filled = share > 0 ? Math.min(1, Math.max(0, (value - start) / share)) : 0;
    start += share;
    const width = Math.max(2, share * BAR_WIDTH - gap);
    const track = color(segment.track_color) ?? "systemGray4";
    const hatched = segment.track_fill === "hatched";
    return /* @__PURE__ */ createElement(VStack, { key: i, alignment: "leading", spacing: 3 }, /* @__PURE__ */ createElement(ZStack, { alignment: "leading", frame: { width, height: BAR_HEIGHT } }, hatched ? /* @__PURE__ */ createElement(RoundedRectangle, { cornerRadius: BAR_HEIGHT / 2, stroke: track }) : /* @__PURE__ */ createElement(RoundedRectangle, { cornerRadius: BAR_HEIGHT / 2, fill: track }), /* @__PURE__ */ createElement(RoundedRectangle, { cornerRadius: BAR_HEIGHT / 2, fill: color(segment.fill_color) ?? "systemBlue", frame: { width: width * filled, height: BAR_HEIGHT } })), typeof segment.label === "string" ? /* @__PURE__ */ createElement(Text, { font: "caption", foregroundStyle: "secondaryLabel", frame: { width } }, segment.label) : null);
  });
  return /* @__PURE__ */ createElement(HStack, { spacing: gap, alignment: "top" }, parts);
}
function ProgressTemplate({ t, text }) {
  const bar = t.progress ?? {};
  return /* @__PURE__ */ createElement(VStack, { alignment: "leading", spacing: 6 }, /* @__PURE__ */ createElement(HStack, { spacing: 8 }, /* @__PURE__ */ createElement(TemplateIcon, { content: { tag: "", title: "", phase: "active", state: { template: t } }, size: 18 }), /* @__PURE__ */ createElement(Value, { value: t.header_left, size: "headline", fallback: text }), /* @__PURE__ */ createElement(Spacer, null), /* @__PURE__ */ createElement(Value, { value: t.header_right, size: "headline", fallback: text })), bar.style === "segmented" ? /* @__PURE__ */ createElement(SegmentedBar, { bar }) : /* @__PURE__ */ createElement(ProgressView, { value: Math.min(1, Math.max(0, Number(bar.value) || 0)), total: 1, tint: color(bar.color) ?? "systemBlue" }), /* @__PURE__ */ createElement(HStack, null, /* @__PURE__ */ createElement(Value, { value: t.footer_left, size: "caption", fallback: text }), /* @__PURE__ */ createElement(Spacer, null), /* @__PURE__ */ createElement(Value, { value: t.footer_right, size: "caption", fallback: text })));
}
function Column({ column, primary, text }) {
  if (!column)
    return null;
  return /* @__PURE__ */ createElement(VStack, { alignment: "leading", spacing: 2 }, typeof column.header === "string" ? /* @__PURE__ */ createElement(Text, { font: "caption", foregroundStyle: "secondaryLabel" }, column.header) : null, /* @__PURE__ */ createElement(Value, { value: column.value, size: primary ? "title3" : "body", fallback: text }), typeof column.footer === "string" ? /* @__PURE__ */ createElement(Text, { font: "caption", foregroundStyle: "secondaryLabel" }, column.footer) : null);
}
function MonitorTemplate({ t, text }) {
  const primary = t.primary_column === "right" ? "right" : "left";
  return /* @__PURE__ */ createElement(HStack, { spacing: 12 }, /* @__PURE__ */ createElement(TemplateIcon, { content: { tag: "", title: "", phase: "active", state: { template: t } }, size: 22 }), /* @__PURE__ */ createElement(Column, { column: t.left_column, primary: primary === "left", text }), /* @__PURE__ */ createElement(Spacer, null), /* @__PURE__ */ createElement(Column, { column: t.right_column, primary: primary === "right", text }));
}
function GenericTemplate({ t, text, remainingUntil }) {
  const value = Math.min(1, Math.max(0, Number(t.progress) || 0));
  return /* @__PURE__ */ createElement(VStack, { alignment: "leading", spacing: 6 }, /* @__PURE__ */ createElement(HStack, { spacing: 8 }, /* @__PURE__ */ createElement(TemplateIcon, { content: { tag: "", title: "", phase: "active", state: { template: t } }, size: 18 }), typeof t.state === "string" ? /* @__PURE__ */ createElement(Text, { font: "headline", foregroundStyle: text }, t.state) : null, /* @__PURE__ */ createElement(Spacer, null), /* @__PURE__ */ createElement(Text, { font: "headline", monospacedDigit: true, foregroundStyle: text }, `${Math.round(value * 100)}%`)), /* @__PURE__ */ createElement(ProgressView, { value, total: 1, tint: "systemBlue" }), remainingUntil !== void 0 ? /* @__PURE__ */ createElement(DateLabel, { date: new Date(remainingUntil), style: "timer", font: "caption", foregroundStyle: text }) : null);
}
function TemplateBody({ content, text }) {
  const t = template(content);
  if (t.template === "monitor")
    return /* @__PURE__ */ createElement(MonitorTemplate, { t, text });
  if (t.template === "generic")
    return /* @__PURE__ */ createElement(GenericTemplate, { t, text, remainingUntil: content.remaining_until });
  return /* @__PURE__ */ createElement(ProgressTemplate, { t, text });
}
function TemplateCompactTrailing({ content }) {
  const t = template(content);
  if (t.template === "progress" && t.compact_value)
    return /* @__PURE__ */ createElement(Value, { value: t.compact_value, size: "caption", fallback: "white" });
  if (t.template === "monitor") {
    const column = t.primary_column === "right" ? t.right_column : t.left_column;
    return /* @__PURE__ */ createElement(Value, { value: column?.value, size: "caption", fallback: "white" });
  }
  const v = t.template === "generic" ? Number(t.progress) : Number(t.progress?.value);
  return /* @__PURE__ */ createElement(Text, { font: "caption", monospacedDigit: true }, Number.isFinite(v) ? `${Math.round(v * 100)}%` : "");
}

// src/render.tsx
function MessageLine({ d }) {
  if (d.timer !== void 0) {
    return /* @__PURE__ */ createElement(DateLabel2, { date: new Date(d.timer), style: "timer", font: "body", monospacedDigit: true, foregroundStyle: d.text });
  }
  return /* @__PURE__ */ createElement(Text2, { font: "body", lineLimit: 2, foregroundStyle: d.text }, d.message);
}
function Icon({ d, size }) {
  return /* @__PURE__ */ createElement(Image2, { systemName: d.icon, font: size, foregroundStyle: d.iconColor ?? d.text });
}
function LockScreen({ content }) {
  const d = display(content);
  const body = hasTemplate(content) ? /* @__PURE__ */ createElement(TemplateBody, { content, text: d.text }) : /* @__PURE__ */ createElement(VStack2, { alignment: "leading", spacing: 6 }, /* @__PURE__ */ createElement(HStack2, { spacing: 8 }, /* @__PURE__ */ createElement(Icon, { d, size: 18 }), /* @__PURE__ */ createElement(Text2, { font: "headline", lineLimit: 1, foregroundStyle: d.text }, d.title), /* @__PURE__ */ createElement(Spacer2, null), d.topRight !== void 0 ? /* @__PURE__ */ createElement(Text2, { font: "headline", monospacedDigit: true, foregroundStyle: d.text }, d.topRight) : null), /* @__PURE__ */ createElement(MessageLine, { d }), d.fraction !== void 0 ? /* @__PURE__ */ createElement(ProgressView2, { value: d.fraction, total: 1, tint: d.bar ?? d.text }) : null);
  return /* @__PURE__ */ createElement(
    VStack2,
    {
      alignment: "leading",
      padding: 14,
      opacity: content.phase === "ended" ? 0.7 : 1,
      activityBackgroundTint: d.background,
      activitySystemActionForegroundColor: d.text,
      widgetURL: d.url
    },
    body
  );
}
function CompactLeading({ content }) {
  if (hasTemplate(content))
    return /* @__PURE__ */ createElement(TemplateIcon, { content, size: 14 });
  return /* @__PURE__ */ createElement(Icon, { d: display(content), size: 14 });
}
function CompactTrailing({ content }) {
  if (hasTemplate(content))
    return /* @__PURE__ */ createElement(TemplateCompactTrailing, { content });
  const d = display(content);
  if (d.compactTrailing !== void 0)
    return /* @__PURE__ */ createElement(Text2, { font: "caption", monospacedDigit: true, foregroundStyle: d.iconColor ?? "white" }, d.compactTrailing);
  if (d.timer !== void 0)
    return /* @__PURE__ */ createElement(DateLabel2, { date: new Date(d.timer), style: "timer", font: "caption", monospacedDigit: true });
  return /* @__PURE__ */ createElement(Text2, { font: "caption" }, "");
}
function Minimal({ content }) {
  return /* @__PURE__ */ createElement(CompactLeading, { content });
}
function ExpandedLeading({ content }) {
  const d = display(content);
  return /* @__PURE__ */ createElement(HStack2, { spacing: 6 }, /* @__PURE__ */ createElement(CompactLeading, { content }), /* @__PURE__ */ createElement(Text2, { font: "headline", lineLimit: 1 }, d.title));
}
function ExpandedTrailing({ content }) {
  if (hasTemplate(content))
    return /* @__PURE__ */ createElement(TemplateCompactTrailing, { content });
  const d = display(content);
  return /* @__PURE__ */ createElement(Text2, { font: "headline", monospacedDigit: true }, d.topRight ?? "");
}
function ExpandedBottom({ content }) {
  if (hasTemplate(content))
    return /* @__PURE__ */ createElement(TemplateBody, { content, text: "#FFFFFF" });
  const d = { ...display(content), text: "#FFFFFF" };
  return /* @__PURE__ */ createElement(VStack2, { alignment: "leading", spacing: 6 }, /* @__PURE__ */ createElement(MessageLine, { d }), d.fraction !== void 0 ? /* @__PURE__ */ createElement(ProgressView2, { value: d.fraction, total: 1, tint: d.bar ?? "white" }) : null);
}

// src/live_activity.tsx
var ACTIVITY_NAME = "LanpushActivity";
var builder = (content) => /* @__PURE__ */ createElement(
  LiveActivityUI,
  {
    content: /* @__PURE__ */ createElement(LockScreen, { content }),
    compactLeading: /* @__PURE__ */ createElement(CompactLeading, { content }),
    compactTrailing: /* @__PURE__ */ createElement(CompactTrailing, { content }),
    minimal: /* @__PURE__ */ createElement(Minimal, { content })
  },
  /* @__PURE__ */ createElement(LiveActivityUIExpandedLeading, null, /* @__PURE__ */ createElement(ExpandedLeading, { content })),
  /* @__PURE__ */ createElement(LiveActivityUIExpandedTrailing, null, /* @__PURE__ */ createElement(ExpandedTrailing, { content })),
  /* @__PURE__ */ createElement(LiveActivityUIExpandedBottom, null, /* @__PURE__ */ createElement(ExpandedBottom, { content }))
);
var LanpushActivity = LiveActivity.register(ACTIVITY_NAME, builder);
export {
  ACTIVITY_NAME,
  LanpushActivity,
  builder
};
