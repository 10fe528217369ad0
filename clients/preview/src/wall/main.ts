import { LanpushClient, sortedActivities, WebStorageStore } from "../../../typescript/src/index.js";
import type { Activity, DeviceState, HeldNotification } from "../../../typescript/src/index.js";
import { streamURL } from "../common/api.js";
import { ActView, followTaps, lockHTML, markActivity, newView, staleChanged, updateView } from "../common/cards.js";
import { $, esc, storage, takeQueryParam } from "../common/dom.js";
import { loadIcons } from "../common/icons.js";
import { clockTime, startTicking, tickClock } from "../common/time.js";
import { redeem } from "./pairing.js";

/**
 * The wall view (`/wall`): one device's activities full screen for a tablet in a kiosk browser. It is that
 * device (device token: it acks, and counts as connected), keeps its state in localStorage through the client
 * library's store so a reload resumes by replay, and keeps showing the last state, marked as such, while the
 * gateway is away.
 */
const KEYS = { token: "lanpush.wall.token", device: "lanpush.wall.device", liveAt: "lanpush.wall.live-at" };
const STATE_PREFIX = "lanpush.wall.";
const STATE_KEY = "state";
const NOTE_LIMIT = 4;

const store = new WebStorageStore(localStorage, STATE_PREFIX);
const views = new Map<string, ActView>();
const els = new Map<string, HTMLElement>();
const stats = { snapshots: 0, replays: 0, notifications: 0, frames: 0, renders: 0 };
const wall = {
  client: null as LanpushClient | null,
  state: null as DeviceState | null,
  conn: "idle" as "idle" | "connecting" | "live" | "offline" | "auth_rejected" | "unpaired",
  /** The last moment the stream was known live (ms): what "offline since" shows. */
  liveAt: Number(storage.get(KEYS.liveAt)) || 0,
  offlineSince: 0,
  /** Notifications the gateway dropped while this screen was away (its queue overflowed), since the page loaded. */
  dropped: 0,
};

let scheduled = false;
function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(render);
  setTimeout(render, 250);
}

function markLive(): void {
  wall.liveAt = Date.now();
  storage.set(KEYS.liveAt, String(wall.liveAt));
}

/** Rebuilds the views from a state (the stored one at load, the client's afterwards), keeping anchors. */
function adopt(state: DeviceState | null): void {
  wall.state = state;
  const acts = state ? Object.values(state.activities) : [];
  const tags = new Set(acts.map((a) => a.tag));
  for (const tag of Array.from(views.keys())) if (!tags.has(tag)) views.delete(tag);
  for (const a of acts) {
    const v = views.get(a.tag);
    if (v) v.act = a;
    else views.set(a.tag, newView(a));
  }
  schedule();
}

/** What the page holds (the stored state until the client has more), in the order a phone shows it. */
function order(): Activity[] {
  return wall.state ? sortedActivities(wall.state) : [];
}

function noteHTML(n: HeldNotification): string {
  return `<div class="note" data-notification data-seq="${n.seq}" data-tag="${esc(n.data.tag ?? "")}">` +
    `<div class="note-app">HOME ASSISTANT <button type="button" data-action="dismiss-note" data-seq="${n.seq}" aria-label="dismiss">×</button></div>` +
    `<div class="note-title">${esc(n.title ?? "")}</div><div class="note-body">${esc(n.message ?? "")}</div></div>`;
}

function render(): void {
  if (!scheduled) return;
  scheduled = false;
  stats.renders++;
  const box = $("[data-region=wall-activities]");
  const want: HTMLElement[] = [];
  const device = storage.get(KEYS.device) ?? wall.client?.deviceId ?? "";
  for (const act of order()) {
    const view = views.get(act.tag);
    if (!view) continue;
    let el = els.get(act.tag);
    if (!el) {
      el = document.createElement("article");
      el.className = "la";
      el.setAttribute("data-activity", "");
      el.setAttribute("data-region", "lock-screen");
      els.set(act.tag, el);
    }
    markActivity(el, device, view);
    const html = lockHTML(view);
    if (el.dataset.html !== html) {
      el.innerHTML = html;
      el.dataset.html = html;
    }
    want.push(el);
  }
  for (const [tag, el] of els) if (!views.has(tag)) { el.remove(); els.delete(tag); }
  const have = Array.from(box.children);
  if (want.length !== have.length || want.some((w, i) => w !== have[i])) for (const w of want) box.appendChild(w);
  $("[data-field=empty]").hidden = want.length > 0 || wall.conn === "unpaired";
  const notes = (wall.state?.notifications ?? []).slice(-NOTE_LIMIT).reverse();
  const lost = wall.dropped ? `<div class="note dropped" data-field="dropped" data-count="${wall.dropped}"><div class="note-body">` +
    `${wall.dropped} older notification${wall.dropped === 1 ? " was" : "s were"} lost while this screen was away</div></div>` : "";
  $("[data-region=notifications]").innerHTML = lost + notes.map(noteHTML).join("");
  renderChrome(device);
}

const CONN_TEXT = { idle: "Starting…", connecting: "Connecting…", live: "Live", offline: "Offline", auth_rejected: "Token rejected", unpaired: "Not paired" };

function renderChrome(device: string): void {
  document.body.dataset.connState = wall.conn;
  document.body.dataset.paired = String(wall.conn !== "unpaired");
  const pill = $("[data-region=connection]");
  pill.dataset.connState = wall.conn;
  $("[data-field=conn-text]", pill).textContent = CONN_TEXT[wall.conn];
  const offline = $("[data-region=offline]");
  const down = wall.conn === "offline" || wall.conn === "connecting" && wall.offlineSince > 0;
  offline.hidden = !down;
  offline.dataset.since = String(wall.offlineSince || "");
  const since = wall.offlineSince ? `since ${clockTime(wall.offlineSince).slice(0, 5)}` : "";
  $("[data-field=offline-text]", offline).textContent = `Offline ${since} — showing the last state received`;
  $("[data-field=device]").textContent = device ? `device ${device}` : "";
  $("[data-region=pair-form]").hidden = wall.conn !== "unpaired" && wall.conn !== "auth_rejected";
}

function start(token: string): void {
  adopt(store.load(STATE_KEY));
  const client = new LanpushClient({
    url: streamURL(), token, store, storeKey: STATE_KEY,
    backoff: { initial: 250, max: 5000 }, keepaliveInterval: 15_000, keepaliveTimeout: 10_000,
  });
  wall.client = client;
  const mine = () => wall.client === client;
  client.on("frame", () => { stats.frames++; });
  client.on("activity", ({ tag, current, cause, alert }) => {
    if (!mine()) return;
    if (!current) views.delete(tag);
    else {
      const view = views.get(tag);
      if (!view || cause === "start") views.set(tag, newView(current));
      updateView(views.get(tag)!, current, alert);
    }
    wall.state = client.state;
    schedule();
  });
  const refresh = () => { if (mine()) adopt(client.state); };
  client.on("snapshot", () => { stats.snapshots++; refresh(); });
  client.on("replay", () => { stats.replays++; refresh(); });
  client.on("notification", () => { stats.notifications++; refresh(); });
  client.on("clear", refresh);
  client.on("notifications_dropped", ({ count }) => {
    wall.dropped += count;
    refresh();
  });
  client.on("synced", () => { markLive(); refresh(); });
  client.on("status", ({ status }) => {
    if (!mine()) return;
    if (status === "live") {
      wall.conn = "live";
      wall.offlineSince = 0;
      markLive();
    } else if (status === "offline") {
      if (wall.conn === "live") markLive();
      wall.conn = "offline";
      wall.offlineSince = wall.offlineSince || wall.liveAt || Date.now();
    } else if (status === "connecting") {
      wall.conn = wall.conn === "offline" ? "offline" : "connecting";
    }
    schedule();
  });
  client.on("auth_rejected", ({ message }) => {
    if (!mine()) return;
    wall.conn = "auth_rejected";
    showPairError(`The gateway no longer accepts this screen's token (${message}). Pair it again.`);
    schedule();
  });
  client.on("error", ({ message }) => console.warn("lanpush:", message));
  // The stored state shows at once; if the gateway turns out to be away, it is marked from the last time it was live.
  wall.conn = "connecting";
  client.start();
  schedule();
}

function showPairError(message: string): void {
  const p = $("[data-field=pair-error]");
  p.textContent = message;
  p.hidden = !message;
}

/** A new token (pairing or `?token=`): what was stored for another one is forgotten. */
function useToken(token: string, device: string | null): void {
  if (storage.get(KEYS.token) !== token) {
    store.clear(STATE_KEY);
    storage.remove(KEYS.liveAt);
    wall.liveAt = 0;
  }
  storage.set(KEYS.token, token);
  if (device) storage.set(KEYS.device, device);
  else storage.remove(KEYS.device);
}

function stop(): void {
  const old = wall.client;
  wall.client = null;
  if (old) void old.stop();
  views.clear();
  wall.state = null;
  wall.offlineSince = 0;
}

async function pairWith(input: string): Promise<void> {
  showPairError("");
  const r = await redeem(input);
  if (!r.ok) return showPairError(r.message);
  stop();
  useToken(r.token, r.device);
  start(r.token);
}

function init(): void {
  $("[data-field=pair]").addEventListener("submit", (e) => {
    e.preventDefault();
    void pairWith($<HTMLInputElement>("[data-field=pair-code]").value);
  });
  $("[data-action=forget]").addEventListener("click", () => {
    stop();
    store.clear(STATE_KEY);
    for (const k of Object.values(KEYS)) storage.remove(k);
    wall.conn = "unpaired";
    schedule();
  });
  document.addEventListener("click", (e) => {
    const b = (e.target as Element).closest<HTMLButtonElement>("button[data-action=dismiss-note]");
    if (b && wall.client) void wall.client.removeNotification(Number(b.dataset.seq)).then(() => adopt(wall.client!.state));
  });
  followTaps(document.body);
  startTicking((now) => {
    for (const v of views.values()) {
      if (v.alert && now > v.alertUntil) { v.alert = null; schedule(); }
      if (staleChanged(v, now)) schedule();
    }
    if (wall.conn === "live" && now - wall.liveAt > 5000) markLive();
  });
  tickClock(document);
  void loadIcons().then((set) => {
    document.body.dataset.mdi = set ? "svg" : "fallback";
    for (const el of els.values()) el.dataset.html = "";
    schedule();
  });
  const token = takeQueryParam("token");
  const pairing = takeQueryParam("pair");
  if (token) useToken(token, null);
  if (pairing) {
    wall.conn = "unpaired";
    schedule();
    // A failed pairing leaves the form up, or goes back to the device this screen already was.
    void pairWith(pairing).then(() => {
      const kept = storage.get(KEYS.token);
      if (!wall.client && kept) start(kept);
    });
    return;
  }
  const kept = storage.get(KEYS.token);
  if (kept) start(kept);
  else {
    wall.conn = "unpaired";
    schedule();
  }
}

(window as unknown as { lanpushWall: object }).lanpushWall = { wall, stats, views };
init();
