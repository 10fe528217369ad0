import { Backoff, BackoffOptions } from "./backoff.js";
import { classifyClose } from "./closeCodes.js";
import { Emitter, Handler } from "./emitter.js";
import { EventFrame, isEventFrame, JSONObject, parseFrame, PREFERRED_PROTOCOL, PROTOCOLS, Registration, ServerFrame } from "./protocol.js";
import { reduce, StateEvent } from "./reducer.js";
import { DeviceState, emptyState, sortedActivities, Activity } from "./state.js";
import { StateStore } from "./store.js";
import { globalTimers, globalWebSocket, OPEN, SocketFactory, Timers, WebSocketConstructorLike, WebSocketLike } from "./transport.js";
import type { ClientEvents, ConnectionStatus } from "./events.js";

export interface LanpushClientOptions {
  /** `ws://HOST:PORT/v1/stream`. With `token`, all a client needs (a pairing URL can supply both). */
  url: string;
  /** A device token, or the admin / viewer token for an observer. */
  token: string;
  /** `observer`: a live-preview client that sees every device (or `device`), never acks, never resumes. */
  role?: "device" | "observer";
  /** Observers: watch only this device. */
  device?: string;
  /** The WebSocket constructor (default: the runtime's `WebSocket`). */
  WebSocket?: WebSocketConstructorLike;
  /** Or a factory, for transports that are not constructed like the WHATWG one. */
  createSocket?: SocketFactory;
  /** Where the resume point and state live across restarts (device role). Default: nothing kept. */
  store?: StateStore;
  /** The store key (default: the token's device, `lanpush:<url>`). */
  storeKey?: string;
  /** Sent after every authentication: ties the device to the push_token HA uses for it. */
  register?: Registration;
  /** Sent with `register`: whether this client renders Live Activities itself. */
  supportsLiveActivities?: boolean;
  backoff?: BackoffOptions;
  /** The gateway's credit window (`session.window`, default 32): acks go out at least every half window. */
  window?: number;
  /** No `auth_ok` within this many ms of opening: give up on the attempt (default 5 000; on a LAN it takes ms). */
  handshakeTimeout?: number;
  /**
   * Seconds between the gateway's keepalive pings this client asks for (sent in `auth`; the gateway clamps it to its
   * `session.keepalive_min` … `keepalive_max` and answers what it granted). Every ping wakes a phone's radio; a
   * longer interval means a silently vanished client is counted gone later (about the interval + `ping_timeout`).
   */
  keepalive?: number;
  /**
   * Quiet this long (ms): send a `ping`; no answer within `keepaliveTimeout`: the link is dead. 0 = off. Default
   * 30 s, or twice the granted `keepalive` when that is longer.
   */
  keepaliveInterval?: number;
  keepaliveTimeout?: number;
  /** Plain notifications held at most (default 100). */
  maxNotifications?: number;
  /** Milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  timers?: Timers;
  random?: () => number;
}

interface Connection {
  id: number;
  socket: WebSocketLike;
  authed: boolean;
  closed: boolean;
  authInvalid?: string;
  lastError?: string;
  /** Highest seq handled on this session, and how many handled frames wait for an ack. */
  ackable: number;
  acked: number;
  pendingAcks: number;
  handshakeTimer?: unknown;
  keepaliveTimer?: unknown;
  awaitingPong: boolean;
  /** The stream stopped matching the state (resync): later frames of this session are ignored. */
  discard: boolean;
  close?: { code?: number; reason?: string };
}

/** Frames the client sends on its own (user actions); kept while offline and sent once authenticated. */
type Outgoing = JSONObject & { type: string };

/**
 * A lanpush client (lanpush.v2, or lanpush.v1 with an older gateway): keeps a device's activities and
 * notifications, acknowledges what its handlers have handled, resumes by replay after any disconnect and reconnects
 * with backoff. See docs/CLIENTS.md.
 */
export class LanpushClient {
  readonly options: LanpushClientOptions;
  private readonly events = new Emitter<ClientEvents>();
  private readonly backoff: Backoff;
  private readonly timers: Timers;
  private readonly now: () => number;
  private stateValue: DeviceState = emptyState();
  private readonly observed = new Map<string, DeviceState>();
  private statusValue: ConnectionStatus = "offline";
  private conn: Connection | null = null;
  private nextId = 1;
  private running = false;
  private loaded = false;
  private inbox: { conn: Connection; frame: ServerFrame }[] = [];
  private pumping: Promise<void> | null = null;
  private retryTimer: unknown = null;
  private wantSnapshot = false;
  private outgoing: Outgoing[] = [];
  private deviceIdValue: string | null = null;
  private grantedKeepalive: number | null = null;

  constructor(options: LanpushClientOptions) {
    this.options = options;
    this.backoff = new Backoff(options.backoff, options.random);
    this.timers = options.timers ?? globalTimers();
    this.now = options.now ?? (() => Date.now());
  }

  // MARK: Public surface

  on<K extends keyof ClientEvents>(type: K, handler: Handler<ClientEvents[K]>): () => void {
    return this.events.on(type, handler);
  }

  get status(): ConnectionStatus {
    return this.statusValue;
  }

  /** The device's state (device role). */
  get state(): DeviceState {
    return this.stateValue;
  }

  /** The device this client is (from `auth_ok`), once known. */
  get deviceId(): string | null {
    return this.deviceIdValue;
  }

  /**
   * Seconds between the gateway's pings on the current session (`auth_ok`'s `keepalive`); null before the first
   * authentication, or from a gateway that does not say (it then pings every `session.ping_interval`, 10 s).
   */
  get keepalive(): number | null {
    return this.grantedKeepalive;
  }

  /** Observers: every watched device's state. */
  get devices(): ReadonlyMap<string, DeviceState> {
    return this.observed;
  }

  /** Activities in the order a phone shows them. */
  activities(device?: string): Activity[] {
    const state = device === undefined ? this.stateValue : this.observed.get(device);
    return state ? sortedActivities(state) : [];
  }

  /** Connects and keeps connecting until `stop()` or a rejected token. */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connectWhenIdle(0);
  }

  /** Closes the session and stops reconnecting; resolves once queued frames were handled. */
  async stop(): Promise<void> {
    this.running = false;
    this.clearRetry();
    const conn = this.conn;
    if (conn && !conn.closed) conn.socket.close(1000, "client stopped");
    await this.idle();
    if (this.statusValue !== "auth_rejected") this.setStatus("offline");
  }

  /** The user dismissed the activity: it becomes `dismissed` for every session of the device. */
  dismiss(tag: string): void {
    this.queueOutgoing({ type: "dismissed", tag }, (o) => o.type === "dismissed" && o.tag === tag);
  }

  sendLiveActivityToken(tag: string, token: string, expiresAt?: number): void {
    const frame: Outgoing = { type: "live_activity_token", tag, token };
    if (expiresAt !== undefined) frame.expires_at = expiresAt;
    this.queueOutgoing(frame, (o) => o.type === "live_activity_token" && o.tag === tag);
  }

  sendPushToStartToken(token: string): void {
    this.queueOutgoing({ type: "push_to_start_token", token }, (o) => o.type === "push_to_start_token");
  }

  /** Forgets a held plain notification (the user read it); local only. */
  async removeNotification(seq: number): Promise<void> {
    this.stateValue = { ...this.stateValue, notifications: this.stateValue.notifications.filter((n) => n.seq !== seq) };
    await this.persist();
  }

  /** Resolves when every received frame has been handled. */
  async idle(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  // MARK: Connecting

  private get isObserver(): boolean {
    return this.options.role === "observer";
  }

  private get storeKey(): string {
    return this.options.storeKey ?? `lanpush:${this.options.url}`;
  }

  private setStatus(status: ConnectionStatus, detail: ClientEvents["status"]["detail"] = {}): void {
    if (status === this.statusValue) return;
    const previous = this.statusValue;
    this.statusValue = status;
    void this.events.emit("status", { status, previous, detail });
  }

  private clearRetry(): void {
    if (this.retryTimer !== null) this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private async connectWhenIdle(delay: number): Promise<void> {
    this.clearRetry();
    if (delay > 0) {
      this.retryTimer = this.timers.setTimeout(() => {
        this.retryTimer = null;
        void this.connectWhenIdle(0);
      }, delay);
      return;
    }
    await this.idle();
    if (!this.running) return;
    if (!this.loaded) {
      this.loaded = true;
      const stored = !this.isObserver && this.options.store ? await this.options.store.load(this.storeKey) : null;
      if (stored) this.stateValue = stored;
    }
    this.connect();
  }

  private makeSocket(): WebSocketLike {
    if (this.options.createSocket) return this.options.createSocket(this.options.url, [...PROTOCOLS]);
    const Ctor = this.options.WebSocket ?? globalWebSocket();
    if (!Ctor) throw new Error("no WebSocket: pass the WebSocket or createSocket option");
    return new Ctor(this.options.url, [...PROTOCOLS]);
  }

  private connect(): void {
    this.setStatus("connecting");
    let socket: WebSocketLike;
    try {
      socket = this.makeSocket();
    } catch (error) {
      void this.events.emit("error", { message: `cannot open ${this.options.url}: ${String(error)}`, error });
      this.scheduleReconnect({ authed: false, code: undefined, reason: String(error) });
      return;
    }
    const conn: Connection = { id: this.nextId++, socket, authed: false, closed: false, ackable: 0, acked: 0, pendingAcks: 0, awaitingPong: false, discard: false };
    this.conn = conn;
    conn.handshakeTimer = this.timers.setTimeout(() => {
      if (conn.authed || conn.closed) return;
      socket.close(1000, "handshake timeout");
      // A connection that dies before its upgrade completes may never report a close (Node 20's WebSocket).
      this.closed(conn, undefined, "handshake timeout");
    }, this.options.handshakeTimeout ?? 5_000);
    socket.onmessage = (event) => {
      if (conn.closed || typeof event.data !== "string") return;
      const frame = parseFrame(event.data);
      if (!frame) return;
      this.armKeepalive(conn);
      this.inbox.push({ conn, frame });
      this.pump();
    };
    socket.onclose = (event) => this.closed(conn, event.code, event.reason);
    socket.onerror = () => {
      // A close event follows with the details.
    };
  }

  private closed(conn: Connection, code?: number, reason?: string): void {
    if (conn.closed) return;
    conn.closed = true;
    conn.close = { code, reason };
    this.timers.clearTimeout(conn.handshakeTimer);
    this.timers.clearTimeout(conn.keepaliveTimer);
    // The frames already received are still handled (they are valid); reconnecting waits for them.
    void this.idle().then(() => this.afterClose(conn));
  }

  private afterClose(conn: Connection): void {
    if (this.conn !== conn) return;
    this.conn = null;
    if (!this.running) {
      if (this.statusValue !== "auth_rejected") this.setStatus("offline", { code: conn.close?.code, reason: conn.close?.reason });
      return;
    }
    this.scheduleReconnect({ authed: conn.authed, ...conn.close, authInvalid: conn.authInvalid, lastError: conn.lastError });
  }

  private scheduleReconnect(info: { authed: boolean; code?: number; reason?: string; authInvalid?: string; lastError?: string }): void {
    const action = classifyClose(info);
    const detail = { code: info.code, reason: info.reason };
    if (action.kind === "auth_rejected") {
      this.running = false;
      this.setStatus("auth_rejected", detail);
      void this.events.emit("auth_rejected", { message: action.message, code: info.code });
      return;
    }
    let delay: number;
    if (action.kind === "wait") {
      delay = action.seconds * 1000 * (1 + 0.1 * (this.options.random ?? Math.random)());
    } else if ((action.kind === "reconnect_now" && info.authed) || this.wantSnapshot) {
      delay = 0;
    } else {
      delay = Math.max(action.kind === "backoff" ? action.minimum : 0, this.backoff.next());
    }
    this.setStatus("offline", { ...detail, retryIn: delay });
    void this.connectWhenIdle(delay);
  }

  // MARK: Frames

  private pump(): void {
    if (this.pumping) return;
    this.pumping = (async () => {
      while (this.inbox.length > 0) {
        const { conn, frame } = this.inbox.shift()!;
        try {
          if (this.events.has("frame")) await this.emitAll("frame", { frame });
          await this.handle(conn, frame);
          if (!this.isObserver) await this.maybeAck(conn);
        } catch (error) {
          void this.events.emit("error", { message: `handling ${frame.type}: ${String(error)}`, error });
        }
      }
      this.pumping = null;
    })();
  }

  private send(conn: Connection, frame: JSONObject): boolean {
    if (conn.closed || conn.socket.readyState !== OPEN) return false;
    conn.socket.send(JSON.stringify(frame));
    return true;
  }

  private async handle(conn: Connection, frame: ServerFrame): Promise<void> {
    if (isEventFrame(frame)) return this.handleEvent(conn, frame);
    switch (frame.type) {
      case "auth_required": {
        // Named here too for sockets that cannot offer subprotocols (the Scripting app's); an older gateway
        // ignores it, and whichever version auth_ok names, parseFrame reads both.
        const auth: JSONObject = { type: "auth", token: this.options.token, version: PREFERRED_PROTOCOL };
        if (this.options.keepalive !== undefined) auth.keepalive = Math.round(this.options.keepalive);
        if (this.isObserver) {
          auth.role = "observer";
          if (this.options.device !== undefined) auth.device = this.options.device;
        }
        this.send(conn, auth);
        return;
      }
      case "auth_ok":
        this.grantedKeepalive = typeof frame.keepalive === "number" && frame.keepalive > 0 ? frame.keepalive : null;
        return this.authenticated(conn, frame.device_id);
      case "auth_invalid":
        conn.authInvalid = frame.message ?? "auth invalid";
        return;
      case "registered":
        await this.emitAll("registered", { push_token: frame.push_token });
        return;
      case "error":
        conn.lastError = frame.message;
        await this.emitAll("error", { message: frame.message });
        return;
      case "pong":
        return;
      case "device":
        await this.emitAll("device", { ...frame, device: frame.device_id });
        return;
    }
  }

  private authenticated(conn: Connection, deviceId?: string): void {
    conn.authed = true;
    this.timers.clearTimeout(conn.handshakeTimer);
    if (deviceId) this.deviceIdValue = deviceId;
    if (!this.isObserver && this.options.register) {
      const register: JSONObject = { type: "register", ...(this.options.register as unknown as JSONObject) };
      if (this.options.supportsLiveActivities !== undefined) register.supports_live_activities = this.options.supportsLiveActivities;
      this.send(conn, register);
    }
    const subscribe: JSONObject = { type: "subscribe" };
    if (!this.isObserver && !this.wantSnapshot && this.stateValue.epoch !== null) {
      subscribe.epoch = this.stateValue.epoch;
      subscribe.seq = this.stateValue.seq;
    }
    this.wantSnapshot = false;
    this.send(conn, subscribe);
    for (const frame of this.outgoing.splice(0)) this.send(conn, frame);
    this.armKeepalive(conn);
  }

  private async handleEvent(conn: Connection, frame: EventFrame): Promise<void> {
    if (conn.discard) return;
    const device = this.isObserver ? frame.device_id ?? "" : this.deviceIdValue ?? "";
    const before = this.isObserver ? this.observed.get(device) ?? emptyState() : this.stateValue;
    const result = reduce(before, frame, { now: this.now() / 1000, maxNotifications: this.options.maxNotifications });
    if (result.resync) {
      // The stream no longer matches what this client holds: start over from a snapshot.
      void this.events.emit("error", { message: `resynchronizing: ${result.resync}` });
      this.wantSnapshot = true;
      conn.discard = true;
      if (!conn.closed) conn.socket.close(1000, "resync");
      return;
    }
    if (this.isObserver) {
      this.observed.set(device, result.state);
    } else {
      this.stateValue = result.state;
    }
    for (const event of result.events) await this.emitState(device, event);
    if (frame.type === "synced") {
      this.backoff.reset();
      this.setStatus("live");
    }
    if (this.isObserver || result.ack === null) return;
    conn.ackable = Math.max(conn.ackable, result.ack);
    conn.pendingAcks += 1;
  }

  /** Acks when nothing else waits to be handled, or every half window, so credit never runs out. */
  private async maybeAck(conn: Connection): Promise<void> {
    const more = this.inbox.some((item) => item.conn === conn);
    const half = Math.max(1, Math.floor((this.options.window ?? 32) / 2));
    if (conn.pendingAcks === 0 || (more && conn.pendingAcks < half)) return;
    await this.persist();
    if (this.send(conn, { type: "ack", seq: conn.ackable })) {
      conn.acked = conn.ackable;
      conn.pendingAcks = 0;
    }
  }

  private async persist(): Promise<void> {
    if (this.isObserver || !this.options.store) return;
    await this.options.store.save(this.storeKey, this.stateValue);
  }

  private async emitState(device: string, event: StateEvent): Promise<void> {
    const { type, ...rest } = event;
    await this.emitAll(type, { ...rest, device } as never);
  }

  private async emitAll<K extends keyof ClientEvents>(type: K, payload: ClientEvents[K]): Promise<void> {
    const errors = await this.events.emit(type, payload);
    for (const error of errors) {
      await this.events.emit("error", { message: `a '${String(type)}' handler failed: ${String(error)}`, error });
    }
  }

  private queueOutgoing(frame: Outgoing, replaces: (o: Outgoing) => boolean): void {
    const conn = this.conn;
    if (conn && conn.authed && this.send(conn, frame)) return;
    this.outgoing = this.outgoing.filter((o) => !replaces(o));
    this.outgoing.push(frame);
    if (this.outgoing.length > 256) this.outgoing.shift();
  }

  // MARK: Keepalive

  /**
   * Any frame proves the link; after a quiet interval a `ping` must be answered or the session is dropped. The
   * gateway's own pings (WebSocket control frames, which scripts never see) find a vanished client; this one finds a
   * vanished gateway — a restarting one closes its sessions — so it pings at most half as often as the gateway does.
   */
  private armKeepalive(conn: Connection): void {
    const interval = this.options.keepaliveInterval ?? Math.max(30_000, 2_000 * (this.grantedKeepalive ?? 0));
    if (interval <= 0 || conn.closed) return;
    this.timers.clearTimeout(conn.keepaliveTimer);
    conn.awaitingPong = false;
    conn.keepaliveTimer = this.timers.setTimeout(() => {
      if (conn.closed || !conn.authed) return;
      conn.awaitingPong = true;
      this.send(conn, { type: "ping" });
      conn.keepaliveTimer = this.timers.setTimeout(() => {
        if (conn.awaitingPong && !conn.closed) {
          conn.socket.close(1000, "keepalive timeout");
          // Some transports never report the close of a dead link: do it here.
          this.closed(conn, undefined, "keepalive timeout");
        }
      }, this.options.keepaliveTimeout ?? 10_000);
    }, interval);
  }
}
