import { LanpushClient } from "../../../typescript/src/index.js";
import type { ServerFrame } from "../../../typescript/src/index.js";
import { api, streamURL } from "../common/api.js";
import { newView, updateView } from "../common/cards.js";
import { isNum, Loose, short, storage } from "../common/dom.js";
import { relTime } from "../common/time.js";
import {
  ensureDev, forgetDev, logEntry, model, NOTE_LIMIT, PView, removeView, touchAct, touchChrome, touchDev, touchPanel,
} from "./model.js";

/**
 * The preview's stream is the client library in the observer role: it never acks and never makes a device count
 * as connected. The library keeps each device's activities and reconnects with back-off; the page draws from its
 * events, and taps its `frame` events for the event log and the frame counter.
 */
export const TOKEN_KEY = "lanpush.preview.token";

/** The seq of the frame being applied: the library's activity events that follow it belong to it. */
let frameSeq: number | null = null;

export function connect(): void {
  const old = model.client;
  model.client = null;
  if (old) void old.stop();
  // A new client holds nothing yet: what the page showed for the old token goes.
  for (const dev of model.devices.values()) for (const tag of Array.from(dev.views.keys())) removeView(dev, tag);
  if (!model.token) {
    model.conn = "need_token";
    model.error = null;
    model.errorKind = null;
    touchChrome();
    return;
  }
  model.conn = "connecting";
  model.retry = 0;
  touchChrome();
  const client = new LanpushClient({
    url: streamURL(), token: model.token, role: "observer",
    // A LAN page: retry quickly (the gateway restarts in well under a second), at most every 4 s.
    backoff: { initial: 250, max: 4000 },
    // A silent network loss: ping after 10 s of quiet, give up 10 s later.
    keepaliveInterval: 10_000, keepaliveTimeout: 10_000,
  });
  model.client = client;
  const mine = () => model.client === client;
  client.on("frame", ({ frame }) => { if (mine()) onFrame(frame); });
  client.on("status", ({ status, detail }) => { if (mine()) onStatus(status, detail); });
  client.on("auth_rejected", ({ message, code }) => { if (mine()) onRejected(message, code); });
  client.on("activity", ({ device, tag, current, cause, alert }) => {
    if (!mine()) return;
    const dev = ensureDev(device);
    if (!current) return removeView(dev, tag);
    let view = dev.views.get(tag);
    if (view && cause === "start") {
      removeView(dev, tag); // a new activity under the tag: a new card
      view = undefined;
    }
    if (!view) {
      view = { ...newView(current), seq: null, el: null, rendered: null } as PView;
      dev.views.set(tag, view);
    }
    updateView(view, current, alert);
    view.seq = frameSeq ?? view.seq;
    touchAct(dev, tag);
    touchDev(dev, "order");
  });
  client.on("snapshot", ({ device, epoch }) => {
    if (!mine()) return;
    const dev = ensureDev(device);
    dev.epoch = epoch;
    dev.synced = false;
    touchDev(dev, "info");
    touchDev(dev, "order");
  });
  client.on("synced", ({ device }) => {
    if (!mine()) return;
    const dev = ensureDev(device);
    dev.synced = true;
    touchDev(dev, "info");
  });
  client.on("notification", ({ device, notification: n }) => {
    if (!mine()) return;
    const dev = ensureDev(device);
    dev.notes.unshift({ at: Date.now(), seq: n.seq, title: n.title ?? "", message: n.message ?? "", tag: String(n.data.tag ?? "") });
    dev.notes.length = Math.min(dev.notes.length, NOTE_LIMIT);
    touchDev(dev, "notes");
  });
  client.on("clear", ({ device, tag }) => {
    if (!mine()) return;
    const dev = ensureDev(device);
    dev.notes = dev.notes.filter((n) => n.tag !== tag);
    touchDev(dev, "notes");
  });
  client.on("notifications_dropped", ({ device, count }) => {
    if (!mine()) return;
    const dev = ensureDev(device);
    dev.dropped += count;
    touchDev(dev, "info");
  });
  client.on("error", ({ message }) => console.warn("lanpush:", message));
  client.start();
}

function detailOf(f: Loose): string {
  switch (f.type) {
    case "snapshot": return `${(f.activities || []).length} activities`;
    case "start": return short(f.state);
    case "update":
    case "end":
      return short(f.patch) + (f.type === "end" && isNum(f.dismissal_date) ? ` · dismissal ${relTime(f.dismissal_date)}` : "") +
        (f.phase === "dismissed" ? " · dismissed at once" : "") + (f.silent ? " · silent" : "") + (f.alert ? " · alert " + short(f.alert) : "");
    case "lifecycle": return String(f.phase);
    case "notification": return short({ title: f.title, message: f.message, data: f.data });
    case "clear": return "notification cleared";
    case "synced": return `synced to #${f.seq}`;
    case "replay": return `from #${f.from}`;
    case "notifications_dropped": return `${f.count} notification${f.count === 1 ? "" : "s"} dropped, through #${f.through}`;
    case "error": return String(f.message);
    default: return "";
  }
}

const DEVICE_CHANGES = new Set(["snapshot", "start", "end", "lifecycle", "notification", "clear"]);

function onFrame(frame: ServerFrame): void {
  model.frames++;
  const f = frame as unknown as Loose;
  frameSeq = isNum(f.seq) ? f.seq : null;
  if (f.type === "auth_ok") {
    model.conn = "open";
    model.retry = 0;
    model.error = null;
    model.errorKind = null;
    model.closeCode = null;
    model.role = f.role || "observer";
    if (model.token) storage.set(TOKEN_KEY, model.token);
    void refreshDevices();
    touchChrome();
  } else if (f.type === "auth_invalid") {
    model.error = f.message || "invalid token";
  }
  if (f.device_id == null) {
    if (f.type === "error") console.warn("lanpush:", f.message);
    touchChrome();
    return;
  }
  const id = String(f.device_id);
  if (f.type === "device") {
    if (f.removed === true) return forgetDev(id);
    const dev = ensureDev(id, typeof f.name === "string" ? f.name : undefined);
    dev.info = { ...(dev.info || {}), ...f };
    touchDev(dev, "info");
    refreshDevicesSoon();
    return;
  }
  const dev = ensureDev(id);
  const tag = f.tag || (f.data && f.data.tag) || "";
  const newEpoch = f.type === "snapshot" && dev.epoch && dev.epoch !== f.epoch ? " (new epoch)" : "";
  logEntry(dev, { type: f.type, seq: frameSeq, tag: String(tag), detail: detailOf(f) + newEpoch });
  if (frameSeq !== null) dev.seq = Math.max(dev.seq, frameSeq);
  if (f.type === "snapshot") dev.seq = frameSeq ?? dev.seq;
  if (DEVICE_CHANGES.has(f.type)) refreshDevicesSoon();
  touchChrome();
}

function onStatus(status: string, detail: { code?: number; reason?: string; retryIn?: number }): void {
  if (status === "live") {
    model.conn = "open";
  } else if (status === "connecting") {
    // Reconnect attempts keep the page "disconnected" (dimmed, with the banner) until the gateway answers.
    if (model.conn !== "disconnected") model.conn = "connecting";
  } else if (status === "offline") {
    const wasOpen = model.conn === "open" || (model.conn === "connecting" && model.retry === 0);
    const code = detail.code ?? 1006;
    if (wasOpen || model.closeCode == null) model.closeCode = code;
    model.conn = "disconnected";
    model.errorKind = "disconnected";
    model.retry++;
    model.retryAt = Date.now() + (detail.retryIn ?? 0);
    const first = model.closeCode;
    const what = first === 1001 ? "the gateway shut down (close 1001)" : first === 1006 ? "the connection failed or dropped (1006)"
      : `the connection closed with code ${first}${detail.reason ? " " + detail.reason : ""}`;
    const attempts = model.retry > 1 ? ` ${model.retry - 1} reconnect attempt${model.retry > 2 ? "s" : ""} failed so far.` : "";
    model.error = `Lost the connection to lanpushd: ${what}.${attempts} Reconnecting automatically; the cards show the last ` +
      "state received and are replaced by a fresh snapshot on reconnect.";
    for (const dev of model.devices.values()) {
      dev.synced = false;
      touchDev(dev, "info");
    }
  }
  touchChrome();
}

function onRejected(message: string, code?: number): void {
  model.conn = "auth_error";
  model.errorKind = "auth";
  model.closeCode = code ?? 4001;
  model.error = `The gateway rejected this token (${message || "auth_invalid"}, close 4001). ` +
    "Enter the admin token or the viewer token from lanpush.yaml.";
  touchChrome();
}

let devicesInFlight = false;

/** What `GET /v1/devices` says: paths, sessions, counts (the chips), and the Devices panel's list. */
export async function refreshDevices(): Promise<void> {
  if (!model.token || devicesInFlight) return;
  devicesInFlight = true;
  try {
    const { status, data } = await api("GET", "/v1/devices", model.token);
    if (status === 200 && data && Array.isArray(data.devices)) {
      model.deviceList = data.devices;
      const ids = new Set<string>();
      for (const d of data.devices as Loose[]) {
        ids.add(d.id);
        const dev = ensureDev(d.id, d.name);
        dev.info = d;
        touchDev(dev, "info");
      }
      for (const id of Array.from(model.devices.keys())) if (!ids.has(id)) forgetDev(id);
      touchPanel();
    }
  } catch {
    /* the stream reports the outage */
  } finally {
    devicesInFlight = false;
  }
}

let devicesSoon: ReturnType<typeof setTimeout> | null = null;

/** Activity counts and paths change with starts, ends and dismissals: refresh soon, at most every 300 ms. */
export function refreshDevicesSoon(): void {
  if (devicesSoon) return;
  devicesSoon = setTimeout(() => {
    devicesSoon = null;
    void refreshDevices();
  }, 300);
}
