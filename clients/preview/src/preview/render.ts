import { compactHTML, expandedHTML, lockHTML, markActivity, minimalHTML, relevanceOrder, rendered } from "../common/cards.js";
import { titleOf } from "../../../typescript/src/liveActivityRules.js";
import { $, $opt, esc, isNum, Loose } from "../common/dom.js";
import { hasGlyph } from "../common/icons.js";
import { isTemplate } from "../common/templates.js";
import { clockTime, relTime, tickClock } from "../common/time.js";
import { renderDevicesPanel } from "./devicesPanel.js";
import { Dev, DevEls, dirty, LOG_LIMIT, model, PView } from "./model.js";

/** Rendering: the chrome, each device's section, each activity's card and presentations. */

function metaHTML(dev: Dev, view: PView): string {
  const act = view.act;
  const s = act.state as Loose;
  const bits = [`<code>${esc(act.tag)}</code>`, `seq ${esc(view.seq ?? "—")}`, `phase <b data-field="phase">${esc(act.phase)}</b>`];
  bits.push(`relevance ${isNum(act.relevance_score) ? act.relevance_score : "—"}`);
  if (isNum(act.stale_date)) bits.push(`stale ${relTime(act.stale_date)}`);
  if (act.phase === "ended" && isNum(act.dismissal_date)) bits.push(`dismissal ${relTime(act.dismissal_date)}`);
  if (s.icon && !isTemplate(s)) {
    const name = String(s.icon).replace(/^mdi:/, "");
    bits.push(`icon ${esc(s.icon)}${hasGlyph(name) ? "" : " <i>(no such MDI icon: initials)</i>"}`);
  }
  if (s.url) bits.push(`tap → ${esc(s.url)}`);
  if (isTemplate(s) && s.template.tap_url) bits.push(`tap → ${esc(s.template.tap_url)}`);
  if (act.attributes.started_at) bits.push(`started ${relTime(act.attributes.started_at)}`);
  return `<div class="meta" data-field="meta"><span class="pres-title">${esc(titleOf(act) || act.tag)}</span> ${bits.join(" · ")}` +
    `<span class="acts"><button type="button" data-action="end" data-device-id="${esc(dev.id)}" data-tag="${esc(act.tag)}" ` +
    `${act.phase === "ended" ? "disabled" : ""}>End</button><button type="button" data-action="dismiss" ` +
    `data-device-id="${esc(dev.id)}" data-tag="${esc(act.tag)}">Dismiss</button></span></div>`;
}

function renderActivity(dev: Dev, view: PView): void {
  if (!view.el) {
    const lock = document.createElement("article");
    lock.className = "la";
    lock.setAttribute("data-activity", "");
    lock.setAttribute("data-region", "lock-screen");
    const pres = document.createElement("div");
    pres.className = "pres";
    pres.setAttribute("data-activity-presentations", "");
    view.el = { lock, pres };
  }
  for (const el of [view.el.lock, view.el.pres]) {
    markActivity(el, dev.id, view);
    el.dataset.seq = view.seq == null ? "" : String(view.seq);
  }
  view.el.lock.innerHTML = lockHTML(view);
  const r = rendered(view);
  view.el.pres.innerHTML = metaHTML(dev, view) +
    `<div class="pres-row"><figure><figcaption>compact</figcaption>${compactHTML(view, r, "island-compact")}</figure>` +
    `<figure><figcaption>minimal</figcaption>${minimalHTML(view, r, "island-minimal")}</figure></div>` +
    `<figure><figcaption>expanded</figcaption>${expandedHTML(view, r)}</figure>`;
  view.rendered = r;
}

function ensureDevEl(dev: Dev): DevEls {
  if (dev.el) return dev.el;
  const sec = document.createElement("section");
  sec.className = "device";
  sec.dataset.deviceId = dev.id;
  const id = esc(dev.id);
  sec.innerHTML = `<header class="dev-head"><h2 data-field="device-name"></h2>` +
    `<div class="status" data-region="device-status" data-device-id="${id}"></div></header>` +
    `<div class="dev-body"><div class="phone" data-region="phone" data-device-id="${id}">` +
    `<div class="island-row" data-region="island"></div>` +
    `<div class="lock-time"><div data-field="date"></div><div class="big" data-field="clock"></div></div>` +
    `<div class="stack" data-region="lock-stack"></div><div class="notes" data-region="notifications"></div>` +
    `<div class="empty" data-field="empty">No Live Activities</div></div>` +
    `<div class="side"><h3>Dynamic Island presentations <small>by relevance</small></h3>` +
    `<div class="pres-list" data-region="presentations"></div><p class="none" data-field="presentations-empty">none</p>` +
    `<h3>Event log <small>last ${LOG_LIMIT}, newest first</small></h3>` +
    `<ol class="log" data-region="event-log" data-device-id="${id}"></ol></div></div>`;
  const list = $("[data-region=devices]");
  const after = Array.from(list.children).find((c) => ((c as HTMLElement).dataset.deviceId ?? "") > dev.id);
  list.insertBefore(sec, after || null);
  const waiting = $opt("[data-field=waiting]");
  if (waiting) waiting.hidden = true;
  dev.el = {
    sec, status: $("[data-region=device-status]", sec), name: $("[data-field=device-name]", sec),
    stack: $("[data-region=lock-stack]", sec), pres: $("[data-region=presentations]", sec), island: $("[data-region=island]", sec),
    log: $("[data-region=event-log]", sec), presEmpty: $("[data-field=presentations-empty]", sec),
    notes: $("[data-region=notifications]", sec), empty: $("[data-field=empty]", sec),
  };
  tickClock(sec);
  return dev.el;
}

function statusHTML(dev: Dev): string {
  const i = dev.info;
  const chips: string[] = [];
  if (!i) chips.push('<span class="chip" data-field="path">state unknown</span>');
  else {
    const label = i.path === "lan" ? `LAN · ${i.sessions} session${i.sessions === 1 ? "" : "s"}`
      : i.path === "relay" ? "relay (no LAN session)" : "no path (no LAN session, no relay)";
    chips.push(`<span class="chip ${esc(i.path)}" data-field="path" title="how a change reaches this device now">${esc(label)}</span>`);
    if (isNum(i.activities)) chips.push(`<span class="chip" data-field="activity-count">${esc(i.activities)} activit${i.activities === 1 ? "y" : "ies"}</span>`);
    if (i.queued_notifications) chips.push(`<span class="chip">${esc(i.queued_notifications)} queued notifications</span>`);
    if (i.registration) chips.push(`<span class="chip" title="${esc(i.registration.push_url || "")}">push_token …${esc(String(i.registration.push_token).slice(-6))}</span>`);
    if (i.live_activity_tokens) chips.push(`<span class="chip">${esc(i.live_activity_tokens)} activity tokens</span>`);
    if (i.push_to_start_token) chips.push('<span class="chip">push-to-start token</span>');
    if (isNum(i.last_seen) && !i.connected) chips.push(`<span class="chip">last seen ${esc(relTime(i.last_seen))}</span>`);
  }
  if (dev.dropped) {
    chips.push(`<span class="chip warn" data-field="dropped" title="the gateway's notification queue overflowed">` +
      `${dev.dropped} notification${dev.dropped === 1 ? "" : "s"} dropped</span>`);
  }
  chips.push(`<span class="chip ${dev.synced ? "lan" : ""}" data-field="stream" title="this page's observer stream">` +
    `${dev.synced ? "preview synced" : "preview syncing"} · #${esc(dev.seq)}</span>`);
  return chips.join("");
}

function renderDevice(dev: Dev): void {
  const el = ensureDevEl(dev);
  if (dev.dirty.info) {
    el.name.innerHTML = `${esc(dev.name)} <small>${esc(dev.id)}</small>`;
    const i = dev.info;
    el.status.dataset.path = i ? i.path : "unknown";
    el.status.dataset.connected = i ? String(!!i.connected) : "unknown";
    el.status.dataset.sessions = i ? String(i.sessions) : "";
    el.status.innerHTML = statusHTML(dev);
  }
  for (const r of dev.removed) {
    r.lock.remove();
    r.pres.remove();
  }
  dev.removed = [];
  for (const tag of dev.dirtyActs) {
    const view = dev.views.get(tag);
    if (view) renderActivity(dev, view);
  }
  if (dev.dirty.order || dev.dirtyActs.size > 0) {
    const order = relevanceOrder(dev.views.values());
    for (const [box, key] of [[el.stack, "lock"], [el.pres, "pres"]] as const) {
      const want = order.filter((a) => a.el).map((a) => a.el![key]);
      const have = Array.from(box.children);
      if (want.length !== have.length || want.some((w, i) => w !== have[i])) for (const w of want) box.appendChild(w);
    }
    // The island: the most relevant live activity compact, the next one minimal (ended ones leave the island).
    const live = order.filter((a) => a.act.phase !== "ended" && a.rendered);
    el.island.innerHTML = live.length
      ? compactHTML(live[0], live[0].rendered!, "island-live-compact") +
        (live[1] ? minimalHTML(live[1], live[1].rendered!, "island-live-minimal") : "")
      : '<div class="di island-idle"></div>';
    el.empty.hidden = order.length > 0;
    el.presEmpty.hidden = order.length > 0;
    el.sec.dataset.activities = String(order.length);
  }
  if (dev.dirty.log) {
    const rows = dev.log.slice(-LOG_LIMIT).reverse().map((e) =>
      `<li data-log-entry data-type="${esc(e.type)}" data-seq="${esc(e.seq == null ? "" : e.seq)}" data-tag="${esc(e.tag)}">` +
      `<time>${clockTime(e.at)}.${String(e.at % 1000).padStart(3, "0")}</time> <b class="t-${esc(e.type)}">${esc(e.type)}</b>` +
      `${e.tag ? ` <span class="tag">${esc(e.tag)}</span>` : ""}${e.seq != null ? ` <span class="seq">#${esc(e.seq)}</span>` : ""}` +
      `${e.detail ? ` <code>${esc(e.detail)}</code>` : ""}</li>`);
    el.log.innerHTML = rows.join("") || '<li class="none">no events yet</li>';
  }
  if (dev.dirty.notes) {
    el.notes.innerHTML = dev.notes.map((n) => `<div class="note" data-notification data-tag="${esc(n.tag)}" data-seq="${n.seq}">` +
      `<div class="note-app">HOME ASSISTANT <span>${clockTime(n.at).slice(0, 5)}</span></div>` +
      `<div class="note-title">${esc(n.title)}</div><div class="note-body">${esc(n.message)}</div></div>`).join("");
  }
  dev.dirty = { info: false, log: false, notes: false, order: false };
  dev.dirtyActs.clear();
}

const CONN_TEXT: { [state: string]: string } = {
  idle: "Starting…", need_token: "Enter a token", connecting: "Connecting…", open: "Live",
  auth_error: "Token rejected", disconnected: "Disconnected",
};

function renderChrome(): void {
  document.body.dataset.connState = model.conn;
  const pill = $("[data-region=connection]");
  pill.dataset.connState = model.conn;
  let text = CONN_TEXT[model.conn] || model.conn;
  const n = model.devices.size;
  if (model.conn === "open") text = `Live · ${model.role || "observer"} · ${n} device${n === 1 ? "" : "s"}`;
  if (model.conn === "disconnected") {
    const s = Math.max(0, Math.ceil((model.retryAt - Date.now()) / 1000));
    text = `Disconnected · retry ${model.retry}${s > 0 ? ` in ${s} s` : " now"}`;
  }
  $("[data-field=conn-text]", pill).textContent = text;
  const banner = $("[data-region=error]");
  banner.hidden = !model.error || (model.conn !== "auth_error" && model.conn !== "disconnected");
  banner.dataset.errorKind = model.errorKind || "";
  banner.dataset.closeCode = model.closeCode == null ? "" : String(model.closeCode);
  $("[data-field=error-text]", banner).textContent = model.error || "";
  const waiting = $opt("[data-field=waiting]");
  if (waiting && !n) {
    waiting.textContent = model.conn === "auth_error" || model.conn === "need_token" ? "Enter the admin or viewer token to see the devices."
      : model.conn === "disconnected" ? "The gateway is not reachable yet." : "Waiting for the gateway's snapshot…";
  }
  $("[data-region=token-form]").dataset.needed = String(model.conn === "auth_error" || model.conn === "need_token");
  const stats = $("[data-field=stats]");
  stats.textContent = `${model.frames} frames · ${model.renders} renders` +
    (model.mdi ? ` · MDI ${model.mdi.version} (${model.mdi.count} icons)` : " · icon set not loaded: initials");
  stats.dataset.frames = String(model.frames);
}

function renderTargets(): void {
  const sel = $<HTMLSelectElement>("[data-field=target]");
  const keep = sel.value;
  const ids = Array.from(model.devices.keys()).sort();
  sel.innerHTML = '<option value="all">all devices</option>' +
    ids.map((id) => `<option value="${esc(id)}">${esc(model.devices.get(id)!.name)} (${esc(id)})</option>`).join("");
  sel.value = ids.includes(keep) ? keep : "all";
}

export function flush(): void {
  model.renders++;
  if (dirty.targets) {
    renderTargets();
    dirty.targets = false;
  }
  for (const id of dirty.devices) {
    const dev = model.devices.get(id);
    if (dev) renderDevice(dev);
  }
  dirty.devices.clear();
  if (dirty.panel) {
    renderDevicesPanel();
    dirty.panel = false;
  }
  renderChrome();
  dirty.chrome = false;
}
