import { connect, createServer, Server, Socket } from "node:net";
import { parseFrame } from "../../src/protocol.js";
import type { CloseEventLike, MessageEventLike, WebSocketLike } from "../../src/transport.js";

/** Node's WHATWG WebSocket (`--experimental-websocket` on Node 20). */
export function nodeWebSocket(): new (url: string, protocols?: string[]) => any {
  const ws = (globalThis as any).WebSocket;
  if (!ws) throw new Error("run node with --experimental-websocket");
  return ws;
}

/**
 * A real WebSocket that counts what goes through it: event frames received, acks sent, and the most frames
 * ever held unacknowledged (the credit window bounds it). It keeps the wire text too: which form (v1 object or v2
 * array) the gateway chose shows only there.
 */
export class CountingSocket implements WebSocketLike {
  private readonly ws: any;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: MessageEventLike) => void) | null = null;
  onclose: ((event: CloseEventLike) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  /** As the client reads them (v1 objects). */
  received: any[] = [];
  texts: string[] = [];
  acked = 0;
  maxUnacked = 0;

  constructor(url: string, protocols: string[]) {
    const WS = nodeWebSocket();
    this.ws = new WS(url, protocols);
    this.ws.onopen = (e: unknown) => this.onopen?.(e);
    this.ws.onerror = (e: unknown) => this.onerror?.(e);
    this.ws.onclose = (e: CloseEventLike) => this.onclose?.({ code: e.code, reason: e.reason });
    this.ws.onmessage = (e: MessageEventLike) => {
      const text = String(e.data);
      this.texts.push(text);
      const frame = parseFrame(text);
      if (frame) this.received.push(frame);
      this.maxUnacked = Math.max(this.maxUnacked, this.unacked);
      this.onmessage?.(e);
    };
  }

  /** Frames with a seq the client has to acknowledge (everything but replay/synced/notifications_dropped). */
  get unacked(): number {
    return this.received.filter((f) => typeof f.seq === "number" && f.type !== "synced" && f.seq > this.acked).length;
  }

  get readyState(): number {
    return this.ws.readyState;
  }

  /** The subprotocol the gateway answered with ("" for none). */
  get protocol(): string {
    return this.ws.protocol;
  }

  send(data: string): void {
    const frame = JSON.parse(data);
    if (frame.type === "ack") this.acked = Math.max(this.acked, frame.seq);
    this.ws.send(data);
  }

  close(code?: number, reason?: string): void {
    this.ws.close(code, reason);
  }
}

/** A TCP relay between clients and the gateway that the test can cut, like a Wi-Fi drop. */
export class CuttableProxy {
  private readonly server: Server;
  private readonly pairs: Socket[][] = [];
  port = 0;

  constructor(private readonly targetPort: number) {
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, "127.0.0.1");
      client.setNoDelay(true);
      upstream.setNoDelay(true);
      client.pipe(upstream);
      upstream.pipe(client);
      const pair = [client, upstream];
      const drop = () => pair.forEach((s) => s.destroy());
      client.on("error", drop).on("close", drop);
      upstream.on("error", drop).on("close", drop);
      this.pairs.push(pair);
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", () => resolve()));
    this.port = this.server.address().port;
    return this;
  }

  /** Drops every connection at once, without a close frame. */
  cut(): number {
    const n = this.pairs.length;
    for (const pair of this.pairs.splice(0)) pair.forEach((s) => s.destroy());
    return n;
  }

  close(): void {
    this.cut();
    this.server.close();
  }
}
