/**
 * The send panel's examples: HA's Live Activity docs (washing machine, EV charging, dishwasher, All Fields), every
 * Aivi template example (Aivi's template docs), and a plain notification. Each is a function so relative times
 * (Aivi's `time_since` / `time_until`) are fresh when picked.
 */
export interface Sample {
  id: string;
  label: string;
  body: () => object;
}

const iso = (secs: number) => new Date(Date.now() + secs * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

export const SAMPLES: Sample[] = [
  { id: "washer-start", label: "Washing machine: progress + timer (HA docs)", body: () => ({ title: "Washing Machine", message: "Rinsing · 1 of 2",
    data: { tag: "washer_cycle", live_update: true, progress: 900, progress_max: 3600, chronometer: true, when: 2700, when_relative: true,
      notification_icon: "mdi:washing-machine", notification_icon_color: "#2196F3", color: "#2196F3" } }) },
  { id: "washer-done", label: "Washing machine: cycle complete (update)", body: () => ({ title: "Washing Machine", message: "Cycle complete",
    data: { tag: "washer_cycle", live_update: true, progress: 3600, progress_max: 3600, notification_icon: "mdi:washing-machine",
      notification_icon_color: "#4CAF50", color: "#4CAF50" } }) },
  { id: "washer-colors", label: "Washing machine: custom colors", body: () => ({ title: "Washing Machine", message: "Cycle complete",
    data: { tag: "washer_cycle", live_update: true, background_color: "#101820", text_color: "#FFFFFF", url: "/lovelace/laundry" } }) },
  { id: "washer-end", label: "Washing machine: end (clear_notification)", body: () => ({ message: "clear_notification", data: { tag: "washer_cycle" } }) },
  { id: "dryer", label: "Laundry: drying timer (chronometer)", body: () => ({ title: "Laundry", message: "Drying",
    data: { tag: "dryer", live_update: true, chronometer: true, when: 3600, when_relative: true } }) },
  { id: "ev", label: "EV charging (HA docs)", body: () => ({ title: "EV Charging", message: "Charging · Est. 45 min remaining",
    data: { tag: "ev-charging", live_update: true, critical_text: "45%", progress: 45, progress_max: 100,
      notification_icon: "mdi:ev-station", notification_icon_color: "#4CAF50" } }) },
  { id: "dishwasher", label: "Dishwasher progress (HA docs)", body: () => ({ title: "Dishwasher", message: "Pre-wash in progress",
    data: { tag: "dishwasher", live_update: true, critical_text: "Pre-wash", progress: 20, progress_max: 100,
      notification_icon: "mdi:dishwasher", notification_icon_color: "#26C6DA" } }) },
  { id: "all-fields", label: "All Fields (HA docs anatomy)", body: () => ({ message: "All content state fields active", title: "All Fields",
    data: { tag: "debug-all", live_update: true, critical_text: "5 min", progress: 42, progress_max: 100, chronometer: true, when: 300,
      when_relative: true, notification_icon: "mdi:home-assistant", notification_icon_color: "#03A9F4" } }) },
  { id: "all-fields-end", label: "All Fields: end (clear_notification)", body: () => ({ message: "clear_notification", data: { tag: "debug-all" } }) },
  { id: "aivi-simple", label: "Aivi progress: simple bar", body: () => ({ title: "Washer", data: { tag: "aivi-washer", live_update: true,
    template: { template: "progress", icon: "washer", header_left: { value: "In progress", text_color: "green" }, header_right: { value: "1h 32m" },
      progress: { style: "simple", value: 0.65, color: "blue" }, footer_left: { value: "Progress" }, footer_right: { value: "65%" } } } }) },
  { id: "aivi-layered", label: "Aivi progress: segmented, layered, hatched", body: () => ({ title: "Supercharger", data: { tag: "aivi-charging", live_update: true,
    template: { template: "progress", icon: "bolt.car", header_left: { value: "90%", text_color: "green" }, header_right: { value: "3 min left" },
      progress: { style: "segmented", value: 0.9, display: "layered", segments: [
        { value: 0.8, fill_color: "green", track_color: "gray", label: "Standard" },
        { value: 0.2, fill_color: "green", track_color: "gray", track_fill: "hatched", label: "Extended" }] },
      footer_left: { value: "Supercharger", text_color: "gray" }, footer_right: { value: "Est. $4.85" }, compact_value: { value: "90%" } } } }) },
  { id: "aivi-split", label: "Aivi progress: segmented, split", body: () => ({ title: "Dishwasher", data: { tag: "aivi-dishwasher", live_update: true,
    template: { template: "progress", icon: "dishwasher", header_left: { value: "Rinsing" }, header_right: { value: "48 min left" },
      progress: { style: "segmented", value: 0.6, display: "split", segments: [
        { value: 0.5, fill_color: "cyan", label: "Wash" }, { value: 0.25, fill_color: "teal", label: "Rinse" },
        { value: 0.25, fill_color: "orange", track_color: "orange", track_fill: "hatched", label: "Dry" }] },
      compact_value: { value: "60%" } } } }) },
  { id: "aivi-monitor", label: "Aivi monitor: robot vacuum", body: () => ({ title: "Vacuum", data: { tag: "aivi-vacuum", live_update: true,
    template: { template: "monitor", icon: "robotic.vacuum.and.ellipsis", left_column: { value: { value: "Mopping", text_color: "indigo" }, footer: "In living room" },
      right_column: { value: { value: "20.1 m²" }, footer: "Battery: 87%" } } } }) },
  { id: "aivi-monitor-timers", label: "Aivi monitor: time_since / time_until", body: () => ({ title: "Oven", data: { tag: "aivi-oven", live_update: true,
    template: { template: "monitor", icon: { name: "oven", rendering_mode: "palette", primary_color: "orange", secondary_color: "red", color_rendering: "gradient" },
      left_column: { header: "Preheated", value: { value: iso(-420), formatter: "time_since" }, footer: "ago" },
      right_column: { header: "Ready in", value: { value: iso(1500), formatter: "time_until", text_color: "orange" }, footer: "Roast chicken" },
      primary_column: "right" } } }) },
  { id: "aivi-generic", label: "Aivi generic: bar, state, remaining time", body: () => ({ title: "Washer", data: { tag: "aivi-generic", live_update: true,
    template: { template: "generic", progress: 0.35, state: "In progress", icon: "washer", remaining_time: 2120 } } }) },
  { id: "notification", label: "Plain notification", body: () => ({ title: "Front door", message: "Someone is at the door", data: { tag: "doorbell" } }) },
];
