/**
 * What a closed session means for the next attempt. Close codes and their reasons come from the gateway
 * (docs/PROTOCOL.md "Close codes"); the frame the gateway sent just before closing decides when a
 * transport cannot report the code (the Scripting app's WebSocket only reports a reason).
 */
export type CloseAction =
  /** 4001 / `auth_invalid`: the token is wrong; retrying cannot help. */
  | { kind: "auth_rejected"; message: string }
  /** 1001 (gateway restart), 4002 (ack timeout), 4003 (too slow): come back at once and resume. */
  | { kind: "reconnect_now" }
  /** 4029: rate-limited; the reason says for how long ("try again in N s"). */
  | { kind: "wait"; seconds: number }
  /** 1013 (too many sessions) and everything else: back off and retry. */
  | { kind: "backoff"; minimum: number };

export interface CloseInfo {
  code?: number;
  reason?: string;
  /** `auth_invalid` was received on this session. */
  authInvalid?: string;
  /** The last `error` frame's message on this session. */
  lastError?: string;
}

/** Minimum delay before retrying when the gateway has no room for another session (ms). */
export const TOO_MANY_SESSIONS_DELAY = 5_000;

/** "too many sessions", "too many unauthenticated sessions from this address": both are 1013's reasons. */
const TOO_MANY_SESSIONS = /too many [a-z ]*sessions/i;

export function classifyClose(info: CloseInfo): CloseAction {
  const reason = info.reason ?? "";
  if (info.authInvalid !== undefined || info.code === 4001) {
    return { kind: "auth_rejected", message: info.authInvalid || reason || "auth invalid" };
  }
  const wait = /try again in\s+(\d+(?:\.\d+)?)\s*s/i.exec(reason);
  if (info.code === 4029 || wait) {
    return { kind: "wait", seconds: wait ? Number(wait[1]) : 30 };
  }
  if (info.code === 1013 || TOO_MANY_SESSIONS.test(reason) || TOO_MANY_SESSIONS.test(info.lastError ?? "")) {
    return { kind: "backoff", minimum: TOO_MANY_SESSIONS_DELAY };
  }
  if (info.code === 1001 || info.code === 4002 || info.code === 4003) return { kind: "reconnect_now" };
  if (info.code === undefined && /ack timeout|too slow|shutdown|going away/i.test(reason)) return { kind: "reconnect_now" };
  return { kind: "backoff", minimum: 0 };
}
