import type { DeviceState } from "../../typescript/src/state";
import type { StateStore } from "../../typescript/src/store";

/**
 * The gateway URL and device token. The URL lives in the script's private `Storage`; the token, a credential, in
 * the app's `Keychain` (encrypted, scoped to this script, removed with it — the app's docs, "Keychain"). A token an
 * older version of the script left in `Storage` is moved into the Keychain the first time the settings are read.
 */
export interface Settings {
  url: string;
  token: string;
}

const URL_KEY = "lanpush.url";
const TOKEN_KEY = "lanpush.token";

export function loadSettings(): Settings {
  const legacy = Storage.get<string>(TOKEN_KEY);
  if (legacy !== null) {
    if (!Keychain.contains(TOKEN_KEY) && legacy !== "") Keychain.set(TOKEN_KEY, legacy);
    Storage.remove(TOKEN_KEY);
  }
  return { url: Storage.get<string>(URL_KEY) ?? "", token: Keychain.get(TOKEN_KEY) ?? "" };
}

export function saveSettings(settings: Settings): void {
  Storage.set(URL_KEY, settings.url.trim());
  const token = settings.token.trim();
  if (token === "") Keychain.remove(TOKEN_KEY);
  else Keychain.set(TOKEN_KEY, token);
}

/** What the page shows of a token: never the token. */
export function maskedToken(token: string): string {
  if (token === "") return "none";
  return `•••••• ${token.length > 12 ? token.slice(-4) : ""}`.trim();
}

/** `ws://host:8765` or `host:8765` becomes the stream URL. */
export function streamURL(url: string): string {
  let u = url.trim();
  if (!/^wss?:\/\//i.test(u)) u = `ws://${u.replace(/^https?:\/\//i, "")}`;
  if (!/\/v1\/stream$/.test(u)) u = u.replace(/\/+$/, "") + "/v1/stream";
  return u;
}

/** The client's resume point and state in Storage, so a restarted script resumes by replay. */
export class ScriptingStorageStore implements StateStore {
  load(key: string): DeviceState | null {
    return Storage.get<DeviceState>(key);
  }

  save(key: string, state: DeviceState): void {
    Storage.set(key, state);
  }

  clear(key: string): void {
    Storage.remove(key);
  }
}
