import { DeviceState, isDeviceState } from "./state.js";

/**
 * Where a device client keeps its resume point and the state it describes, so a restarted client resumes by
 * replay instead of starting from nothing. `save` is awaited before the frames it covers are acknowledged:
 * an acknowledged plain notification is gone from the gateway, so it must already be on disk.
 */
export interface StateStore {
  load(key: string): DeviceState | null | Promise<DeviceState | null>;
  save(key: string, state: DeviceState): void | Promise<void>;
  clear(key: string): void | Promise<void>;
}

/** Keeps the state for the life of the process (tests, pages that need no resume across reloads). */
export class MemoryStore implements StateStore {
  private readonly states = new Map<string, string>();

  load(key: string): DeviceState | null {
    const text = this.states.get(key);
    return text === undefined ? null : (JSON.parse(text) as DeviceState);
  }

  save(key: string, state: DeviceState): void {
    // Serialized, so a caller that mutates its objects later cannot change what was saved.
    this.states.set(key, JSON.stringify(state));
  }

  clear(key: string): void {
    this.states.delete(key);
  }
}

/** The part of the Web Storage API (`localStorage`, `sessionStorage`) the store uses. */
export interface WebStorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * A store over `localStorage` or anything shaped like it. A value that cannot be read back (another
 * version, a quota error while writing) counts as nothing stored: the client then gets a snapshot.
 */
export class WebStorageStore implements StateStore {
  constructor(private readonly storage: WebStorageLike, private readonly prefix = "lanpush:") {}

  load(key: string): DeviceState | null {
    const text = this.storage.getItem(this.prefix + key);
    if (text === null) return null;
    try {
      const value: unknown = JSON.parse(text);
      return isDeviceState(value) ? value : null;
    } catch {
      return null;
    }
  }

  save(key: string, state: DeviceState): void {
    this.storage.setItem(this.prefix + key, JSON.stringify(state));
  }

  clear(key: string): void {
    this.storage.removeItem(this.prefix + key);
  }
}
