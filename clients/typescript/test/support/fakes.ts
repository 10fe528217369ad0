import type { CloseEventLike, MessageEventLike, Timers, WebSocketLike } from "../../src/transport.js";

/** A WebSocket the test drives: it records what the client sends and delivers what the test "receives". */
export class FakeSocket implements WebSocketLike {
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: MessageEventLike) => void) | null = null;
  onclose: ((event: CloseEventLike) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  readonly sent: any[] = [];
  closedWith: { code?: number; reason?: string } | null = null;

  constructor(readonly url: string, readonly protocols: string[]) {}

  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }

  receive(frame: object): void {
    this.receiveText(JSON.stringify(frame));
  }

  receiveText(text: string): void {
    this.onmessage?.({ data: text });
  }

  /** The server closes the connection. */
  serverClose(code?: number, reason = ""): void {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }

  send(data: string): void {
    if (this.readyState !== 1) throw new Error("send on a socket that is not open");
    this.sent.push(JSON.parse(data));
  }

  close(code?: number, reason?: string): void {
    if (this.readyState === 3) return;
    this.closedWith = { code, reason };
    this.readyState = 3;
    this.onclose?.({ code: 1005, reason: reason ?? "" });
  }

  sentOfType(type: string): any[] {
    return this.sent.filter((f) => f.type === type);
  }
}

/** Timers on a clock the test advances. */
export class FakeTimers implements Timers {
  now = 1_700_000_000_000;
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void }>();

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.pending.set(id, { at: this.now + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Delays of the timers now pending, from now. */
  get delays(): number[] {
    return [...this.pending.values()].map((p) => p.at - this.now).sort((a, b) => a - b);
  }

  async advance(ms: number): Promise<void> {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.pending.entries()].filter(([, p]) => p.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.now = Math.max(this.now, due[1].at);
      due[1].callback();
      await flush();
    }
    this.now = until;
    await flush();
  }
}

/** Lets pending promise callbacks run (the client handles frames asynchronously). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
