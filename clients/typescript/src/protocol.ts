/**
 * The lanpush wire format (docs/PROTOCOL.md), as plain TypeScript types: lanpush.v1's objects, which is also what
 * `parseFrame` makes of lanpush.v2's array frames. Names stay snake_case, exactly as on the wire, so a frame, the
 * client's state and the shared protocol vectors read the same.
 */

/** The protocol versions this client speaks, newest first: the order they are offered in. */
export const PROTOCOLS = ["lanpush.v2", "lanpush.v1"] as const;
export type ProtocolVersion = (typeof PROTOCOLS)[number];
/** What the client asks for: a gateway that does not speak it answers (and says) `lanpush.v1`. */
export const PREFERRED_PROTOCOL: ProtocolVersion = PROTOCOLS[0];

export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };
export type JSONObject = { [key: string]: JSONValue };

/** `active` → `stale` (past its stale date) → `ended` (visible until its dismissal date); `dismissed` = gone. */
export type Phase = "active" | "stale" | "ended" | "dismissed";

/** What a Live Activity shows (Home Assistant companion docs, Live Activities: the payload fields). */
export interface ContentState extends JSONObject {}

/** The static half of an activity: set by the payload that started it, never changed. */
export interface ActivityAttributes {
  tag: string;
  title: string;
  started_at: number;
  webhook_id?: string;
}

export interface ActivityAlert {
  title?: string;
  body?: string;
  sound?: string;
  [key: string]: JSONValue | undefined;
}

/** One entry of a snapshot. */
export interface SnapshotActivity {
  tag: string;
  attributes: ActivityAttributes;
  state: ContentState;
  phase: Phase;
  stale_date?: number;
  relevance_score?: number;
  dismissal_date?: number;
}

interface Seq {
  seq: number;
  /** Observers only: the device the frame belongs to. */
  device_id?: string;
}

export interface SnapshotFrame extends Seq {
  type: "snapshot";
  epoch: string;
  activities: SnapshotActivity[];
}
export interface ReplayFrame {
  type: "replay";
  from: number;
  epoch: string;
  device_id?: string;
}
export interface SyncedFrame extends Seq {
  type: "synced";
}
export interface StartFrame extends Seq {
  type: "start";
  tag: string;
  attributes: ActivityAttributes;
  state: ContentState;
  phase?: Phase;
  dismissal_date?: number;
  stale_date?: number;
  relevance_score?: number;
  alert?: ActivityAlert;
}
export interface UpdateFrame extends Seq {
  type: "update";
  tag: string;
  patch: JSONObject;
  phase: Phase;
  silent?: boolean;
  alert?: ActivityAlert;
  /** `null`: the activity has no stale date any more (each update carries its own); absent: unchanged. */
  stale_date?: number | null;
  relevance_score?: number;
}
export interface EndFrame extends Seq {
  type: "end";
  tag: string;
  patch: JSONObject;
  dismissal_date?: number;
  /** `dismissed` when the activity ended and was dismissed at once. */
  phase?: Phase;
  stale_date?: number | null;
  relevance_score?: number;
}
export interface LifecycleFrame extends Seq {
  type: "lifecycle";
  tag: string;
  phase: Phase;
}
export interface NotificationFrame extends Seq {
  type: "notification";
  title?: string;
  message?: string;
  data: JSONObject;
}
export interface ClearFrame extends Seq {
  type: "clear";
  tag: string;
}
/** The device's notification queue overflowed: `count` notifications up to seq `through` will never arrive. */
export interface NotificationsDroppedFrame {
  type: "notifications_dropped";
  count: number;
  through: number;
  device_id?: string;
}

/** Frames that change what a device shows. */
export type EventFrame =
  | SnapshotFrame
  | ReplayFrame
  | SyncedFrame
  | StartFrame
  | UpdateFrame
  | EndFrame
  | LifecycleFrame
  | NotificationFrame
  | ClearFrame
  | NotificationsDroppedFrame;

export interface AuthRequiredFrame {
  type: "auth_required";
  version?: string;
}
export interface AuthOkFrame {
  type: "auth_ok";
  device_id?: string;
  epoch?: string;
  seq?: number;
  role?: string;
  version?: string;
  /** Seconds between the gateway's pings on this session: what the auth's `keepalive` was granted, within its bounds. */
  keepalive?: number;
}
export interface AuthInvalidFrame {
  type: "auth_invalid";
  message?: string;
}
export interface RegisteredFrame {
  type: "registered";
  push_token: string;
}
export interface ErrorFrame {
  type: "error";
  message: string;
}
export interface PongFrame {
  type: "pong";
}
/** Observers: a device's sessions or registration changed (the `GET /v1/devices` entry). */
export interface DeviceFrame {
  type: "device";
  device_id: string;
  connected?: boolean;
  sessions?: number;
  path?: string;
  [key: string]: JSONValue | undefined;
}

export type ControlFrame = AuthRequiredFrame | AuthOkFrame | AuthInvalidFrame | RegisteredFrame | ErrorFrame | PongFrame | DeviceFrame;
export type ServerFrame = EventFrame | ControlFrame;

/** `register`: ties the device to the push_token HA uses for it and gives relay credentials for fallback. */
export interface Registration {
  push_token: string;
  push_url?: string;
  registration_info?: JSONObject;
}

const EVENT_TYPES = new Set([
  "snapshot", "replay", "synced", "start", "update", "end", "lifecycle", "notification", "clear", "notifications_dropped",
]);

export function isEventFrame(frame: ServerFrame): frame is EventFrame {
  return EVENT_TYPES.has(frame.type);
}

export function isObject(value: unknown): value is JSONObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * lanpush.v2's frames about one activity: `[type, seq, tag, body]` or `[type, seq, tag, body, extras]`, `body`
 * being the v1 member named here (`extras` holds every other member of the v1 object).
 */
export type ArrayFrame = [string, number, string, JSONValue] | [string, number, string, JSONValue, JSONObject];

const ARRAY_BODIES = new Map<string, { key: string; kind: "object" | "string" }>([
  ["start", { key: "state", kind: "object" }],
  ["update", { key: "patch", kind: "object" }],
  ["end", { key: "patch", kind: "object" }],
  ["lifecycle", { key: "phase", kind: "string" }],
]);

/**
 * The v1 object of a v2 array frame, or `null` when the array does not fit. Both forms end up as one shape, so the
 * reducer, the `frame` event and everything that taps it (the live preview's log) know only v1's.
 */
function fromArray(a: unknown[]): ServerFrame | null {
  if (a.length < 4 || a.length > 5) return null;
  const [type, seq, tag, body, extras] = a;
  if (typeof type !== "string" || typeof seq !== "number" || typeof tag !== "string") return null;
  const spec = ARRAY_BODIES.get(type);
  if (!spec) return null;
  if (spec.kind === "object" ? !isObject(body) : typeof body !== "string") return null;
  if (a.length === 5 && !isObject(extras)) return null;
  // The positional members go last: extras only add to a frame, they never turn it into another one.
  const frame: JSONObject = { ...(extras as JSONObject | undefined), type, seq, tag, [spec.key]: body as JSONValue };
  // v2 leaves out what v1's update always says when it is the usual case.
  if (type === "update" && frame.phase === undefined) frame.phase = "active";
  return frame as unknown as ServerFrame;
}

/**
 * Parses one text message into a v1 frame object; `null` for anything else: not JSON, not an object with a string
 * `type`, or an array that is not a v2 activity frame.
 */
export function parseFrame(text: string): ServerFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (Array.isArray(value)) return fromArray(value);
  if (!isObject(value) || typeof value.type !== "string") return null;
  return value as unknown as ServerFrame;
}
