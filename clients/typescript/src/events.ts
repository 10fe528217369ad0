import type { ActivityAlert, DeviceFrame, ServerFrame } from "./protocol.js";
import type { ActivityCause } from "./reducer.js";
import type { Activity, HeldNotification } from "./state.js";

/** `connecting` until the session is synced, `live` while it is, `offline` between attempts, `auth_rejected` for good. */
export type ConnectionStatus = "connecting" | "live" | "offline" | "auth_rejected";

/** Every state event names its device: the client's own, or for observers the frame's `device_id`. */
interface OfDevice {
  device: string;
}

export interface ActivityEvent extends OfDevice {
  tag: string;
  /** What was shown before this frame (null: nothing under the tag). */
  previous: Activity | null;
  /** What to show now (null: it is gone). */
  current: Activity | null;
  cause: ActivityCause;
  alert?: ActivityAlert;
  silent?: boolean;
}

export interface ClientEvents {
  activity: ActivityEvent;
  /** An activity ended (or an ended one got a new dismissal date). */
  ended: OfDevice & { tag: string; activity: Activity };
  /** An activity is gone: its last view. */
  dismissed: OfDevice & { tag: string; activity: Activity };
  notification: OfDevice & { notification: HeldNotification };
  clear: OfDevice & { tag: string; removed: HeldNotification[] };
  /** The gateway's notification queue for this device overflowed: `count` notifications up to `through` are lost. */
  notifications_dropped: OfDevice & { count: number; through: number };
  snapshot: OfDevice & { epoch: string; seq: number };
  replay: OfDevice & { epoch: string; from: number };
  synced: OfDevice & { seq: number };
  status: {
    status: ConnectionStatus;
    previous: ConnectionStatus;
    detail: { code?: number; reason?: string; retryIn?: number };
  };
  /** The token was refused (4001): the client stopped and will not retry. */
  auth_rejected: { message: string; code?: number };
  registered: { push_token: string };
  /** Observers: a device's sessions or registration changed. */
  device: DeviceFrame & OfDevice;
  /**
   * Every frame from the gateway, as received, just before the client applies it (auth and control frames too);
   * a lanpush.v2 array frame comes as its v1 object, so a tool reads one form whatever the gateway speaks.
   * For tools that show the wire — the live preview's event log — not for state: use the events above for that.
   */
  frame: { frame: ServerFrame };
  /** A gateway `error` frame, a failed handler, or a resynchronization. Informational: the client carries on. */
  error: { message: string; error?: unknown };
}
