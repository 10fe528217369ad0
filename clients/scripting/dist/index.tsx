// src/index.tsx
import { Button, List, Navigation, NavigationStack, Script, Section, Text, TextField, useEffect, useState } from "scripting";

// ../typescript/src/backoff.ts
var Backoff = class {
  constructor(options = {}, random = Math.random) {
    this.random = random;
    this.attempt = 0;
    this.initial = options.initial ?? 500;
    this.max = options.max ?? 3e4;
    this.factor = options.factor ?? 2;
    this.jitter = Math.min(1, Math.max(0, options.jitter ?? 0.5));
  }
  /** The delay before the next attempt; each call counts as one more failure. */
  next() {
    const ceiling = Math.min(this.max, this.initial * Math.pow(this.factor, this.attempt));
    this.attempt += 1;
    return Math.round(ceiling * (1 - this.jitter * this.random()));
  }
  /** How many delays were handed out since the last reset. */
  get attempts() {
    return this.attempt;
  }
  /** A session reached the live state: the next failure starts from the initial delay again. */
  reset() {
    this.attempt = 0;
  }
};

// ../typescript/src/closeCodes.ts
var TOO_MANY_SESSIONS_DELAY = 5e3;
function classifyClose(info) {
  const reason = info.reason ?? "";
  if (info.authInvalid !== void 0 || info.code === 4001) {
    return { kind: "auth_rejected", message: info.authInvalid || reason || "auth invalid" };
  }
  const wait = /try again in\s+(\d+(?:\.\d+)?)\s*s/i.exec(reason);
  if (info.code === 4029 || wait) {
    return { kind: "wait", seconds: wait ? Number(wait[1]) : 30 };
  }
  if (info.code === 1013 || /too many sessions/i.test(reason) || /too many sessions/i.test(info.lastError ?? "")) {
    return { kind: "backoff", minimum: TOO_MANY_SESSIONS_DELAY };
  }
  if (info.code === 1001 || info.code === 4002 || info.code === 4003)
    return { kind: "reconnect_now" };
  if (info.code === void 0 && /ack timeout|too slow|shutdown|going away/i.test(reason))
    return { kind: "reconnect_now" };
  return { kind: "backoff", minimum: 0 };
}

// ../typescript/src/emitter.ts
var Emitter = class {
  constructor() {
    this.handlers = /* @__PURE__ */ new Map();
  }
  on(type, handler) {
    let set = this.handlers.get(type);
    if (!set) {
      set = /* @__PURE__ */ new Set();
      this.handlers.set(type, set);
    }
    set.add(handler);
    return () => this.off(type, handler);
  }
  off(type, handler) {
    this.handlers.get(type)?.delete(handler);
  }
  /** Runs the handlers one after the other; returns the errors they threw (a bad handler never stops the stream). */
  async emit(type, payload) {
    const set = this.handlers.get(type);
    if (!set || set.size === 0)
      return [];
    const errors = [];
    for (const handler of [...set]) {
      try {
        await handler(payload);
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }
  has(type) {
    return (this.handlers.get(type)?.size ?? 0) > 0;
  }
};

// ../typescript/src/protocol.ts
var PROTOCOLS = ["lanpush.v2", "lanpush.v1"];
var PREFERRED_PROTOCOL = PROTOCOLS[0];
var EVENT_TYPES = /* @__PURE__ */ new Set([
  "snapshot",
  "replay",
  "synced",
  "start",
  "update",
  "end",
  "lifecycle",
  "notification",
  "clear",
  "notifications_dropped"
]);
function isEventFrame(frame) {
  return EVENT_TYPES.has(frame.type);
}
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
var ARRAY_BODIES = /* @__PURE__ */ new Map([
  ["start", { key: "state", kind: "object" }],
  ["update", { key: "patch", kind: "object" }],
  ["end", { key: "patch", kind: "object" }],
  ["lifecycle", { key: "phase", kind: "string" }]
]);
function fromArray(a) {
  if (a.length < 4 || a.length > 5)
    return null;
  const [type, seq, tag, body, extras] = a;
  if (typeof type !== "string" || typeof seq !== "number" || typeof tag !== "string")
    return null;
  const spec = ARRAY_BODIES.get(type);
  if (!spec)
    return null;
  if (spec.kind === "object" ? !isObject(body) : typeof body !== "string")
    return null;
  if (a.length === 5 && !isObject(extras))
    return null;
  const frame = { ...extras, type, seq, tag, [spec.key]: body };
  if (type === "update" && frame.phase === void 0)
    frame.phase = "active";
  return frame;
}
function parseFrame(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (Array.isArray(value))
    return fromArray(value);
  if (!isObject(value) || typeof value.type !== "string")
    return null;
  return value;
}

// ../typescript/src/mergePatch.ts
function mergePatch(target, patch) {
  if (!isObject(patch))
    return clone(patch);
  const result = isObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) {
      delete result[key];
    } else {
      result[key] = mergePatch(result[key], value);
    }
  }
  return result;
}
function clone(value) {
  if (Array.isArray(value))
    return value.map((v) => clone(v));
  if (isObject(value)) {
    const out = {};
    for (const key of Object.keys(value))
      out[key] = clone(value[key]);
    return out;
  }
  return value;
}
function deepEqual(a, b) {
  if (a === b)
    return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length)
      return false;
    return ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

// ../typescript/src/reducer.ts
function reduce(state, frame, options) {
  const r = new Reduction(state, options);
  r.apply(frame);
  return { state: r.next, events: r.events, ack: r.ack, ...r.resync ? { resync: r.resync } : {} };
}
var Reduction = class {
  constructor(prev, options) {
    this.prev = prev;
    this.options = options;
    this.events = [];
    this.ack = null;
    this.next = { ...prev, activities: { ...prev.activities }, notifications: prev.notifications };
  }
  apply(frame) {
    switch (frame.type) {
      case "snapshot":
        return this.snapshot(frame.epoch, frame.seq, frame.activities);
      case "replay":
        this.next.epoch = frame.epoch;
        this.events.push({ type: "replay", epoch: frame.epoch, from: frame.from });
        return;
      case "synced":
        this.events.push({ type: "synced", seq: frame.seq });
        return;
      case "notifications_dropped":
        this.events.push({ type: "notifications_dropped", count: frame.count, through: frame.through });
        return;
      case "start":
        this.start(frame);
        break;
      case "update":
        this.update(frame);
        break;
      case "end":
        this.end(frame);
        break;
      case "lifecycle":
        this.lifecycle(frame.tag, frame.phase);
        break;
      case "notification":
        this.notification({
          seq: frame.seq,
          ...frame.title !== void 0 ? { title: frame.title } : {},
          ...frame.message !== void 0 ? { message: frame.message } : {},
          data: clone(frame.data ?? {})
        });
        break;
      case "clear":
        this.clear(frame.tag);
        break;
    }
    this.next.seq = Math.max(this.next.seq, frame.seq);
    this.ack = frame.seq;
  }
  gone(a) {
    return a.phase === "dismissed" || a.phase === "ended" && a.dismissal_date !== void 0 && a.dismissal_date <= this.options.now;
  }
  put(tag, current, cause, extra = {}) {
    const previous = this.prev.activities[tag] ?? null;
    if (current) {
      this.next.activities[tag] = current;
    } else {
      delete this.next.activities[tag];
    }
    if (previous === null && current === null)
      return;
    this.events.push({ type: "activity", tag, previous, current, cause, ...extra });
  }
  snapshot(epoch, seq, list) {
    this.next.epoch = epoch;
    this.next.seq = seq;
    this.ack = seq;
    const incoming = /* @__PURE__ */ new Map();
    for (const a of list) {
      if (this.gone(a))
        continue;
      incoming.set(a.tag, fromWire(a, a.phase));
    }
    const tags = /* @__PURE__ */ new Set([...Object.keys(this.prev.activities), ...incoming.keys()]);
    for (const tag of [...tags].sort()) {
      const previous = this.prev.activities[tag];
      const current = incoming.get(tag) ?? null;
      if (previous && current && sameActivity(previous, current))
        continue;
      this.put(tag, current, "snapshot");
      if (current && current.phase === "ended" && previous?.phase !== "ended") {
        this.events.push({ type: "ended", tag, activity: current });
      }
      if (!current && previous)
        this.events.push({ type: "dismissed", tag, activity: previous });
    }
    this.events.push({ type: "snapshot", epoch, seq });
  }
  start(f) {
    const phase = f.phase ?? "active";
    const previous = this.prev.activities[f.tag];
    const activity = fromWire(f, phase);
    if (this.gone({ phase, dismissal_date: f.dismissal_date })) {
      if (previous) {
        this.put(f.tag, null, "start");
        this.events.push({ type: "dismissed", tag: f.tag, activity: previous });
      }
      return;
    }
    this.put(f.tag, activity, "start", f.alert ? { alert: f.alert } : {});
    if (activity.phase === "ended")
      this.events.push({ type: "ended", tag: f.tag, activity });
  }
  update(f) {
    const held = this.prev.activities[f.tag];
    if (!held || held.phase === "ended") {
      this.resync = `update of '${f.tag}' (seq ${f.seq}) that the client does not hold live`;
      return;
    }
    const next = {
      ...held,
      state: mergePatch(held.state, f.patch),
      phase: f.phase === "stale" ? "stale" : "active"
    };
    if (f.stale_date === null)
      delete next.stale_date;
    else if (f.stale_date !== void 0)
      next.stale_date = f.stale_date;
    if (f.relevance_score !== void 0)
      next.relevance_score = f.relevance_score;
    const extra = {};
    if (f.alert)
      extra.alert = f.alert;
    if (f.silent)
      extra.silent = true;
    this.put(f.tag, next, "update", extra);
  }
  end(f) {
    const held = this.prev.activities[f.tag];
    if (!held) {
      this.resync = `end of '${f.tag}' (seq ${f.seq}) that the client does not hold`;
      return;
    }
    const ended = { ...held, state: mergePatch(held.state, f.patch), phase: "ended" };
    if (f.dismissal_date !== void 0)
      ended.dismissal_date = f.dismissal_date;
    if (f.stale_date === null)
      delete ended.stale_date;
    else if (f.stale_date !== void 0)
      ended.stale_date = f.stale_date;
    if (f.relevance_score !== void 0)
      ended.relevance_score = f.relevance_score;
    if (this.gone({ phase: f.phase === "dismissed" ? "dismissed" : "ended", dismissal_date: ended.dismissal_date })) {
      this.put(f.tag, null, "end");
      this.events.push({ type: "ended", tag: f.tag, activity: ended });
      this.events.push({ type: "dismissed", tag: f.tag, activity: ended });
      return;
    }
    this.put(f.tag, ended, "end");
    this.events.push({ type: "ended", tag: f.tag, activity: ended });
  }
  lifecycle(tag, phase) {
    const held = this.prev.activities[tag];
    if (!held)
      return;
    if (phase === "dismissed") {
      this.put(tag, null, "lifecycle");
      this.events.push({ type: "dismissed", tag, activity: held });
      return;
    }
    if (phase === "ended") {
      const ended = { ...held, phase: "ended" };
      this.put(tag, ended, "lifecycle");
      this.events.push({ type: "ended", tag, activity: ended });
      return;
    }
    if (held.phase === "ended" || held.phase === phase)
      return;
    this.put(tag, { ...held, phase }, "lifecycle");
  }
  notification(n) {
    if (this.prev.notifications.some((h) => h.seq === n.seq && sameNotification(h, n)))
      return;
    const limit = this.options.maxNotifications ?? 100;
    const list = [...this.prev.notifications, n];
    this.next.notifications = list.length > limit ? list.slice(list.length - limit) : list;
    this.events.push({ type: "notification", notification: n });
  }
  clear(tag) {
    const removed = this.prev.notifications.filter((n) => n.data.tag === tag);
    if (removed.length > 0)
      this.next.notifications = this.prev.notifications.filter((n) => n.data.tag !== tag);
    this.events.push({ type: "clear", tag, removed });
  }
};
function fromWire(a, phase) {
  const activity = {
    tag: a.tag,
    attributes: clone(a.attributes),
    state: clone(a.state),
    phase: phase === "dismissed" ? "ended" : phase
  };
  if (a.stale_date !== void 0)
    activity.stale_date = a.stale_date;
  if (a.relevance_score !== void 0)
    activity.relevance_score = a.relevance_score;
  if (a.dismissal_date !== void 0)
    activity.dismissal_date = a.dismissal_date;
  return activity;
}
function sameActivity(a, b) {
  return deepEqual(a, b);
}
function sameNotification(a, b) {
  return a.title === b.title && a.message === b.message && deepEqual(a.data, b.data);
}

// ../typescript/src/state.ts
function emptyState() {
  return { epoch: null, seq: 0, activities: {}, notifications: [] };
}
function sortedActivities(state) {
  const rank = (a) => a.phase === "ended" ? 1 : 0;
  return Object.values(state.activities).sort(
    (a, b) => rank(a) - rank(b) || (b.relevance_score ?? 0) - (a.relevance_score ?? 0) || b.attributes.started_at - a.attributes.started_at || (a.tag < b.tag ? -1 : 1)
  );
}

// ../typescript/src/transport.ts
var OPEN = 1;
function globalWebSocket() {
  const g = globalThis;
  return g.WebSocket;
}
function globalTimers() {
  const g = globalThis;
  return {
    setTimeout: (callback, ms) => g.setTimeout(callback, ms),
    clearTimeout: (handle) => g.clearTimeout(handle)
  };
}

// ../typescript/src/client.ts
var LanpushClient = class {
  constructor(options) {
    this.events = new Emitter();
    this.stateValue = emptyState();
    this.observed = /* @__PURE__ */ new Map();
    this.statusValue = "offline";
    this.conn = null;
    this.nextId = 1;
    this.running = false;
    this.loaded = false;
    this.inbox = [];
    this.pumping = null;
    this.retryTimer = null;
    this.wantSnapshot = false;
    this.outgoing = [];
    this.deviceIdValue = null;
    this.grantedKeepalive = null;
    this.options = options;
    this.backoff = new Backoff(options.backoff, options.random);
    this.timers = options.timers ?? globalTimers();
    this.now = options.now ?? (() => Date.now());
  }
  // MARK: Public surface
  on(type, handler) {
    return this.events.on(type, handler);
  }
  get status() {
    return this.statusValue;
  }
  /** The device's state (device role). */
  get state() {
    return this.stateValue;
  }
  /** The device this client is (from `auth_ok`), once known. */
  get deviceId() {
    return this.deviceIdValue;
  }
  /**
   * Seconds between the gateway's pings on the current session (`auth_ok`'s `keepalive`); null before the first
   * authentication, or from a gateway that does not say (it then pings every `session.ping_interval`, 10 s).
   */
  get keepalive() {
    return this.grantedKeepalive;
  }
  /** Observers: every watched device's state. */
  get devices() {
    return this.observed;
  }
  /** Activities in the order a phone shows them. */
  activities(device) {
    const state = device === void 0 ? this.stateValue : this.observed.get(device);
    return state ? sortedActivities(state) : [];
  }
  /** Connects and keeps connecting until `stop()` or a rejected token. */
  start() {
    if (this.running)
      return;
    this.running = true;
    void this.connectWhenIdle(0);
  }
  /** Closes the session and stops reconnecting; resolves once queued frames were handled. */
  async stop() {
    this.running = false;
    this.clearRetry();
    const conn = this.conn;
    if (conn && !conn.closed)
      conn.socket.close(1e3, "client stopped");
    await this.idle();
    if (this.statusValue !== "auth_rejected")
      this.setStatus("offline");
  }
  /** The user dismissed the activity: it becomes `dismissed` for every session of the device. */
  dismiss(tag) {
    this.queueOutgoing({ type: "dismissed", tag }, (o) => o.type === "dismissed" && o.tag === tag);
  }
  sendLiveActivityToken(tag, token, expiresAt) {
    const frame = { type: "live_activity_token", tag, token };
    if (expiresAt !== void 0)
      frame.expires_at = expiresAt;
    this.queueOutgoing(frame, (o) => o.type === "live_activity_token" && o.tag === tag);
  }
  sendPushToStartToken(token) {
    this.queueOutgoing({ type: "push_to_start_token", token }, (o) => o.type === "push_to_start_token");
  }
  /** Forgets a held plain notification (the user read it); local only. */
  async removeNotification(seq) {
    this.stateValue = { ...this.stateValue, notifications: this.stateValue.notifications.filter((n) => n.seq !== seq) };
    await this.persist();
  }
  /** Resolves when every received frame has been handled. */
  async idle() {
    while (this.pumping)
      await this.pumping;
  }
  // MARK: Connecting
  get isObserver() {
    return this.options.role === "observer";
  }
  get storeKey() {
    return this.options.storeKey ?? `lanpush:${this.options.url}`;
  }
  setStatus(status, detail = {}) {
    if (status === this.statusValue)
      return;
    const previous = this.statusValue;
    this.statusValue = status;
    void this.events.emit("status", { status, previous, detail });
  }
  clearRetry() {
    if (this.retryTimer !== null)
      this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }
  async connectWhenIdle(delay) {
    this.clearRetry();
    if (delay > 0) {
      this.retryTimer = this.timers.setTimeout(() => {
        this.retryTimer = null;
        void this.connectWhenIdle(0);
      }, delay);
      return;
    }
    await this.idle();
    if (!this.running)
      return;
    if (!this.loaded) {
      this.loaded = true;
      const stored = !this.isObserver && this.options.store ? await this.options.store.load(this.storeKey) : null;
      if (stored)
        this.stateValue = stored;
    }
    this.connect();
  }
  makeSocket() {
    if (this.options.createSocket)
      return this.options.createSocket(this.options.url, [...PROTOCOLS]);
    const Ctor = this.options.WebSocket ?? globalWebSocket();
    if (!Ctor)
      throw new Error("no WebSocket: pass the WebSocket or createSocket option");
    return new Ctor(this.options.url, [...PROTOCOLS]);
  }
  connect() {
    this.setStatus("connecting");
    let socket;
    try {
      socket = this.makeSocket();
    } catch (error) {
      void this.events.emit("error", { message: `cannot open ${this.options.url}: ${String(error)}`, error });
      this.scheduleReconnect({ authed: false, code: void 0, reason: String(error) });
      return;
    }
    const conn = { id: this.nextId++, socket, authed: false, closed: false, ackable: 0, acked: 0, pendingAcks: 0, awaitingPong: false, discard: false };
    this.conn = conn;
    conn.handshakeTimer = this.timers.setTimeout(() => {
      if (conn.authed || conn.closed)
        return;
      socket.close(1e3, "handshake timeout");
      this.closed(conn, void 0, "handshake timeout");
    }, this.options.handshakeTimeout ?? 5e3);
    socket.onmessage = (event) => {
      if (conn.closed || typeof event.data !== "string")
        return;
      const frame = parseFrame(event.data);
      if (!frame)
        return;
      this.armKeepalive(conn);
      this.inbox.push({ conn, frame });
      this.pump();
    };
    socket.onclose = (event) => this.closed(conn, event.code, event.reason);
    socket.onerror = () => {
    };
  }
  closed(conn, code, reason) {
    if (conn.closed)
      return;
    conn.closed = true;
    conn.close = { code, reason };
    this.timers.clearTimeout(conn.handshakeTimer);
    this.timers.clearTimeout(conn.keepaliveTimer);
    void this.idle().then(() => this.afterClose(conn));
  }
  afterClose(conn) {
    if (this.conn !== conn)
      return;
    this.conn = null;
    if (!this.running) {
      if (this.statusValue !== "auth_rejected")
        this.setStatus("offline", { code: conn.close?.code, reason: conn.close?.reason });
      return;
    }
    this.scheduleReconnect({ authed: conn.authed, ...conn.close, authInvalid: conn.authInvalid, lastError: conn.lastError });
  }
  scheduleReconnect(info) {
    const action = classifyClose(info);
    const detail = { code: info.code, reason: info.reason };
    if (action.kind === "auth_rejected") {
      this.running = false;
      this.setStatus("auth_rejected", detail);
      void this.events.emit("auth_rejected", { message: action.message, code: info.code });
      return;
    }
    let delay;
    if (action.kind === "wait") {
      delay = action.seconds * 1e3 * (1 + 0.1 * (this.options.random ?? Math.random)());
    } else if (action.kind === "reconnect_now" && info.authed || this.wantSnapshot) {
      delay = 0;
    } else {
      delay = Math.max(action.kind === "backoff" ? action.minimum : 0, this.backoff.next());
    }
    this.setStatus("offline", { ...detail, retryIn: delay });
    void this.connectWhenIdle(delay);
  }
  // MARK: Frames
  pump() {
    if (this.pumping)
      return;
    this.pumping = (async () => {
      while (this.inbox.length > 0) {
        const { conn, frame } = this.inbox.shift();
        try {
          if (this.events.has("frame"))
            await this.emitAll("frame", { frame });
          await this.handle(conn, frame);
          if (!this.isObserver)
            await this.maybeAck(conn);
        } catch (error) {
          void this.events.emit("error", { message: `handling ${frame.type}: ${String(error)}`, error });
        }
      }
      this.pumping = null;
    })();
  }
  send(conn, frame) {
    if (conn.closed || conn.socket.readyState !== OPEN)
      return false;
    conn.socket.send(JSON.stringify(frame));
    return true;
  }
  async handle(conn, frame) {
    if (isEventFrame(frame))
      return this.handleEvent(conn, frame);
    switch (frame.type) {
      case "auth_required": {
        const auth = { type: "auth", token: this.options.token, version: PREFERRED_PROTOCOL };
        if (this.options.keepalive !== void 0)
          auth.keepalive = Math.round(this.options.keepalive);
        if (this.isObserver) {
          auth.role = "observer";
          if (this.options.device !== void 0)
            auth.device = this.options.device;
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
  authenticated(conn, deviceId) {
    conn.authed = true;
    this.timers.clearTimeout(conn.handshakeTimer);
    if (deviceId)
      this.deviceIdValue = deviceId;
    if (!this.isObserver && this.options.register) {
      const register = { type: "register", ...this.options.register };
      if (this.options.supportsLiveActivities !== void 0)
        register.supports_live_activities = this.options.supportsLiveActivities;
      this.send(conn, register);
    }
    const subscribe = { type: "subscribe" };
    if (!this.isObserver && !this.wantSnapshot && this.stateValue.epoch !== null) {
      subscribe.epoch = this.stateValue.epoch;
      subscribe.seq = this.stateValue.seq;
    }
    this.wantSnapshot = false;
    this.send(conn, subscribe);
    for (const frame of this.outgoing.splice(0))
      this.send(conn, frame);
    this.armKeepalive(conn);
  }
  async handleEvent(conn, frame) {
    if (conn.discard)
      return;
    const device = this.isObserver ? frame.device_id ?? "" : this.deviceIdValue ?? "";
    const before = this.isObserver ? this.observed.get(device) ?? emptyState() : this.stateValue;
    const result = reduce(before, frame, { now: this.now() / 1e3, maxNotifications: this.options.maxNotifications });
    if (result.resync) {
      void this.events.emit("error", { message: `resynchronizing: ${result.resync}` });
      this.wantSnapshot = true;
      conn.discard = true;
      if (!conn.closed)
        conn.socket.close(1e3, "resync");
      return;
    }
    if (this.isObserver) {
      this.observed.set(device, result.state);
    } else {
      this.stateValue = result.state;
    }
    for (const event of result.events)
      await this.emitState(device, event);
    if (frame.type === "synced") {
      this.backoff.reset();
      this.setStatus("live");
    }
    if (this.isObserver || result.ack === null)
      return;
    conn.ackable = Math.max(conn.ackable, result.ack);
    conn.pendingAcks += 1;
  }
  /** Acks when nothing else waits to be handled, or every half window, so credit never runs out. */
  async maybeAck(conn) {
    const more = this.inbox.some((item) => item.conn === conn);
    const half = Math.max(1, Math.floor((this.options.window ?? 32) / 2));
    if (conn.pendingAcks === 0 || more && conn.pendingAcks < half)
      return;
    await this.persist();
    if (this.send(conn, { type: "ack", seq: conn.ackable })) {
      conn.acked = conn.ackable;
      conn.pendingAcks = 0;
    }
  }
  async persist() {
    if (this.isObserver || !this.options.store)
      return;
    await this.options.store.save(this.storeKey, this.stateValue);
  }
  async emitState(device, event) {
    const { type, ...rest } = event;
    await this.emitAll(type, { ...rest, device });
  }
  async emitAll(type, payload) {
    const errors = await this.events.emit(type, payload);
    for (const error of errors) {
      await this.events.emit("error", { message: `a '${String(type)}' handler failed: ${String(error)}`, error });
    }
  }
  queueOutgoing(frame, replaces) {
    const conn = this.conn;
    if (conn && conn.authed && this.send(conn, frame))
      return;
    this.outgoing = this.outgoing.filter((o) => !replaces(o));
    this.outgoing.push(frame);
    if (this.outgoing.length > 256)
      this.outgoing.shift();
  }
  // MARK: Keepalive
  /**
   * Any frame proves the link; after a quiet interval a `ping` must be answered or the session is dropped. The
   * gateway's own pings (WebSocket control frames, which scripts never see) find a vanished client; this one finds a
   * vanished gateway — a restarting one closes its sessions — so it pings at most half as often as the gateway does.
   */
  armKeepalive(conn) {
    const interval = this.options.keepaliveInterval ?? Math.max(3e4, 2e3 * (this.grantedKeepalive ?? 0));
    if (interval <= 0 || conn.closed)
      return;
    this.timers.clearTimeout(conn.keepaliveTimer);
    conn.awaitingPong = false;
    conn.keepaliveTimer = this.timers.setTimeout(() => {
      if (conn.closed || !conn.authed)
        return;
      conn.awaitingPong = true;
      this.send(conn, { type: "ping" });
      conn.keepaliveTimer = this.timers.setTimeout(() => {
        if (conn.awaitingPong && !conn.closed) {
          conn.socket.close(1e3, "keepalive timeout");
          this.closed(conn, void 0, "keepalive timeout");
        }
      }, this.options.keepaliveTimeout ?? 1e4);
    }, interval);
  }
};

// src/app.ts
import { LanpushActivity } from "./live_activity";

// src/mirror.ts
import { Notification } from "scripting";
var Mirror = class {
  constructor(client, create, now = () => Date.now()) {
    this.client = client;
    this.create = create;
    this.now = now;
    this.mirrored = /* @__PURE__ */ new Map();
    this.unsubscribe = [];
    /** False once scheduling a local notification failed: the page then lists them instead. */
    this.notificationsDelivered = true;
    this.lastContent = /* @__PURE__ */ new Map();
  }
  attach() {
    const c = this.client;
    this.unsubscribe.push(
      c.on("activity", async (e) => {
        if (e.current && e.current.phase !== "ended")
          await this.show(e.current, e.cause, e.alert);
      }),
      c.on("ended", (e) => this.end(e.activity)),
      c.on("dismissed", (e) => this.dismiss(e.tag, e.activity)),
      c.on("notification", (e) => this.notify(e.notification)),
      c.on("clear", (e) => this.clearNotifications(e.tag))
    );
  }
  /** Live Activities currently shown, by tag. */
  get tags() {
    return [...this.mirrored.keys()];
  }
  /** The script stops: its activities end and are dismissed, so nothing stale stays on the Lock Screen. */
  async stop() {
    for (const off of this.unsubscribe.splice(0))
      off();
    for (const [tag, m] of [...this.mirrored]) {
      m.dismissing = true;
      if (m.started) {
        const content = this.lastContent.get(tag);
        if (content)
          await m.activity.end(content, { dismissTimeInterval: 0 });
      }
      m.activity.removeUpdateListener(m.listener);
      this.mirrored.delete(tag);
    }
  }
  content(a) {
    const content = { tag: a.tag, title: a.attributes.title, state: a.state, phase: a.phase };
    const t = a.state.template;
    if (t && t.template === "generic" && typeof t.remaining_time === "number") {
      content.remaining_until = this.now() + t.remaining_time * 1e3;
    }
    this.lastContent.set(a.tag, content);
    return content;
  }
  options(a) {
    const o = {};
    if (a.stale_date !== void 0)
      o.staleDate = a.stale_date * 1e3;
    if (a.relevance_score !== void 0)
      o.relevanceScore = a.relevance_score;
    return o;
  }
  async show(a, cause, alert) {
    let m = this.mirrored.get(a.tag);
    if (m && (cause === "start" || m.startedAt !== a.attributes.started_at)) {
      await this.finish(a.tag, m, 0);
      m = void 0;
    }
    const content = this.content(a);
    if (!m) {
      const activity = this.create();
      const record = { activity, startedAt: a.attributes.started_at, started: false, ended: false, dismissing: false, listener: () => {
      } };
      record.listener = (state) => this.systemState(a.tag, record, state);
      activity.addUpdateListener(record.listener);
      this.mirrored.set(a.tag, record);
      record.started = await activity.start(content, this.options(a));
      return;
    }
    if (!m.started || m.ended)
      return;
    if (cause === "lifecycle" && a.phase === "stale")
      return;
    const options = this.options(a);
    if (alert && (alert.title || alert.body))
      options.alert = { title: alert.title ?? "", body: alert.body ?? "" };
    await m.activity.update(content, options);
  }
  async end(a) {
    let m = this.mirrored.get(a.tag);
    if (!m) {
      await this.show({ ...a, phase: "active" }, "start");
      m = this.mirrored.get(a.tag);
      if (!m)
        return;
    }
    const remaining = a.dismissal_date === void 0 ? void 0 : Math.max(0, Math.round(a.dismissal_date - this.now() / 1e3));
    m.ended = true;
    if (remaining === 0)
      m.dismissing = true;
    if (!m.started)
      return;
    const options = this.options(a);
    if (remaining !== void 0)
      options.dismissTimeInterval = remaining;
    await m.activity.end(this.content(a), options);
    if (remaining === 0)
      this.forget(a.tag, m);
  }
  async dismiss(tag, last) {
    const m = this.mirrored.get(tag);
    if (!m)
      return;
    m.dismissing = true;
    if (m.started)
      await m.activity.end(this.content(last), { dismissTimeInterval: 0 });
    this.forget(tag, m);
  }
  async finish(tag, m, dismissTimeInterval) {
    m.dismissing = true;
    const content = this.lastContent.get(tag);
    if (m.started && content)
      await m.activity.end(content, { dismissTimeInterval });
    this.forget(tag, m);
  }
  forget(tag, m) {
    m.activity.removeUpdateListener(m.listener);
    if (this.mirrored.get(tag) === m)
      this.mirrored.delete(tag);
  }
  /** The system reports a state change; `dismissed` that the script did not cause is the user's swipe. */
  systemState(tag, m, state) {
    if (state !== "dismissed")
      return;
    if (!m.dismissing)
      this.client.dismiss(tag);
    m.dismissing = true;
    this.forget(tag, m);
  }
  async notify(n) {
    const data = n.data;
    const options = {
      title: n.title ?? "Home Assistant",
      userInfo: { lanpush_seq: n.seq, ...typeof data.tag === "string" ? { tag: data.tag } : {} }
    };
    if (n.message !== void 0)
      options.body = n.message;
    if (typeof data.group === "string")
      options.threadIdentifier = data.group;
    if (data.silent === true)
      options.silent = true;
    if (typeof data.url === "string" && /^https?:\/\//.test(data.url))
      options.tapAction = { type: "openURL", url: data.url };
    try {
      if (!await Notification.schedule(options))
        this.notificationsDelivered = false;
    } catch {
      this.notificationsDelivered = false;
    }
  }
  async clearNotifications(tag) {
    try {
      const delivered = await Notification.getAllDeliveredsOfCurrentScript();
      const ids = delivered.filter((d) => d.request.content.userInfo?.tag === tag).map((d) => d.request.identifier);
      if (ids.length > 0)
        await Notification.removeDelivereds(ids);
    } catch {
    }
  }
};

// src/socket.ts
var ScriptingSocket = class {
  constructor(url) {
    this.readyState = 0;
    this.onopen = null;
    this.onmessage = null;
    this.onclose = null;
    this.onerror = null;
    this.ws = new WebSocket(url);
    this.ws.onopen = () => {
      this.readyState = 1;
      this.onopen?.({});
    };
    this.ws.onmessage = (message) => {
      if (typeof message === "string")
        this.onmessage?.({ data: message });
    };
    this.ws.onclose = (reason) => this.closed(reason ?? "");
    this.ws.onerror = (error) => {
      this.onerror?.(error);
      if (this.readyState !== 1)
        this.closed(error?.message ?? "connection failed");
    };
  }
  closed(reason) {
    if (this.readyState === 3)
      return;
    this.readyState = 3;
    this.onclose?.({ reason });
  }
  send(data) {
    this.ws.send(data);
  }
  close(_code, reason) {
    this.ws.close(1e3, reason);
  }
};

// src/storage.ts
var URL_KEY = "lanpush.url";
var TOKEN_KEY = "lanpush.token";
function loadSettings() {
  return { url: Storage.get(URL_KEY) ?? "", token: Storage.get(TOKEN_KEY) ?? "" };
}
function saveSettings(settings) {
  Storage.set(URL_KEY, settings.url.trim());
  Storage.set(TOKEN_KEY, settings.token.trim());
}
function streamURL(url) {
  let u = url.trim();
  if (!/^wss?:\/\//i.test(u))
    u = `ws://${u.replace(/^https?:\/\//i, "")}`;
  if (!/\/v1\/stream$/.test(u))
    u = u.replace(/\/+$/, "") + "/v1/stream";
  return u;
}
var ScriptingStorageStore = class {
  load(key) {
    return Storage.get(key);
  }
  save(key, state) {
    Storage.set(key, state);
  }
  clear(key) {
    Storage.remove(key);
  }
};

// src/app.ts
var App = class {
  constructor(settings) {
    this.settings = settings;
    this.client = null;
    this.mirror = null;
    this.listeners = /* @__PURE__ */ new Set();
    this.status = "not configured";
    this.detail = "";
    this.keepAlive = null;
  }
  get configured() {
    return this.settings.url !== "" && this.settings.token !== "";
  }
  get activities() {
    return this.client ? sortedActivities(this.client.state) : [];
  }
  /** Held plain notifications, newest first (the page lists them when local notifications are not delivered). */
  get notifications() {
    return this.client ? [...this.client.state.notifications].reverse() : [];
  }
  get notificationsDelivered() {
    return this.mirror?.notificationsDelivered ?? true;
  }
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  changed() {
    for (const listener of [...this.listeners])
      listener();
  }
  /** (Re)connects with the current settings and keeps the app alive in the background while it runs. */
  async start() {
    await this.stop();
    if (!this.configured)
      return;
    const client = new LanpushClient({
      url: streamURL(this.settings.url),
      token: this.settings.token,
      store: new ScriptingStorageStore(),
      // One key per gateway and token, so a changed setting never resumes another device's stream.
      storeKey: `lanpush.state.${this.settings.url}.${this.settings.token.slice(0, 8)}`,
      createSocket: (url) => new ScriptingSocket(url)
    });
    const mirror = new Mirror(client, LanpushActivity);
    mirror.attach();
    client.on("status", (e) => {
      this.status = e.status;
      this.detail = e.detail.reason ?? "";
      this.changed();
    });
    client.on("auth_rejected", (e) => {
      this.detail = `token rejected: ${e.message}`;
      this.changed();
    });
    for (const type of ["activity", "notification", "clear", "synced"])
      client.on(type, () => this.changed());
    this.client = client;
    this.mirror = mirror;
    client.start();
    this.keepAlive = await BackgroundKeeper.keepAlive();
    this.changed();
  }
  /** Disconnects; the mirrored Live Activities end and are dismissed. */
  async stop() {
    const client = this.client;
    const mirror = this.mirror;
    this.client = null;
    this.mirror = null;
    if (mirror)
      await mirror.stop();
    if (client)
      await client.stop();
    if (client)
      this.status = "offline";
    this.changed();
  }
};

// src/pair.ts
import { fetch } from "scripting";

// ../typescript/src/pairing.ts
var PairingError = class extends Error {
  /** The gateway's HTTP status (403: unknown, used or expired; 429: too many attempts), or null when none answered. */
  constructor(message, status, retryAfter = null) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
    this.name = "PairingError";
  }
};
function parsePairingURL(text) {
  const m = /^lanpush:\/\/([^/?#]+)\/pair\?([^#]*)$/i.exec(text.trim());
  if (!m)
    return null;
  const params = m[2].split("&").filter((p) => p !== "").map((p) => {
    const i = p.indexOf("=");
    const decode = (s) => decodeURIComponent(s.replace(/\+/g, " "));
    return i < 0 ? [decode(p), ""] : [decode(p.slice(0, i)), decode(p.slice(i + 1))];
  });
  const get = (name) => params.find(([k]) => k === name)?.[1] ?? null;
  const code = get("code");
  if (!code)
    return null;
  const fp = get("fp");
  const alternatives = params.filter(([k, v]) => k === "alt" && v !== "").map(([, v]) => v);
  return { addresses: [m[1], ...alternatives], code, fingerprint: fp ? fp.replace(/:/g, "").toLowerCase() : null };
}
async function redeemPairing(input, options) {
  const url = parsePairingURL(input);
  const code = url ? url.code : input.trim();
  if (!code)
    throw new PairingError("no pairing code: scan or paste the pairing URL, or type the short code", null);
  const addresses = url ? url.addresses : options.address ? [hostPort(options.address)] : [];
  if (addresses.length === 0)
    throw new PairingError("a short code needs the gateway's address", null);
  const [http, ws] = options.tls ? ["https", "wss"] : ["http", "ws"];
  let lastFailure = "";
  for (const address of addresses) {
    let answer;
    try {
      answer = await options.fetch(`${http}://${address}/v1/pair`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ code })
      });
    } catch (e) {
      lastFailure = `${address}: ${e.message}`;
      continue;
    }
    const body = await answer.json().catch(() => null);
    if (answer.status === 200 && body && typeof body.token === "string") {
      return {
        deviceId: String(body.device_id),
        token: body.token,
        address,
        url: `${ws}://${address}/v1/stream`,
        fingerprint: typeof body.fingerprint === "string" ? body.fingerprint : url?.fingerprint ?? null
      };
    }
    const message = body && typeof body.message === "string" ? body.message : `the gateway answered ${answer.status}`;
    const retryAfter = answer.status === 429 ? Number(/(\d+) s/.exec(message)?.[1] ?? NaN) : NaN;
    throw new PairingError(message, answer.status, Number.isFinite(retryAfter) ? retryAfter : null);
  }
  throw new PairingError(`no gateway answered (${lastFailure})`, null);
}
function hostPort(address) {
  return address.trim().replace(/^[a-z]+:\/\//i, "").replace(/\/.*$/, "");
}

// src/pair.ts
async function pairDevice(input, address) {
  const paired = await redeemPairing(input, {
    address: address.trim() || void 0,
    fetch: (url, init) => fetch(url, { ...init, timeout: 10 })
  });
  return { url: paired.address, token: paired.token };
}
function pairingFailure(error) {
  if (error instanceof PairingError) {
    if (error.status === 403)
      return "That code is unknown, already used or expired: make a new one on the gateway.";
    if (error.status === 429)
      return `Too many attempts: try again in ${error.retryAfter ?? 60} s.`;
    return error.message;
  }
  return String(error);
}

// src/index.tsx
function Page({ app }) {
  const [, redraw] = useState(0);
  const [url, setUrl] = useState(app.settings.url);
  const [token, setToken] = useState(app.settings.token);
  const [code, setCode] = useState("");
  const [pairing, setPairing] = useState("");
  useEffect(() => app.subscribe(() => redraw((n) => n + 1)), []);
  const use = (settings) => {
    saveSettings(settings);
    app.settings = loadSettings();
    setUrl(app.settings.url);
    setToken(app.settings.token);
    void app.start();
  };
  const connect = () => use({ url, token });
  const pair = async (input) => {
    setPairing("Pairing…");
    try {
      use(await pairDevice(input, url));
      setCode("");
      setPairing("");
    } catch (e) {
      setPairing(pairingFailure(e));
    }
  };
  const scan = async () => {
    const scanned = await QRCode.scan();
    if (scanned)
      await pair(scanned);
  };
  const status = app.status === "live" ? "Live" : app.status === "auth_rejected" ? "Token rejected" : app.status === "connecting" ? "Connecting…" : app.status === "offline" ? "Offline, retrying" : "Pair this phone, or enter the gateway and a device token";
  return /* @__PURE__ */ createElement(NavigationStack, null, /* @__PURE__ */ createElement(List, { navigationTitle: "lanpush" }, /* @__PURE__ */ createElement(Section, { title: "Pair" }, /* @__PURE__ */ createElement(Button, { title: "Scan the pairing QR code", systemImage: "qrcode.viewfinder", action: () => void scan() }), /* @__PURE__ */ createElement(TextField, { title: "Pairing URL or short code", prompt: "lanpush://… or ABCD-EFGH (with the URL below)", value: code, onChanged: setCode }), /* @__PURE__ */ createElement(Button, { title: "Pair", systemImage: "link", action: () => void pair(code) }), pairing ? /* @__PURE__ */ createElement(Text, null, pairing) : null), /* @__PURE__ */ createElement(Section, { title: "Gateway" }, /* @__PURE__ */ createElement(TextField, { title: "URL", prompt: "ws://192.168.1.5:8765", value: url, onChanged: setUrl }), /* @__PURE__ */ createElement(TextField, { title: "Device token", prompt: "set by pairing, or from lanpush device add", value: token, onChanged: setToken }), /* @__PURE__ */ createElement(Button, { title: "Connect", systemImage: "bolt.horizontal", action: connect })), /* @__PURE__ */ createElement(Section, { title: "Status" }, /* @__PURE__ */ createElement(Text, null, app.detail ? `${status} (${app.detail})` : status), app.keepAlive === false ? /* @__PURE__ */ createElement(Text, { foregroundStyle: "systemOrange" }, "Background keep-alive was refused: keep the app open") : null), /* @__PURE__ */ createElement(Section, { title: "Live Activities" }, app.activities.length === 0 ? /* @__PURE__ */ createElement(Text, { foregroundStyle: "secondaryLabel" }, "None") : null, app.activities.map((a) => /* @__PURE__ */ createElement(Text, { key: a.tag }, `${a.attributes.title}${a.state.message ? ` · ${a.state.message}` : ""}${a.phase === "ended" ? " (ended)" : ""}`))), /* @__PURE__ */ createElement(Section, { title: app.notificationsDelivered ? "Notifications (also delivered)" : "Notifications" }, app.notifications.map((n) => /* @__PURE__ */ createElement(Text, { key: n.seq }, [n.title, n.message].filter((s) => s).join(": "))))));
}
async function main() {
  if (Script.env !== "index")
    return;
  const app = new App(loadSettings());
  if (app.configured)
    await app.start();
  await Navigation.present({ element: /* @__PURE__ */ createElement(Page, { app }) });
  await app.stop();
  await BackgroundKeeper.stopKeepAlive();
  Script.exit();
}
void main();
