/**
 * The part of the WHATWG `WebSocket` interface the client uses. Browsers and Node 20+ (`--experimental-websocket`
 * on 20, built in from 22) have it; other runtimes pass an adapter (see the Scripting-app script).
 */
export interface MessageEventLike {
  data: unknown;
}

export interface CloseEventLike {
  /** Absent when the transport cannot tell (the client then decides from the frames it got). */
  code?: number;
  reason?: string;
}

export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: MessageEventLike) => void) | null;
  onclose: ((event: CloseEventLike) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type WebSocketConstructorLike = new (url: string, protocols?: string | string[]) => WebSocketLike;

/**
 * Makes one connection; `protocols` is `["lanpush.v2", "lanpush.v1"]`, the subprotocols to offer. A transport that
 * cannot offer subprotocols may ignore them: the `auth` frame names the version the client wants too.
 */
export type SocketFactory = (url: string, protocols: string[]) => WebSocketLike;

export const OPEN = 1;

/** The runtime's own `WebSocket`, if it has one. */
export function globalWebSocket(): WebSocketConstructorLike | undefined {
  const g = globalThis as unknown as { WebSocket?: WebSocketConstructorLike };
  return g.WebSocket;
}

/** Timers, injectable so tests can run the client on a fake clock. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export function globalTimers(): Timers {
  const g = globalThis as unknown as {
    setTimeout(callback: () => void, ms: number): unknown;
    clearTimeout(handle: unknown): void;
  };
  return {
    setTimeout: (callback, ms) => g.setTimeout(callback, ms),
    clearTimeout: (handle) => g.clearTimeout(handle),
  };
}
