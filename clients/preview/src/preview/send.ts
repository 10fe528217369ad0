import { api, Answer } from "../common/api.js";
import { $, esc } from "../common/dom.js";
import { model } from "./model.js";
import { SAMPLES } from "./samples.js";
import { refreshDevices } from "./stream.js";

/** The send panel: an example as editable JSON, posted through the real ingest path (`POST /v1/push`). */

function fillSample(): void {
  const id = $<HTMLSelectElement>("[data-field=sample]").value;
  const sample = SAMPLES.find((x) => x.id === id) || SAMPLES[0];
  $<HTMLTextAreaElement>("[data-field=payload]").value = JSON.stringify(sample.body(), null, 2);
}

export function showResult(field: string, status: number, data: unknown, note = ""): void {
  const out = $(`[data-field=${field}]`);
  out.dataset.status = String(status);
  out.className = "result " + (status >= 200 && status < 300 ? "ok" : "bad");
  out.textContent = `${note}${status ? "HTTP " + status + "\n" : ""}${data == null ? "" : JSON.stringify(data, null, 2)}`;
}

/** Calls the API and shows the answer (or the failure) in a panel's result box. */
export async function attempt(field: string, what: string, call: () => Promise<Answer>): Promise<Answer | null> {
  try {
    const answer = await call();
    const note = answer.status === 401 ? `${what} needs the admin token (a viewer token is read-only)\n` : `${what} → `;
    showResult(field, answer.status, answer.data, note);
    return answer;
  } catch (e) {
    showResult(field, 0, null, `The gateway did not answer: ${(e as Error).message}\n`);
    return null;
  }
}

async function sendPayload(): Promise<void> {
  let body: unknown;
  try {
    body = JSON.parse($<HTMLTextAreaElement>("[data-field=payload]").value);
  } catch (e) {
    return showResult("send-result", 0, null, "Not valid JSON: " + (e as Error).message + "\n");
  }
  const target = $<HTMLSelectElement>("[data-field=target]").value;
  if (body && typeof body === "object" && !Array.isArray(body) && target && target !== "all") (body as { targets?: string[] }).targets = [target];
  await attempt("send-result", "POST /v1/push", () => api("POST", "/v1/push", model.token, body));
  void refreshDevices();
}

export async function endActivities(tag: string | null, device: string | null, dismissal: string): Promise<void> {
  const q = new URLSearchParams({ dismissal });
  if (device && device !== "all") q.set("device", device);
  const path = `/v1/activities${tag ? "/" + encodeURIComponent(tag) : ""}`;
  await attempt("send-result", `DELETE ${path}`, () => api("DELETE", `${path}?${q}`, model.token));
}

export function initSendPanel(): void {
  const sel = $<HTMLSelectElement>("[data-field=sample]");
  sel.innerHTML = SAMPLES.map((s) => `<option value="${s.id}">${esc(s.label)}</option>`).join("");
  sel.addEventListener("change", fillSample);
  fillSample();
  $("[data-action=send]").addEventListener("click", () => void sendPayload());
  $("[data-action=end-all]").addEventListener("click", () => void endActivities(null, $<HTMLSelectElement>("[data-field=target]").value, "default"));
  $("[data-action=reset-sample]").addEventListener("click", fillSample);
  document.addEventListener("click", (e) => {
    const b = (e.target as Element).closest<HTMLButtonElement>('button[data-action="end"], button[data-action="dismiss"]');
    if (b) void endActivities(b.dataset.tag ?? null, b.dataset.deviceId ?? null, b.dataset.action === "end" ? "default" : "immediate");
  });
}
