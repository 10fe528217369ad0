import type { ArrayFrame, JSONObject } from "../../src/protocol.js";

const BODIES = new Map([["start", "state"], ["update", "patch"], ["end", "patch"], ["lifecycle", "phase"]]);

/**
 * A v1 frame as a lanpush.v2 gateway sends it: the frames about one activity as arrays, everything else as it is.
 * Written from the protocol's rule, independently of the client's reading of it, so tests can feed v2 frames where
 * only v1 ones are at hand (the v1 vectors, an older lanpushd).
 */
export function toV2(frame: any): any {
  const key = BODIES.get(frame?.type);
  if (key === undefined || !("seq" in frame) || !("tag" in frame) || !(key in frame)) return frame;
  const { type, seq, tag, [key]: body, ...extras } = frame;
  if (type === "update" && extras.phase === "active") delete extras.phase;
  const array: ArrayFrame = [type, seq, tag, body];
  return Object.keys(extras).length > 0 ? [...array, extras as JSONObject] : array;
}
