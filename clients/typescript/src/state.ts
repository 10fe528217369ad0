import type { ActivityAttributes, ContentState, JSONObject, Phase } from "./protocol.js";

/** One activity as the client holds it: what a UI renders. */
export interface Activity {
  tag: string;
  attributes: ActivityAttributes;
  state: ContentState;
  /** Never `dismissed`: a dismissed activity is removed. */
  phase: Exclude<Phase, "dismissed">;
  /** Unix seconds. */
  stale_date?: number;
  /** Any finite number; higher = more relevant. */
  relevance_score?: number;
  /** Unix seconds; set once the activity ended. */
  dismissal_date?: number;
}

/** A plain notification, held until a `clear` with its tag (or the app) removes it. */
export interface HeldNotification {
  seq: number;
  title?: string;
  message?: string;
  data: JSONObject;
}

/**
 * Everything a device client holds: the resume point (`epoch`, `seq` = the highest seq applied) and the
 * picture it describes. This is what a store persists and what the protocol vectors spell out.
 */
export interface DeviceState {
  epoch: string | null;
  seq: number;
  activities: { [tag: string]: Activity };
  notifications: HeldNotification[];
}

export function emptyState(): DeviceState {
  return { epoch: null, seq: 0, activities: {}, notifications: [] };
}

/** Live activities first, then by relevance (higher first), then newest start: the order a phone shows them. */
export function sortedActivities(state: DeviceState): Activity[] {
  const rank = (a: Activity) => (a.phase === "ended" ? 1 : 0);
  return Object.values(state.activities).sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (b.relevance_score ?? 0) - (a.relevance_score ?? 0) ||
      b.attributes.started_at - a.attributes.started_at ||
      (a.tag < b.tag ? -1 : 1),
  );
}

/** Whether a stored value looks like a `DeviceState` (a store may hold anything after a version change). */
export function isDeviceState(value: unknown): value is DeviceState {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { [key: string]: unknown };
  return (
    (v.epoch === null || typeof v.epoch === "string") &&
    typeof v.seq === "number" &&
    typeof v.activities === "object" &&
    v.activities !== null &&
    Array.isArray(v.notifications)
  );
}
