// src/live_activity.tsx
import {
  LiveActivity,
  LiveActivityUI,
  LiveActivityUIExpandedBottom,
  LiveActivityUIExpandedLeading,
  LiveActivityUIExpandedTrailing
} from "scripting";

// src/render.tsx
import { DateLabel as DateLabel2, HStack as HStack2, Image as Image2, ProgressView as ProgressView2, Spacer as Spacer2, Text as Text2, TimerIntervalLabel, VStack as VStack2 } from "scripting";

// ../typescript/src/liveActivityRules.ts
function roundedInteger(value) {
  if (typeof value !== "number" || !Number.isFinite(value))
    return void 0;
  const r = Math.sign(value) * Math.round(Math.abs(value));
  return r === 0 ? 0 : r;
}
function progressOf(state) {
  const progress = roundedInteger(state.progress);
  const max = roundedInteger(state.progress_max);
  if (progress === void 0 || max === void 0 || max <= 0)
    return null;
  return { progress, max, fraction: progress / max };
}
function percentText(fraction) {
  return `${Math.round(Math.min(Math.max(fraction, 0), 1) * 100)}%`;
}
function barDirection(state) {
  const d = typeof state.progress_bar_direction === "string" ? state.progress_bar_direction.toLowerCase() : "";
  return d === "increasing" || d === "decreasing" ? d : null;
}
function barFill(state) {
  const p = progressOf(state);
  if (!p)
    return null;
  const f = barDirection(state) === "decreasing" ? 1 - p.fraction : p.fraction;
  return Math.min(Math.max(f, 0), 1);
}
function chronometerOf(state, nowMs) {
  if (state.chronometer !== true || typeof state.countdown_end !== "number")
    return null;
  const end = state.countdown_end * 1e3;
  if (typeof state.chronometer_start === "number" && state.chronometer_start * 1e3 < end) {
    return { kind: "bounded", start: state.chronometer_start * 1e3, end };
  }
  return end > nowMs ? { kind: "countdown", end } : { kind: "countup", since: end };
}
function timerBar(state, nowMs, drawnAtMs) {
  if (progressOf(state))
    return null;
  const c = chronometerOf(state, drawnAtMs);
  if (!c || c.kind === "countup")
    return null;
  const from = c.kind === "bounded" ? c.start : Math.min(drawnAtMs, c.end);
  const drains = c.kind === "bounded" ? barDirection(state) === "decreasing" : barDirection(state) !== "increasing";
  return { from, to: c.end, drains, fill: intervalFill(from, c.end, drains, nowMs) };
}
function intervalFill(from, to, drains, nowMs) {
  const done = to > from ? Math.min(Math.max((nowMs - from) / (to - from), 0), 1) : 1;
  return drains ? 1 - done : done;
}
var APP_STALE_AFTER_MS = 30 * 60 * 1e3;
function tapTarget(url) {
  if (typeof url !== "string" || url.trim() === "")
    return null;
  const raw = url.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw))
    return { kind: "url", raw, href: raw };
  const path = raw.startsWith("/") ? raw : `/${raw}`;
  return { kind: "path", raw, href: `homeassistant://navigate${path}` };
}

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
  // Appliances and rooms
  "washing-machine": "washer",
  "tumble-dryer": "dryer",
  dishwasher: "dishwasher",
  fridge: "refrigerator",
  "fridge-outline": "refrigerator",
  stove: "stove",
  oven: "oven",
  microwave: "microwave",
  "coffee-maker": "cup.and.saucer",
  coffee: "cup.and.saucer",
  tea: "cup.and.saucer",
  kettle: "cup.and.saucer",
  "water-boiler": "heater.vertical",
  radiator: "heater.vertical",
  "air-conditioner": "air.conditioner.horizontal",
  hvac: "air.conditioner.horizontal",
  "air-purifier": "air.purifier",
  "air-humidifier": "humidifier",
  dehumidifier: "dehumidifier",
  fan: "fan",
  "robot-vacuum": "robotic.vacuum",
  "robot-mower": "leaf",
  printer: "printer",
  "printer-3d": "printer",
  sofa: "sofa",
  bed: "bed.double",
  "bed-king": "bed.double",
  shower: "shower",
  bathtub: "bathtub",
  toilet: "toilet",
  "ceiling-light": "light.recessed",
  lamp: "lamp.floor",
  "desk-lamp": "lamp.desk",
  lightbulb: "lightbulb",
  "lightbulb-on": "lightbulb.fill",
  "lightbulb-off": "lightbulb.slash",
  "light-switch": "switch.2",
  // Home, doors and security
  "home-assistant": "house",
  home: "house",
  "home-outline": "house",
  "home-account": "house",
  door: "door.left.hand.closed",
  "door-open": "door.left.hand.open",
  "door-closed": "door.left.hand.closed",
  garage: "door.garage.closed",
  "garage-open": "door.garage.open",
  "window-open": "window.vertical.open",
  "window-closed": "window.vertical.closed",
  blinds: "blinds.vertical.closed",
  "blinds-open": "blinds.vertical.open",
  curtains: "curtains.closed",
  lock: "lock",
  "lock-open": "lock.open",
  "lock-open-variant": "lock.open",
  key: "key",
  "shield-home": "shield",
  "shield-check": "checkmark.shield",
  "shield-lock": "lock.shield",
  security: "lock.shield",
  "alarm-light": "light.beacon.max",
  "alarm-panel": "lock.shield",
  cctv: "video",
  camera: "camera",
  doorbell: "bell",
  "doorbell-video": "video.doorbell",
  motion: "figure.walk",
  "motion-sensor": "sensor",
  "smoke-detector": "smoke",
  "fire-alert": "flame",
  fire: "flame",
  "water-alert": "drop.triangle",
  leak: "drop.triangle",
  mailbox: "mailbox",
  "package-variant": "shippingbox",
  "package-variant-closed": "shippingbox",
  package: "shippingbox",
  "truck-delivery": "box.truck",
  truck: "box.truck",
  // Energy
  "ev-station": "ev.charger",
  "ev-plug-type2": "ev.plug.ac.type.2",
  "car-electric": "bolt.car",
  "car-battery": "minus.plus.batteryblock",
  battery: "battery.100",
  "battery-charging": "battery.100.bolt",
  "battery-high": "battery.75",
  "battery-medium": "battery.50",
  "battery-low": "battery.25",
  "battery-outline": "battery.0",
  "battery-alert": "battery.0",
  "home-battery": "battery.100",
  "power-plug": "powerplug",
  power: "power",
  flash: "bolt",
  lightning: "bolt",
  "lightning-bolt": "bolt.fill",
  "solar-power": "sun.max",
  "solar-panel": "sun.max",
  "heat-pump": "heat.waves",
  gauge: "gauge.with.dots.needle.33percent",
  "gas-station": "fuelpump",
  fuel: "fuelpump",
  thermometer: "thermometer",
  thermostat: "thermometer",
  "water-percent": "humidity",
  water: "drop",
  snowflake: "snowflake",
  // Weather and time of day
  "weather-sunny": "sun.max",
  "weather-night": "moon.stars",
  "weather-rainy": "cloud.rain",
  "weather-pouring": "cloud.heavyrain",
  "weather-cloudy": "cloud",
  "weather-partly-cloudy": "cloud.sun",
  "weather-snowy": "cloud.snow",
  "weather-lightning": "cloud.bolt",
  "weather-windy": "wind",
  "weather-fog": "cloud.fog",
  "weather-sunset": "sunset",
  "weather-sunset-up": "sunrise",
  umbrella: "umbrella",
  sleep: "moon.zzz",
  "power-sleep": "moon.zzz",
  // Time
  timer: "timer",
  "timer-outline": "timer",
  "timer-sand": "hourglass",
  clock: "clock",
  "clock-outline": "clock",
  alarm: "alarm",
  stopwatch: "stopwatch",
  "progress-clock": "clock.arrow.circlepath",
  calendar: "calendar",
  "calendar-clock": "calendar.badge.clock",
  "calendar-check": "calendar.badge.checkmark",
  // Media and devices
  music: "music.note",
  "music-note": "music.note",
  "movie-open": "film",
  movie: "film",
  play: "play.fill",
  pause: "pause.fill",
  stop: "stop.fill",
  "volume-high": "speaker.wave.3",
  speaker: "hifispeaker",
  headphones: "headphones",
  microphone: "mic",
  radio: "radio",
  television: "tv",
  cellphone: "iphone",
  tablet: "ipad",
  watch: "applewatch",
  laptop: "laptopcomputer",
  monitor: "display",
  "desktop-tower": "pc",
  server: "server.rack",
  "router-wireless": "wifi.router",
  wifi: "wifi",
  phone: "phone",
  email: "envelope",
  message: "message",
  chat: "bubble.left",
  // People, pets, health
  account: "person",
  "account-circle": "person.circle",
  "account-multiple": "person.2",
  "account-group": "person.3",
  human: "figure.stand",
  walk: "figure.walk",
  run: "figure.run",
  swim: "figure.pool.swim",
  pool: "figure.pool.swim",
  yoga: "figure.yoga",
  dumbbell: "dumbbell",
  cat: "cat",
  dog: "dog",
  paw: "pawprint",
  "baby-carriage": "stroller",
  heart: "heart",
  "heart-pulse": "waveform.path.ecg",
  pill: "pills",
  "medical-bag": "cross.case",
  hospital: "cross",
  // Travel
  car: "car",
  taxi: "car",
  airplane: "airplane",
  train: "tram",
  subway: "tram",
  bus: "bus",
  bike: "bicycle",
  ferry: "ferry",
  "sail-boat": "sailboat",
  "map-marker": "mappin",
  map: "map",
  // Food and shopping
  "food-fork-drink": "fork.knife",
  food: "fork.knife",
  "silverware-fork-knife": "fork.knife",
  pot: "frying.pan",
  cake: "birthday.cake",
  "glass-wine": "wineglass",
  beer: "mug",
  cart: "cart",
  shopping: "bag",
  gift: "gift",
  cash: "banknote",
  "credit-card": "creditcard",
  // Garden
  leaf: "leaf",
  sprout: "leaf",
  tree: "tree",
  sprinkler: "sprinkler",
  "watering-can": "drop",
  // Status and actions
  bell: "bell",
  "bell-ring": "bell.badge",
  alert: "exclamationmark.triangle",
  "alert-circle": "exclamationmark.circle",
  "alert-octagon": "exclamationmark.octagon",
  information: "info.circle",
  "help-circle": "questionmark.circle",
  check: "checkmark",
  "check-circle": "checkmark.circle",
  close: "xmark",
  "close-circle": "xmark.circle",
  "plus-circle": "plus.circle",
  "minus-circle": "minus.circle",
  "trash-can": "trash",
  delete: "trash",
  recycle: "arrow.3.trianglepath",
  download: "arrow.down.circle",
  upload: "arrow.up.circle",
  sync: "arrow.triangle.2.circlepath",
  refresh: "arrow.clockwise",
  update: "arrow.clockwise",
  cog: "gearshape",
  wrench: "wrench",
  tools: "wrench.and.screwdriver",
  hammer: "hammer",
  eye: "eye",
  "eye-off": "eye.slash",
  star: "star",
  flag: "flag",
  bookmark: "bookmark",
  tag: "tag",
  pin: "pin"
};
var FALLBACK_SYMBOL = "circle.fill";
function battery(slug) {
  const m = /^battery(-charging)?-(\d{1,3})$/.exec(slug);
  if (!m)
    return void 0;
  const level = Math.min(100, Math.round(Number(m[2]) / 25) * 25);
  return m[1] ? "battery.100.bolt" : `battery.${level}`;
}
function sfSymbol(icon) {
  if (typeof icon !== "string")
    return FALLBACK_SYMBOL;
  let slug = icon.trim().toLowerCase().replace(/^mdi:/, "");
  const level = battery(slug);
  if (level)
    return level;
  while (slug !== "") {
    if (MDI_TO_SF[slug])
      return MDI_TO_SF[slug];
    const dash = slug.lastIndexOf("-");
    slug = dash > 0 ? slug.slice(0, dash) : "";
  }
  return FALLBACK_SYMBOL;
}

// src/content.ts
function display(content, nowMs = Date.now()) {
  const s = content.state;
  const background = hex(s.background_color) ?? "#000000";
  const text = hex(s.text_color) ?? contrasting(background);
  const iconColor = color(s.color);
  const p = progressOf(s);
  const percent = p ? percentText(p.fraction) : void 0;
  const critical = typeof s.critical_text === "string" && s.critical_text !== "" ? s.critical_text : void 0;
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
  const timer = chronometerOf(s, nowMs);
  if (timer)
    d.timer = timer;
  const fill = barFill(s);
  if (fill !== null)
    d.fill = fill;
  const tb = timerBar(s, nowMs, nowMs);
  if (tb)
    d.timerBar = { from: tb.from, to: tb.to, countsDown: tb.drains };
  const tap = tapTarget(typeof s.template?.tap_url === "string" ? s.template.tap_url : s.url);
  if (tap)
    d.url = tap.href;
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
function iconProps(icon) {
  if (typeof icon === "string")
    return { systemName: icon, foregroundStyle: "white" };
  if (typeof icon !== "object" || icon === null)
    return { systemName: "circle.fill", foregroundStyle: "white" };
  const o = icon;
  const gradient = o.color_rendering === "gradient";
  const style = (c) => gradient ? { color: c, gradient: true } : c;
  const primary = color(o.primary_color) ?? "white";
  const mode = ["monochrome", "hierarchical", "palette", "multicolor"].includes(o.rendering_mode) ? o.rendering_mode : void 0;
  const props = { systemName: String(o.name) };
  if (mode)
    props.symbolRenderingMode = mode;
  if (mode === "palette") {
    const secondary = color(o.secondary_color);
    const tertiary = color(o.tertiary_color);
    props.foregroundStyle = secondary ? { primary: style(primary), secondary: style(secondary), ...tertiary ? { tertiary: style(tertiary) } : {} } : style(primary);
  } else if (mode !== "multicolor" || o.primary_color !== void 0) {
    props.foregroundStyle = style(primary);
  }
  return props;
}
function TemplateIcon({ content, size }) {
  return /* @__PURE__ */ createElement(Image, { ...iconProps(template(content).icon), font: size });
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
  return /* @__PURE__ */ createElement(VStack, { alignment: "leading", spacing: 6 }, /* @__PURE__ */ createElement(HStack, { spacing: 8 }, /* @__PURE__ */ createElement(Image, { ...iconProps(t.icon), font: 18 }), /* @__PURE__ */ createElement(Value, { value: t.header_left, size: "headline", fallback: text }), /* @__PURE__ */ createElement(Spacer, null), /* @__PURE__ */ createElement(Value, { value: t.header_right, size: "headline", fallback: text })), bar.style === "segmented" ? /* @__PURE__ */ createElement(SegmentedBar, { bar }) : /* @__PURE__ */ createElement(ProgressView, { value: Math.min(1, Math.max(0, Number(bar.value) || 0)), total: 1, tint: color(bar.color) ?? "systemBlue" }), /* @__PURE__ */ createElement(HStack, null, /* @__PURE__ */ createElement(Value, { value: t.footer_left, size: "caption", fallback: text }), /* @__PURE__ */ createElement(Spacer, null), /* @__PURE__ */ createElement(Value, { value: t.footer_right, size: "caption", fallback: text })));
}
function Column({ column, primary, text }) {
  if (!column)
    return null;
  return /* @__PURE__ */ createElement(VStack, { alignment: "leading", spacing: 2 }, typeof column.header === "string" ? /* @__PURE__ */ createElement(Text, { font: "caption", foregroundStyle: "secondaryLabel" }, column.header) : null, /* @__PURE__ */ createElement(Value, { value: column.value, size: primary ? "title3" : "body", fallback: text }), typeof column.footer === "string" ? /* @__PURE__ */ createElement(Text, { font: "caption", foregroundStyle: "secondaryLabel" }, column.footer) : null);
}
function MonitorTemplate({ t, text }) {
  const primary = t.primary_column === "right" ? "right" : "left";
  return /* @__PURE__ */ createElement(HStack, { spacing: 12 }, /* @__PURE__ */ createElement(Image, { ...iconProps(t.icon), font: 22 }), /* @__PURE__ */ createElement(Column, { column: t.left_column, primary: primary === "left", text }), /* @__PURE__ */ createElement(Spacer, null), /* @__PURE__ */ createElement(Column, { column: t.right_column, primary: primary === "right", text }));
}
function GenericTemplate({ t, text, remainingUntil }) {
  const value = Math.min(1, Math.max(0, Number(t.progress) || 0));
  return /* @__PURE__ */ createElement(VStack, { alignment: "leading", spacing: 6 }, /* @__PURE__ */ createElement(HStack, { spacing: 8 }, /* @__PURE__ */ createElement(Image, { ...iconProps(t.icon), font: 18 }), typeof t.state === "string" ? /* @__PURE__ */ createElement(Text, { font: "headline", foregroundStyle: text }, t.state) : null, /* @__PURE__ */ createElement(Spacer, null), /* @__PURE__ */ createElement(Text, { font: "headline", monospacedDigit: true, foregroundStyle: text }, percentText(value))), /* @__PURE__ */ createElement(ProgressView, { value, total: 1, tint: "systemBlue" }), remainingUntil !== void 0 ? /* @__PURE__ */ createElement(DateLabel, { date: new Date(remainingUntil), style: "timer", font: "caption", foregroundStyle: text }) : null);
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
  return /* @__PURE__ */ createElement(Text, { font: "caption", monospacedDigit: true }, Number.isFinite(v) ? percentText(v) : "");
}

// src/render.tsx
function Timer({ timer, font, color: color2 }) {
  if (timer.kind === "bounded") {
    return /* @__PURE__ */ createElement(TimerIntervalLabel, { from: new Date(timer.start), to: new Date(timer.end), countsDown: false, font, monospacedDigit: true, foregroundStyle: color2 });
  }
  if (timer.kind === "countdown") {
    return /* @__PURE__ */ createElement(TimerIntervalLabel, { from: new Date(Math.min(Date.now(), timer.end)), to: new Date(timer.end), countsDown: true, font, monospacedDigit: true, foregroundStyle: color2 });
  }
  return /* @__PURE__ */ createElement(DateLabel2, { date: new Date(timer.since), style: "timer", font, monospacedDigit: true, foregroundStyle: color2 });
}
function MessageLine({ d }) {
  if (d.timer !== void 0)
    return /* @__PURE__ */ createElement(Timer, { timer: d.timer, font: "body", color: d.text });
  return /* @__PURE__ */ createElement(Text2, { font: "body", lineLimit: 2, foregroundStyle: d.text }, d.message);
}
function Bar({ d, tint }) {
  if (d.fill !== void 0)
    return /* @__PURE__ */ createElement(ProgressView2, { value: d.fill, total: 1, tint });
  if (d.timerBar !== void 0) {
    return /* @__PURE__ */ createElement(ProgressView2, { timerFrom: new Date(d.timerBar.from), timerTo: new Date(d.timerBar.to), countsDown: d.timerBar.countsDown, tint });
  }
  return null;
}
function Icon({ d, size }) {
  return /* @__PURE__ */ createElement(Image2, { systemName: d.icon, font: size, foregroundStyle: d.iconColor ?? d.text });
}
function LockScreen({ content }) {
  const d = display(content);
  const body = hasTemplate(content) ? /* @__PURE__ */ createElement(TemplateBody, { content, text: d.text }) : /* @__PURE__ */ createElement(VStack2, { alignment: "leading", spacing: 6 }, /* @__PURE__ */ createElement(HStack2, { spacing: 8 }, /* @__PURE__ */ createElement(Icon, { d, size: 18 }), /* @__PURE__ */ createElement(Text2, { font: "headline", lineLimit: 1, foregroundStyle: d.text }, d.title), /* @__PURE__ */ createElement(Spacer2, null), d.topRight !== void 0 ? /* @__PURE__ */ createElement(Text2, { font: "headline", monospacedDigit: true, foregroundStyle: d.text }, d.topRight) : null), /* @__PURE__ */ createElement(MessageLine, { d }), /* @__PURE__ */ createElement(Bar, { d, tint: d.bar ?? d.text }));
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
    return /* @__PURE__ */ createElement(Timer, { timer: d.timer, font: "caption" });
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
  return /* @__PURE__ */ createElement(VStack2, { alignment: "leading", spacing: 6 }, /* @__PURE__ */ createElement(MessageLine, { d }), /* @__PURE__ */ createElement(Bar, { d, tint: d.bar ?? "white" }));
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
