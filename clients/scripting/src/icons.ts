/**
 * Material Design Icons (what HA payloads name, `mdi:washing-machine`) to SF Symbols (what a Live Activity can
 * draw). The list covers the icons Home Assistant automations use most for live updates; anything else gets a
 * tinted circle, as the live preview shows unknown icons.
 */
const MDI_TO_SF: { [slug: string]: string } = {
  "washing-machine": "washer", "tumble-dryer": "dryer", dishwasher: "dishwasher", "ev-station": "ev.charger",
  "ev-plug-type2": "ev.plug.ac.type.2", "car-electric": "bolt.car", car: "car", "car-battery": "minus.plus.batteryblock",
  battery: "battery.100", "battery-charging": "battery.100.bolt", "battery-50": "battery.50", "battery-low": "battery.25",
  "home-assistant": "house", home: "house", "home-outline": "house", door: "door.left.hand.closed",
  "door-open": "door.left.hand.open", "door-closed": "door.left.hand.closed", garage: "door.garage.closed",
  "garage-open": "door.garage.open", lock: "lock", "lock-open": "lock.open", "lock-open-variant": "lock.open",
  lightbulb: "lightbulb", "lightbulb-on": "lightbulb.fill", thermometer: "thermometer", "water-percent": "humidity",
  water: "drop", "water-boiler": "heater.vertical", fire: "flame", radiator: "heater.vertical", fan: "fan",
  "air-conditioner": "air.conditioner.horizontal", snowflake: "snowflake", bell: "bell", "bell-ring": "bell.badge",
  alert: "exclamationmark.triangle", "alert-circle": "exclamationmark.circle", information: "info.circle",
  timer: "timer", "timer-outline": "timer", "timer-sand": "hourglass", clock: "clock", "clock-outline": "clock",
  "package-variant": "shippingbox", "package-variant-closed": "shippingbox", "truck-delivery": "box.truck",
  "robot-vacuum": "robotic.vacuum", "robot-mower": "leaf", "power-plug": "powerplug", flash: "bolt",
  lightning: "bolt", "solar-power": "sun.max", "solar-panel": "sun.max", "weather-sunny": "sun.max",
  "weather-rainy": "cloud.rain", "weather-cloudy": "cloud", coffee: "cup.and.saucer", "coffee-maker": "cup.and.saucer",
  stove: "stove", oven: "oven", microwave: "microwave", printer: "printer", "printer-3d": "printer",
  music: "music.note", speaker: "hifispeaker", television: "tv", cellphone: "iphone", wifi: "wifi",
  account: "person", "account-group": "person.3", motion: "figure.walk", "motion-sensor": "sensor",
  "shield-home": "shield", "shield-check": "checkmark.shield", cctv: "video", camera: "camera", check: "checkmark",
  "check-circle": "checkmark.circle", close: "xmark", "trash-can": "trash", delete: "trash", calendar: "calendar",
  "map-marker": "mappin", airplane: "airplane", train: "tram", bus: "bus", bike: "bicycle", walk: "figure.walk",
  run: "figure.run", "food-fork-drink": "fork.knife", pot: "frying.pan", leaf: "leaf", sprinkler: "sprinkler",
  pool: "figure.pool.swim", "heat-pump": "heat.waves", gauge: "gauge.with.dots.needle.33percent",
};

export const FALLBACK_SYMBOL = "circle.fill";

/** The SF Symbol for an `mdi:` slug, or the fallback. */
export function sfSymbol(icon: unknown): string {
  if (typeof icon !== "string") return FALLBACK_SYMBOL;
  const slug = icon.startsWith("mdi:") ? icon.slice(4) : icon;
  return MDI_TO_SF[slug] ?? FALLBACK_SYMBOL;
}

export function isKnownIcon(icon: unknown): boolean {
  return sfSymbol(icon) !== FALLBACK_SYMBOL;
}
