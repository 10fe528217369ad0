/**
 * Material Design Icons (what HA payloads name, `mdi:washing-machine`) to SF Symbols (what a Live Activity can
 * draw: the Scripting app has no MDI font). The list holds the icons of Home Assistant's own Live Activity and
 * notification docs and of the iOS companion app's Live Activity examples and tests, and the common household ones
 * around them. An icon not listed falls back to its nearest listed family — the slug with trailing words dropped,
 * so `mdi:washing-machine-alert` draws as `washing-machine` and `mdi:lightbulb-group-outline` as `lightbulb` —
 * and, when nothing is left, to a tinted dot (the live preview draws the real MDI glyph instead).
 */
const MDI_TO_SF: { [slug: string]: string } = {
  // Appliances and rooms
  "washing-machine": "washer", "tumble-dryer": "dryer", dishwasher: "dishwasher", fridge: "refrigerator",
  "fridge-outline": "refrigerator", stove: "stove", oven: "oven", microwave: "microwave", "coffee-maker": "cup.and.saucer",
  coffee: "cup.and.saucer", tea: "cup.and.saucer", kettle: "cup.and.saucer", "water-boiler": "heater.vertical",
  radiator: "heater.vertical", "air-conditioner": "air.conditioner.horizontal", hvac: "air.conditioner.horizontal",
  "air-purifier": "air.purifier", "air-humidifier": "humidifier", dehumidifier: "dehumidifier", fan: "fan",
  "robot-vacuum": "robotic.vacuum", "robot-mower": "leaf", printer: "printer", "printer-3d": "printer", sofa: "sofa",
  bed: "bed.double", "bed-king": "bed.double", shower: "shower", bathtub: "bathtub", toilet: "toilet",
  "ceiling-light": "light.recessed", lamp: "lamp.floor", "desk-lamp": "lamp.desk", lightbulb: "lightbulb",
  "lightbulb-on": "lightbulb.fill", "lightbulb-off": "lightbulb.slash", "light-switch": "switch.2",
  // Home, doors and security
  "home-assistant": "house", home: "house", "home-outline": "house", "home-account": "house", door: "door.left.hand.closed",
  "door-open": "door.left.hand.open", "door-closed": "door.left.hand.closed", garage: "door.garage.closed",
  "garage-open": "door.garage.open", "window-open": "window.vertical.open", "window-closed": "window.vertical.closed",
  blinds: "blinds.vertical.closed", "blinds-open": "blinds.vertical.open", curtains: "curtains.closed",
  lock: "lock", "lock-open": "lock.open", "lock-open-variant": "lock.open", key: "key", "shield-home": "shield",
  "shield-check": "checkmark.shield", "shield-lock": "lock.shield", security: "lock.shield", "alarm-light": "light.beacon.max",
  "alarm-panel": "lock.shield", cctv: "video", camera: "camera", doorbell: "bell", "doorbell-video": "video.doorbell",
  motion: "figure.walk", "motion-sensor": "sensor", "smoke-detector": "smoke", "fire-alert": "flame", fire: "flame",
  "water-alert": "drop.triangle", leak: "drop.triangle", mailbox: "mailbox", "package-variant": "shippingbox",
  "package-variant-closed": "shippingbox", package: "shippingbox", "truck-delivery": "box.truck", truck: "box.truck",
  // Energy
  "ev-station": "ev.charger", "ev-plug-type2": "ev.plug.ac.type.2", "car-electric": "bolt.car", "car-battery": "minus.plus.batteryblock",
  battery: "battery.100", "battery-charging": "battery.100.bolt", "battery-high": "battery.75", "battery-medium": "battery.50",
  "battery-low": "battery.25", "battery-outline": "battery.0", "battery-alert": "battery.0", "home-battery": "battery.100",
  "power-plug": "powerplug", power: "power", flash: "bolt", lightning: "bolt", "lightning-bolt": "bolt.fill",
  "solar-power": "sun.max", "solar-panel": "sun.max", "heat-pump": "heat.waves", gauge: "gauge.with.dots.needle.33percent",
  "gas-station": "fuelpump", fuel: "fuelpump", thermometer: "thermometer", thermostat: "thermometer", "water-percent": "humidity",
  water: "drop", snowflake: "snowflake",
  // Weather and time of day
  "weather-sunny": "sun.max", "weather-night": "moon.stars", "weather-rainy": "cloud.rain", "weather-pouring": "cloud.heavyrain",
  "weather-cloudy": "cloud", "weather-partly-cloudy": "cloud.sun", "weather-snowy": "cloud.snow", "weather-lightning": "cloud.bolt",
  "weather-windy": "wind", "weather-fog": "cloud.fog", "weather-sunset": "sunset", "weather-sunset-up": "sunrise",
  umbrella: "umbrella", sleep: "moon.zzz", "power-sleep": "moon.zzz",
  // Time
  timer: "timer", "timer-outline": "timer", "timer-sand": "hourglass", clock: "clock", "clock-outline": "clock",
  alarm: "alarm", stopwatch: "stopwatch", "progress-clock": "clock.arrow.circlepath", calendar: "calendar",
  "calendar-clock": "calendar.badge.clock", "calendar-check": "calendar.badge.checkmark",
  // Media and devices
  music: "music.note", "music-note": "music.note", "movie-open": "film", movie: "film", play: "play.fill", pause: "pause.fill",
  stop: "stop.fill", "volume-high": "speaker.wave.3", speaker: "hifispeaker", headphones: "headphones", microphone: "mic",
  radio: "radio", television: "tv", cellphone: "iphone", tablet: "ipad", watch: "applewatch", laptop: "laptopcomputer",
  monitor: "display", "desktop-tower": "pc", server: "server.rack", "router-wireless": "wifi.router", wifi: "wifi",
  phone: "phone", email: "envelope", message: "message", chat: "bubble.left",
  // People, pets, health
  account: "person", "account-circle": "person.circle", "account-multiple": "person.2", "account-group": "person.3",
  human: "figure.stand", walk: "figure.walk", run: "figure.run", swim: "figure.pool.swim", pool: "figure.pool.swim",
  yoga: "figure.yoga", dumbbell: "dumbbell", cat: "cat", dog: "dog", paw: "pawprint", "baby-carriage": "stroller",
  heart: "heart", "heart-pulse": "waveform.path.ecg", pill: "pills", "medical-bag": "cross.case", hospital: "cross",
  // Travel
  car: "car", taxi: "car", airplane: "airplane", train: "tram", subway: "tram", bus: "bus", bike: "bicycle",
  ferry: "ferry", "sail-boat": "sailboat", "map-marker": "mappin", map: "map",
  // Food and shopping
  "food-fork-drink": "fork.knife", food: "fork.knife", "silverware-fork-knife": "fork.knife", pot: "frying.pan",
  cake: "birthday.cake", "glass-wine": "wineglass", beer: "mug", cart: "cart", shopping: "bag", gift: "gift",
  cash: "banknote", "credit-card": "creditcard",
  // Garden
  leaf: "leaf", sprout: "leaf", tree: "tree", sprinkler: "sprinkler", "watering-can": "drop",
  // Status and actions
  bell: "bell", "bell-ring": "bell.badge", alert: "exclamationmark.triangle", "alert-circle": "exclamationmark.circle",
  "alert-octagon": "exclamationmark.octagon", information: "info.circle", "help-circle": "questionmark.circle",
  check: "checkmark", "check-circle": "checkmark.circle", close: "xmark", "close-circle": "xmark.circle",
  "plus-circle": "plus.circle", "minus-circle": "minus.circle", "trash-can": "trash", delete: "trash", recycle: "arrow.3.trianglepath",
  download: "arrow.down.circle", upload: "arrow.up.circle", sync: "arrow.triangle.2.circlepath", refresh: "arrow.clockwise",
  update: "arrow.clockwise", cog: "gearshape", wrench: "wrench", tools: "wrench.and.screwdriver", hammer: "hammer",
  eye: "eye", "eye-off": "eye.slash", star: "star", flag: "flag", bookmark: "bookmark", tag: "tag", pin: "pin",
};

export const FALLBACK_SYMBOL = "circle.fill";

/** `battery-40` and `battery-charging-80`: MDI's ten levels onto SF Symbols' five (0, 25, 50, 75, 100). */
function battery(slug: string): string | undefined {
  const m = /^battery(-charging)?-(\d{1,3})$/.exec(slug);
  if (!m) return undefined;
  const level = Math.min(100, Math.round(Number(m[2]) / 25) * 25);
  return m[1] ? "battery.100.bolt" : `battery.${level}`;
}

/** The SF Symbol for an `mdi:` slug (any case, as HA's apps read it), its family's, or the fallback dot. */
export function sfSymbol(icon: unknown): string {
  if (typeof icon !== "string") return FALLBACK_SYMBOL;
  let slug = icon.trim().toLowerCase().replace(/^mdi:/, "");
  const level = battery(slug);
  if (level) return level;
  while (slug !== "") {
    if (MDI_TO_SF[slug]) return MDI_TO_SF[slug];
    const dash = slug.lastIndexOf("-");
    slug = dash > 0 ? slug.slice(0, dash) : "";
  }
  return FALLBACK_SYMBOL;
}

export function isKnownIcon(icon: unknown): boolean {
  return sfSymbol(icon) !== FALLBACK_SYMBOL;
}
