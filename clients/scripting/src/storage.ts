import type { DeviceState } from "../../typescript/src/state";
import type { StateStore } from "../../typescript/src/store";

/** The gateway URL and device token, kept in the app's private Storage of this script. */
export interface Settings {
  url: string;
  token: string;
}

const URL_KEY = "lanpush.url";
const TOKEN_KEY = "lanpush.token";

export function loadSettings(): Settings {
  return { url: Storage.get<string>(URL_KEY) ?? "", token: Storage.get<string>(TOKEN_KEY) ?? "" };
}

export function saveSettings(settings: Settings): void {
  Storage.set(URL_KEY, settings.url.trim());
  Storage.set(TOKEN_KEY, settings.token.trim());
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
