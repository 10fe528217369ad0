export { LanpushClient } from "./client.js";
export type { LanpushClientOptions } from "./client.js";
export type { ActivityEvent, ClientEvents, ConnectionStatus } from "./events.js";
export { reduce } from "./reducer.js";
export type { ActivityCause, ReduceOptions, ReduceResult, StateEvent } from "./reducer.js";
export { emptyState, sortedActivities } from "./state.js";
export type { Activity, DeviceState, HeldNotification } from "./state.js";
export { MemoryStore, WebStorageStore } from "./store.js";
export type { StateStore, WebStorageLike } from "./store.js";
export { Backoff } from "./backoff.js";
export type { BackoffOptions } from "./backoff.js";
export { classifyClose } from "./closeCodes.js";
export type { CloseAction, CloseInfo } from "./closeCodes.js";
export { mergePatch, diff, deepEqual } from "./mergePatch.js";
export { parseFrame, PREFERRED_PROTOCOL, PROTOCOLS } from "./protocol.js";
export type {
  ActivityAlert, ActivityAttributes, ArrayFrame, ClearFrame, ContentState, ControlFrame, DeviceFrame, EndFrame, EventFrame, JSONObject,
  JSONValue, LifecycleFrame, NotificationFrame, NotificationsDroppedFrame, Phase, ProtocolVersion, Registration, ReplayFrame, ServerFrame,
  SnapshotActivity, SnapshotFrame, StartFrame, SyncedFrame, UpdateFrame,
} from "./protocol.js";
export type { WebSocketLike, WebSocketConstructorLike, SocketFactory, CloseEventLike, MessageEventLike, Timers } from "./transport.js";
export { parsePairingURL, readPairing, redeemPairing, PairingError } from "./pairing.js";
export type { Paired, PairingFetch, PairingURL } from "./pairing.js";
