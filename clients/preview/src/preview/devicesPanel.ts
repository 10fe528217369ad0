import qrcode from "qrcode-generator";
import { DEFAULT_SCRIPT_NAME, scriptingRunURL } from "../../../typescript/src/scriptingRunURL.js";
import { api } from "../common/api.js";
import { $, esc, isNum, Loose } from "../common/dom.js";
import { timerSpan } from "../common/time.js";
import { model, touchPanel } from "./model.js";
import { attempt } from "./send.js";
import { refreshDevices } from "./stream.js";

/**
 * The Devices panel (admin token): the devices `GET /v1/devices` lists, with add, rename, new token, remove and
 * pair. Devices of the config file are read-only (the gateway answers 409 for them): their buttons are disabled.
 * A pairing shows the pairing URL as a QR code (Debian's qrcode-generator, vendored) and the short code for typing,
 * and a second QR code for an iPhone's Camera: the Scripting app's run URL with the pairing inside, which opens the
 * lanpush script (under the name typed beside it) and pairs it.
 */
const RESULT = "devices-result";

const panel = {
  editing: null as string | null,
  editValue: "",
  armedRemove: null as string | null,
  armedUntil: 0,
};

function rowHTML(d: Loose): string {
  const id = esc(d.id);
  const readOnly = d.source === "config";
  const off = readOnly ? ' disabled title="defined in the config file: change it there"' : "";
  const conn = d.connected ? `LAN · ${d.sessions} session${d.sessions === 1 ? "" : "s"}` : "not connected";
  const name = panel.editing === d.id
    ? `<input data-field="rename-input" value="${esc(panel.editValue)}" aria-label="new name"> ` +
      `<button type="button" data-action="rename-save" data-device-id="${id}">Save</button>` +
      `<button type="button" data-action="rename-cancel">Cancel</button>`
    : `<b data-field="row-name">${esc(d.name)}</b> <small>${id}</small>`;
  const removing = panel.armedRemove === d.id && Date.now() < panel.armedUntil;
  return `<li data-device-row data-device-id="${id}" data-source="${esc(d.source)}" data-read-only="${readOnly}" ` +
    `data-connected="${!!d.connected}"><div class="who">${name}` +
    `<span class="chip" data-field="row-source">${readOnly ? "config file · read-only" : "added here"}</span>` +
    `<span class="chip ${d.connected ? "lan" : ""}" data-field="row-connected">${esc(conn)}</span></div>` +
    `<div class="row"><button type="button" data-action="rename" data-device-id="${id}"${off}>Rename</button>` +
    `<button type="button" data-action="new-token" data-device-id="${id}"${off}>New token</button>` +
    `<button type="button" data-action="pair" data-device-id="${id}"${off}>Pair</button>` +
    `<button type="button" class="danger" data-action="remove" data-device-id="${id}"${off}>${removing ? "Confirm remove" : "Remove"}</button></div></li>`;
}

export function renderDevicesPanel(): void {
  const list = $("[data-field=device-list]");
  const focused = document.activeElement && document.activeElement.matches("[data-field=rename-input]");
  const devices = [...model.deviceList].sort((a, b) => (a.id < b.id ? -1 : 1));
  list.innerHTML = devices.map(rowHTML).join("") || '<li class="none">no devices</li>';
  if (focused) list.querySelector<HTMLInputElement>("[data-field=rename-input]")?.focus();
}

function showSecret(device: string, token: string): void {
  $("[data-region=pairing]").hidden = true;
  const box = $("[data-field=device-secret]");
  $("[data-field=secret-device]", box).textContent = device;
  $("[data-field=device-token]", box).textContent = token;
  box.dataset.deviceId = device;
  box.hidden = false;
}

/** The pairing URL as a QR code (a GIF data URL): byte mode, error correction M, the smallest version it fits in. */
function qrImage(url: string): string {
  const qr = qrcode(0, "M");
  qr.addData(url);
  qr.make();
  // cell size and margin are in pixels: the margin is the four-module quiet zone scanners need.
  return qr.createDataURL(6, 24);
}

function showPairing(p: Loose): void {
  $("[data-field=device-secret]").hidden = true;
  const box = $("[data-region=pairing]");
  box.dataset.deviceId = p.device;
  box.dataset.url = p.url;
  $("[data-field=pairing-device]", box).textContent = p.device;
  $("[data-field=pairing-qr]", box).innerHTML =
    `<img data-field="pairing-qr-image" alt="pairing QR code for ${esc(p.device)}" src="${qrImage(p.url)}">`;
  $("[data-field=pairing-short-code]", box).textContent = p.short_code;
  $("[data-field=pairing-url]", box).textContent = p.url;
  showScriptingPairing();
  $("[data-field=pairing-expires]", box).innerHTML = isNum(p.expires_at) ? timerSpan("pairing-countdown", "down", p.expires_at * 1000) : "";
  box.hidden = false;
}

/** The Scripting run URL for the pairing on show, for the script name typed in the panel. */
function showScriptingPairing(): void {
  const box = $("[data-region=pairing]");
  const url = box.dataset.url;
  if (!url) return;
  const name = $<HTMLInputElement>("[data-field=pairing-script-name]", box).value.trim() || DEFAULT_SCRIPT_NAME;
  const run = scriptingRunURL(url, name);
  const region = $("[data-region=pairing-scripting]", box);
  region.dataset.url = run;
  region.dataset.scriptName = name;
  $("[data-field=pairing-scripting-qr]", region).innerHTML =
    `<img data-field="pairing-scripting-qr-image" alt="QR code opening the Scripting script ${esc(name)}" src="${qrImage(run)}">`;
  $("[data-field=pairing-scripting-url]", region).textContent = run;
}

function hideOutputs(): void {
  $("[data-field=device-secret]").hidden = true;
  $("[data-region=pairing]").hidden = true;
}

async function pair(device: string, name?: string): Promise<void> {
  hideOutputs();
  const body: Loose = { device };
  if (name) body.name = name;
  const a = await attempt(RESULT, "POST /v1/pairings", () => api("POST", "/v1/pairings", model.token, body));
  if (a && a.status === 201) showPairing(a.data);
  void refreshDevices();
}

async function add(id: string, name: string): Promise<void> {
  hideOutputs();
  const body: Loose = { id };
  if (name) body.name = name;
  const a = await attempt(RESULT, "POST /v1/devices", () => api("POST", "/v1/devices", model.token, body));
  if (a && a.status === 201) {
    showSecret(a.data.id, a.data.token);
    $<HTMLFormElement>("[data-field=add-device]").reset();
  }
  void refreshDevices();
}

async function onRowAction(action: string, id: string): Promise<void> {
  const path = `/v1/devices/${encodeURIComponent(id)}`;
  switch (action) {
    case "rename":
      panel.editing = id;
      panel.editValue = String(model.deviceList.find((d) => d.id === id)?.name ?? id);
      renderDevicesPanel();
      $<HTMLInputElement>("[data-field=rename-input]").select();
      return;
    case "rename-cancel":
      panel.editing = null;
      return renderDevicesPanel();
    case "rename-save": {
      const name = panel.editValue.trim();
      panel.editing = null;
      await attempt(RESULT, `PATCH ${path}`, () => api("PATCH", path, model.token, { name }));
      break;
    }
    case "new-token": {
      hideOutputs();
      const a = await attempt(RESULT, `POST ${path}/token`, () => api("POST", `${path}/token`, model.token));
      if (a && a.status === 200) showSecret(a.data.id, a.data.token);
      break;
    }
    case "pair":
      return pair(id);
    case "remove":
      // Two clicks, no modal dialog: the first arms the button for 4 s.
      if (panel.armedRemove !== id || Date.now() > panel.armedUntil) {
        panel.armedRemove = id;
        panel.armedUntil = Date.now() + 4000;
        setTimeout(touchPanel, 4100);
        return renderDevicesPanel();
      }
      panel.armedRemove = null;
      hideOutputs();
      await attempt(RESULT, `DELETE ${path}`, () => api("DELETE", path, model.token));
      break;
  }
  await refreshDevices();
  renderDevicesPanel();
}

export function initDevicesPanel(): void {
  const form = $<HTMLFormElement>("[data-field=add-device]");
  const value = (f: string) => $<HTMLInputElement>(`[data-field=${f}]`, form).value.trim();
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void add(value("new-device-id"), value("new-device-name"));
  });
  $("[data-action=add-and-pair]", form).addEventListener("click", () => {
    if (form.reportValidity()) void pair(value("new-device-id"), value("new-device-name") || undefined);
  });
  $("[data-field=pairing-script-name]").addEventListener("input", showScriptingPairing);
  const list = $("[data-field=device-list]");
  list.addEventListener("click", (e) => {
    const b = (e.target as Element).closest<HTMLButtonElement>("button[data-action]");
    if (b && !b.disabled) void onRowAction(b.dataset.action!, b.dataset.deviceId ?? "");
  });
  list.addEventListener("input", (e) => {
    const t = e.target as HTMLInputElement;
    if (t.matches("[data-field=rename-input]")) panel.editValue = t.value;
  });
  list.addEventListener("keydown", (e) => {
    const t = e.target as HTMLElement;
    if (e.key === "Enter" && t.matches("[data-field=rename-input]") && panel.editing) void onRowAction("rename-save", panel.editing);
  });
}
