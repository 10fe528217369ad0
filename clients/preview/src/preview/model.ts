import type { LanpushClient } from "../../../typescript/src/index.js";
import type { ActView, Rendered } from "../common/cards.js";
import type { IconSet } from "../common/icons.js";
import type { Loose } from "../common/dom.js";

/**
 * The preview's model: per device, the activities the client library holds (as views with the page's own
 * anchors: alerts, remaining-time anchors, DOM elements), the last frames for the event log, the notifications
 * shown, and what `GET /v1/devices` says about it. Events only change the model and mark what changed; one
 * pass per animation frame renders the latest state of each changed activity (render.ts), so a burst of
 * updates costs one render per frame.
 */
export const LOG_LIMIT = 30;
export const NOTE_LIMIT = 3;

export type ConnState = "idle" | "need_token" | "connecting" | "open" | "auth_error" | "disconnected";

export interface PView extends ActView {
  /** The seq of the last frame that changed it (from the wire: the library's state has none per activity). */
  seq: number | null;
  el: { lock: HTMLElement; pres: HTMLElement } | null;
  rendered: Rendered | null;
}

export interface LogEntry {
  at: number;
  type: string;
  seq: number | null;
  tag: string;
  detail: string;
}

export interface Note {
  at: number;
  seq: number;
  title: string;
  message: string;
  tag: string;
}

export interface DevEls {
  sec: HTMLElement;
  status: HTMLElement;
  name: HTMLElement;
  stack: HTMLElement;
  pres: HTMLElement;
  island: HTMLElement;
  log: HTMLElement;
  presEmpty: HTMLElement;
  notes: HTMLElement;
  empty: HTMLElement;
}

export interface Dev {
  id: string;
  name: string;
  /** The device's entry of `GET /v1/devices` (or its latest `device` frame). */
  info: Loose | null;
  views: Map<string, PView>;
  log: LogEntry[];
  notes: Note[];
  synced: boolean;
  epoch: string | null;
  seq: number;
  /** Notifications the gateway dropped for this device (notifications_dropped), since the page loaded. */
  dropped: number;
  el: DevEls | null;
  dirty: { info: boolean; log: boolean; notes: boolean; order: boolean };
  dirtyActs: Set<string>;
  removed: { lock: HTMLElement; pres: HTMLElement }[];
}

export const model = {
  token: null as string | null,
  conn: "idle" as ConnState,
  role: null as string | null,
  error: null as string | null,
  errorKind: null as string | null,
  closeCode: null as number | null,
  retry: 0,
  retryAt: 0,
  client: null as LanpushClient | null,
  devices: new Map<string, Dev>(),
  /** The last `GET /v1/devices` answer (the Devices panel lists it). */
  deviceList: [] as Loose[],
  mdi: null as IconSet | null,
  frames: 0,
  renders: 0,
};

export const dirty = { chrome: true, devices: new Set<string>(), targets: true, panel: true };

let scheduled = false;
let flushFn: () => void = () => {};

export function setFlush(fn: () => void): void {
  flushFn = () => {
    if (!scheduled) return;
    scheduled = false;
    fn();
  };
}

/** One render per animation frame; a hidden tab gets none, so at most 4 a second then. */
export function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(flushFn);
  setTimeout(flushFn, 250);
}

export function flushNow(): void {
  scheduled = true;
  flushFn();
}

export function touchChrome(): void {
  dirty.chrome = true;
  schedule();
}

export function touchDev(dev: Dev, what: keyof Dev["dirty"]): void {
  dev.dirty[what] = true;
  dirty.devices.add(dev.id);
  schedule();
}

export function touchAct(dev: Dev, tag: string): void {
  dev.dirtyActs.add(tag);
  dirty.devices.add(dev.id);
  schedule();
}

export function touchPanel(): void {
  dirty.panel = true;
  schedule();
}

export function ensureDev(id: string, name?: string): Dev {
  let dev = model.devices.get(id);
  if (!dev) {
    dev = {
      id, name: name || id, info: null, views: new Map(), log: [], notes: [], synced: false, epoch: null, seq: 0, dropped: 0,
      el: null, dirty: { info: true, log: true, notes: true, order: true }, dirtyActs: new Set(), removed: [],
    };
    model.devices.set(id, dev);
    dirty.targets = true;
    dirty.devices.add(id);
    schedule();
  } else if (name && name !== dev.name) {
    dev.name = name;
    touchDev(dev, "info");
    dirty.targets = true;
  }
  return dev;
}

export function removeView(dev: Dev, tag: string): void {
  const view = dev.views.get(tag);
  if (!view) return;
  dev.views.delete(tag);
  dev.dirtyActs.delete(tag);
  if (view.el) dev.removed.push(view.el);
  touchDev(dev, "order");
}

/** A device removed from the gateway: its section goes. */
export function forgetDev(id: string): void {
  const dev = model.devices.get(id);
  if (!dev) return;
  model.devices.delete(id);
  dev.el?.sec.remove();
  dirty.devices.delete(id);
  dirty.targets = true;
  touchChrome();
}

export function logEntry(dev: Dev, entry: Omit<LogEntry, "at">): void {
  dev.log.push({ at: Date.now(), ...entry });
  if (dev.log.length > LOG_LIMIT * 2) dev.log.splice(0, dev.log.length - LOG_LIMIT);
  touchDev(dev, "log");
}
