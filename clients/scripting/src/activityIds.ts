/**
 * Which Live Activity shows which lanpush activity, kept in the script's Storage: iOS keeps a Live Activity on the
 * Lock Screen after the app was killed, and a new run finds it again by its id (`LiveActivity.from`) instead of
 * starting a second one beside the frozen first. Only ids kept here are ever touched: `getAllActivities` lists
 * every Live Activity of the Scripting app, other scripts' too.
 */
export interface StoredActivity {
  id: string;
  /** The lanpush activity it shows (`attributes.started_at`): a later start under the tag is another activity. */
  started_at: number;
}

const KEY = "lanpush.liveActivities";

export class ActivityIds {
  private readonly byTag: { [tag: string]: StoredActivity };

  constructor() {
    const stored = Storage.get<{ [tag: string]: StoredActivity }>(KEY);
    this.byTag = stored && typeof stored === "object" ? { ...stored } : {};
  }

  get entries(): [string, StoredActivity][] {
    return Object.entries(this.byTag);
  }

  get(tag: string): StoredActivity | undefined {
    return this.byTag[tag];
  }

  set(tag: string, entry: StoredActivity): void {
    this.byTag[tag] = entry;
    Storage.set(KEY, this.byTag);
  }

  delete(tag: string, id?: string): void {
    const entry = this.byTag[tag];
    if (!entry || (id !== undefined && entry.id !== id)) return;
    delete this.byTag[tag];
    Storage.set(KEY, this.byTag);
  }
}
