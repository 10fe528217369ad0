import { followTaps, staleChanged } from "../common/cards.js";
import { $, storage, takeQueryParam } from "../common/dom.js";
import { loadIcons } from "../common/icons.js";
import { startTicking } from "../common/time.js";
import { initDevicesPanel } from "./devicesPanel.js";
import { dirty, flushNow, model, schedule, setFlush, touchAct, touchChrome } from "./model.js";
import { flush } from "./render.js";
import { initSendPanel } from "./send.js";
import { connect, refreshDevices, TOKEN_KEY } from "./stream.js";

/**
 * The live preview (`/`, `/preview`): every device's activities as a phone would show them, through the client
 * library as an observer. It asks for the admin or the read-only viewer token (kept in localStorage; `?token=`
 * works too and is removed from the address bar). README "Live preview" describes every region.
 */
function init(): void {
  setFlush(flush);
  followTaps(document.body);
  initSendPanel();
  initDevicesPanel();
  $("[data-region=token-form]").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $<HTMLInputElement>("[data-field=token]");
    const v = input.value.trim();
    if (!v) return;
    model.token = v;
    input.value = "";
    connect();
  });
  $("[data-action=forget]").addEventListener("click", () => {
    storage.remove(TOKEN_KEY);
    model.token = null;
    connect();
  });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) {
      schedule();
      void refreshDevices();
    }
  });
  startTicking((now) => {
    for (const dev of model.devices.values()) {
      for (const view of dev.views.values()) {
        if (view.alert && now > view.alertUntil) {
          view.alert = null;
          touchAct(dev, view.act.tag);
        }
        if (staleChanged(view, now)) touchAct(dev, view.act.tag);
      }
    }
    if (model.conn === "disconnected") touchChrome();
  });
  setInterval(() => {
    if (model.conn === "open" && !document.hidden) void refreshDevices();
  }, 3000);

  model.token = takeQueryParam("token") ?? storage.get(TOKEN_KEY);
  void loadIcons().then((set) => {
    model.mdi = set;
    document.body.dataset.mdi = set ? "svg" : "fallback";
    for (const dev of model.devices.values()) for (const tag of dev.views.keys()) touchAct(dev, tag);
    touchChrome();
  });
  connect();
  dirty.panel = true;
  touchChrome();
}

// Tests and users' own tooling read the model; `flush` renders now instead of at the next animation frame.
(window as unknown as { lanpushPreview: object }).lanpushPreview = { model, flush: flushNow };
init();
