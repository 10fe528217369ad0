import type { CloseEventLike, MessageEventLike, WebSocketLike } from "../../typescript/src/transport";

/**
 * The Scripting app's `WebSocket` behind the interface the lanpush client expects. Its close handler gets a
 * reason but never the code, so the client tells a refused token from the `auth_invalid` frame before the
 * close, and a rate limit from the reason's "try again in N s" (docs/CLIENTS.md). Nor can it offer subprotocols:
 * the client's `auth` frame asks for lanpush.v2 instead.
 */
export class ScriptingSocket implements WebSocketLike {
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: MessageEventLike) => void) | null = null;
  onclose: ((event: CloseEventLike) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  private readonly ws: WebSocket;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.onopen = () => {
      this.readyState = 1;
      this.onopen?.({});
    };
    this.ws.onmessage = (message) => {
      if (typeof message === "string") this.onmessage?.({ data: message });
    };
    this.ws.onclose = (reason) => this.closed(reason ?? "");
    this.ws.onerror = (error) => {
      this.onerror?.(error);
      // A connection that never opened may report only the error: make it a close so the client retries.
      if (this.readyState !== 1) this.closed(error?.message ?? "connection failed");
    };
  }

  private closed(reason: string): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.onclose?.({ reason });
  }

  send(data: string): void {
    this.ws.send(data);
  }

  close(_code?: number, reason?: string): void {
    // The app's close takes 1000…1003 only; a client-initiated close is always a normal one.
    this.ws.close(1000, reason);
  }
}
