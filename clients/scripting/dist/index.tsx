// src/index.tsx
import { Navigation as Navigation2, Script as Script3 } from "scripting";

// ../typescript/src/scriptingRunURL.ts
var SCRIPTING_PAIR_PARAMETER = "pair";
function pairingFromQuery(parameters) {
  const value = parameters?.[SCRIPTING_PAIR_PARAMETER];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

// src/app.ts
import { Script as Script2 } from "scripting";

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
var TOO_MANY_SESSIONS = /too many [a-z ]*sessions/i;
function classifyClose(info) {
  const reason = info.reason ?? "";
  if (info.authInvalid !== void 0 || info.code === 4001) {
    return { kind: "auth_rejected", message: info.authInvalid || reason || "auth invalid" };
  }
  const wait = /try again in\s+(\d+(?:\.\d+)?)\s*s/i.exec(reason);
  if (info.code === 4029 || wait) {
    return { kind: "wait", seconds: wait ? Number(wait[1]) : 30 };
  }
  if (info.code === 1013 || TOO_MANY_SESSIONS.test(reason) || TOO_MANY_SESSIONS.test(info.lastError ?? "")) {
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
import { ACTIVITY_NAME, LanpushActivity } from "./live_activity";

// src/localNotifications.ts
import { Notification, Script } from "scripting";

// ../typescript/src/liveActivityRules.ts
function titleOf(activity) {
  const t = activity.state.title;
  return typeof t === "string" && t !== "" ? t : activity.attributes.title ?? "";
}
var APP_STALE_AFTER_MS = 30 * 60 * 1e3;
function appStaleDate(state, updatedAtMs) {
  if (state.chronometer === true && typeof state.countdown_end === "number") {
    return Math.max(state.countdown_end * 1e3 + 2e3, updatedAtMs + 2e3);
  }
  return updatedAtMs + APP_STALE_AFTER_MS;
}
function tapTarget(url) {
  if (typeof url !== "string" || url.trim() === "")
    return null;
  const raw = url.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw))
    return { kind: "url", raw, href: raw };
  const path = raw.startsWith("/") ? raw : `/${raw}`;
  return { kind: "path", raw, href: `homeassistant://navigate${path}` };
}

// src/localNotifications.ts
var LocalNotifications = class {
  constructor(client) {
    this.client = client;
    /** False once scheduling a local notification failed: the page then lists them instead. */
    this.delivered = true;
    this.unsubscribe = [];
  }
  attach() {
    this.unsubscribe.push(
      this.client.on("notification", (e) => this.notify(e.notification)),
      this.client.on("clear", (e) => this.clear(e.tag))
    );
  }
  detach() {
    for (const off of this.unsubscribe.splice(0))
      off();
  }
  async notify(n) {
    const data = n.data;
    const tap = tapTarget(data.url);
    const options = {
      title: n.title ?? "Home Assistant",
      userInfo: { lanpush_seq: n.seq, ...typeof data.tag === "string" ? { tag: data.tag } : {} },
      tapAction: { type: "openURL", url: tap ? tap.href : Script.createRunURLScheme(Script.name) }
    };
    if (n.message !== void 0)
      options.body = n.message;
    if (typeof data.group === "string")
      options.threadIdentifier = data.group;
    if (data.silent === true)
      options.silent = true;
    try {
      if (!await Notification.schedule(options))
        this.delivered = false;
    } catch {
      this.delivered = false;
    }
  }
  async clear(tag) {
    try {
      const delivered = await Notification.getAllDeliveredsOfCurrentScript();
      const ids = delivered.filter((d) => d.request.content.userInfo?.tag === tag).map((d) => d.request.identifier);
      if (ids.length > 0)
        await Notification.removeDelivereds(ids);
    } catch {
    }
  }
};

// src/mirror.ts
import { LiveActivity } from "scripting";

// src/activityIds.ts
var KEY = "lanpush.liveActivities";
var ActivityIds = class {
  constructor() {
    const stored = Storage.get(KEY);
    this.byTag = stored && typeof stored === "object" ? { ...stored } : {};
  }
  get entries() {
    return Object.entries(this.byTag);
  }
  get(tag) {
    return this.byTag[tag];
  }
  set(tag, entry) {
    this.byTag[tag] = entry;
    Storage.set(KEY, this.byTag);
  }
  delete(tag, id) {
    const entry = this.byTag[tag];
    if (!entry || id !== void 0 && entry.id !== id)
      return;
    delete this.byTag[tag];
    Storage.set(KEY, this.byTag);
  }
};

// src/contentState.ts
var BUDGET = 3584;
var DRAWN = [
  "message",
  "title",
  "critical_text",
  "progress",
  "progress_max",
  "chronometer",
  "countdown_end",
  "chronometer_start",
  "icon",
  "color",
  "background_color",
  "text_color",
  "progress_bar_color",
  "progress_bar_direction",
  "url"
];
var VALUE = ["value", "text_color", "formatter"];
var ICON = ["name", "rendering_mode", "primary_color", "secondary_color", "tertiary_color", "color_rendering"];
var SEGMENT = ["value", "fill_color", "track_color", "track_fill", "label"];
var COLUMN = { header: null, value: VALUE, footer: null };
var TEMPLATE = {
  template: null,
  icon: ICON,
  tap_url: null,
  header_left: VALUE,
  header_right: VALUE,
  footer_left: VALUE,
  footer_right: VALUE,
  compact_value: VALUE,
  progress: { style: null, value: null, color: null, display: null, segments: SEGMENT },
  primary_column: null,
  left_column: COLUMN,
  right_column: COLUMN,
  state: null,
  remaining_time: null
};
function pick(value, shape) {
  if (shape === null)
    return value;
  if (Array.isArray(value))
    return value.map((v) => pick(v, shape));
  if (typeof value !== "object" || value === null)
    return Array.isArray(shape) ? value : void 0;
  const out = {};
  const keys = Array.isArray(shape) ? shape : Object.keys(shape);
  for (const k of keys) {
    if (value[k] === void 0)
      continue;
    const sub = Array.isArray(shape) ? null : shape[k];
    const v = pick(value[k], sub);
    if (v !== void 0)
      out[k] = v;
  }
  return out;
}
function utf8Length(text) {
  let n = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0);
    n += c < 128 ? 1 : c < 2048 ? 2 : c < 65536 ? 3 : 4;
  }
  return n;
}
function strings(value, path, out) {
  if (Array.isArray(value))
    value.forEach((v, i) => typeof v === "string" ? out.push({ path: `${path}[${i}]`, holder: value, key: i }) : strings(v, `${path}[${i}]`, out));
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "string")
        out.push({ path: `${path}.${k}`, holder: value, key: k });
      else
        strings(v, `${path}.${k}`, out);
    }
  }
}
function buildContent(a, nowMs) {
  const state = pick(a.state, DRAWN.reduce((o, k) => ({ ...o, [k]: null }), {}));
  if (a.state.template && typeof a.state.template === "object")
    state.template = pick(a.state.template, TEMPLATE);
  const content = { tag: a.tag, title: titleOf(a), state, phase: a.phase };
  const t = a.state.template;
  if (t && t.template === "generic" && typeof t.remaining_time === "number")
    content.remaining_until = nowMs + t.remaining_time * 1e3;
  const cut = /* @__PURE__ */ new Set();
  for (let size = utf8Length(JSON.stringify(content)); size > BUDGET; ) {
    const places = [];
    strings(content, "content", places);
    const cuttable = places.filter((p) => !/\.(tag|template|icon|name|color|.*_color|url|tap_url|formatter|style|display|rendering_mode|color_rendering|progress_bar_direction|primary_column|track_fill)$/.test(p.path));
    const message = cuttable.find((p) => p.path === "content.state.message" && String(p.holder[p.key]).length > 1);
    const longest = message ?? cuttable.sort((x, y) => String(y.holder[y.key]).length - String(x.holder[x.key]).length)[0];
    const text = longest ? String(longest.holder[longest.key]) : "";
    if (!longest || text.length <= 1)
      break;
    const chars = [...text];
    let keep = chars.length;
    for (let saved = 0; keep > 0 && saved < size - BUDGET + 3; )
      saved += utf8Length(chars[--keep]);
    longest.holder[longest.key] = chars.slice(0, keep).join("") + "…";
    cut.add(longest.path.replace(/^content\./, ""));
    size = utf8Length(JSON.stringify(content));
  }
  return { content, cut: [...cut] };
}

// src/mirror.ts
var Mirror = class {
  constructor(client, create, name, changed, now = () => Date.now()) {
    this.client = client;
    this.create = create;
    this.name = name;
    this.changed = changed;
    this.now = now;
    this.mirrored = /* @__PURE__ */ new Map();
    this.unsubscribe = [];
    this.ids = new ActivityIds();
    /** Tags whose start iOS refused, and tags whose content was cut to fit, for the page. */
    this.refused = /* @__PURE__ */ new Set();
    this.cut = /* @__PURE__ */ new Map();
    this.enabled = null;
    this.onEnabled = (enabled) => void this.enabledChanged(enabled);
    this.lastContent = /* @__PURE__ */ new Map();
  }
  /** Finds the Live Activities a previous run left on the Lock Screen, then follows the client. */
  async attach() {
    this.enabled = await LiveActivity.areActivitiesEnabled();
    LiveActivity.addActivitiesEnabledListener(this.onEnabled);
    await this.reattach();
    const c = this.client;
    this.unsubscribe.push(
      () => LiveActivity.removeActivitiesEnabledListener(this.onEnabled),
      c.on("activity", async (e) => {
        if (e.current && e.current.phase !== "ended")
          await this.show(e.current, e.cause, e.alert);
      }),
      c.on("ended", (e) => this.end(e.activity)),
      c.on("dismissed", (e) => this.dismiss(e.tag, e.activity)),
      c.on("synced", () => this.reconcile())
    );
  }
  /** Live Activities currently shown, by tag. */
  get tags() {
    return [...this.mirrored].filter(([, m]) => m.activity !== null).map(([tag]) => tag);
  }
  /** Stops following the client; the Live Activities stay (a restart of the client finds them again). */
  detach() {
    for (const off of this.unsubscribe.splice(0))
      off();
  }
  /** The user stops the script: every Live Activity ends and is dismissed, so nothing frozen stays behind. */
  async endAll() {
    this.detach();
    for (const [tag, m] of [...this.mirrored])
      await this.finish(tag, m, 0, this.lastContent.get(tag));
    for (const [tag, stored] of this.ids.entries) {
      const orphan = await LiveActivity.from(stored.id, this.name);
      if (orphan)
        await orphan.end({ tag, title: "", state: { message: "" }, phase: "ended" }, { dismissTimeInterval: 0 });
      this.ids.delete(tag);
    }
  }
  async reattach() {
    const running = new Set(await LiveActivity.getAllActivitiesIds());
    for (const [tag, stored] of this.ids.entries) {
      const activity = running.has(stored.id) ? await LiveActivity.from(stored.id, this.name) : null;
      const state = activity ? await activity.getActivityState() : null;
      if (!activity || state === null || state === "dismissed") {
        this.ids.delete(tag);
        continue;
      }
      this.track(tag, { activity, startedAt: stored.started_at, ended: state === "ended", dismissing: false, stale: true, listener: () => {
      } });
    }
  }
  /** After `synced`: every held activity shown, every Live Activity found again brought up to date, strays ended. */
  async reconcile() {
    const held = this.client.state.activities;
    for (const [tag, m] of [...this.mirrored]) {
      const a = held[tag];
      if (!a || a.attributes.started_at !== m.startedAt)
        await this.finish(tag, m, 0, this.lastContent.get(tag));
    }
    for (const a of Object.values(held)) {
      const m = this.mirrored.get(a.tag);
      if (a.phase === "ended") {
        if (m && m.stale)
          await this.end(a);
        continue;
      }
      if (!m || !m.activity || m.stale)
        await this.show(a, "sync");
    }
    this.changed();
  }
  content(a) {
    const built = buildContent(a, this.now());
    if (built.cut.length > 0)
      this.cut.set(a.tag, built.cut);
    else
      this.cut.delete(a.tag);
    this.lastContent.set(a.tag, built.content);
    return built.content;
  }
  /**
   * lanpush's stale date when the update has one (the app takes milliseconds); else the iOS companion app's own
   * rule (LiveActivityRegistry.swift `computeStaleDate`): a running timer is stale 2 s after its end, anything else
   * 30 minutes after its last update.
   */
  options(a) {
    const o = { staleDate: a.stale_date !== void 0 ? a.stale_date * 1e3 : appStaleDate(a.state, this.now()) };
    if (a.relevance_score !== void 0)
      o.relevanceScore = a.relevance_score;
    return o;
  }
  track(tag, m) {
    m.listener = (state) => this.systemState(tag, m, state);
    m.activity?.addUpdateListener(m.listener);
    this.mirrored.set(tag, m);
  }
  async show(a, cause, alert) {
    let m = this.mirrored.get(a.tag);
    if (m && (cause === "start" || m.startedAt !== a.attributes.started_at)) {
      await this.finish(a.tag, m, 0, this.lastContent.get(a.tag));
      m = void 0;
    }
    if (!m) {
      m = { activity: null, startedAt: a.attributes.started_at, ended: false, dismissing: false, stale: false, listener: () => {
      } };
      this.track(a.tag, m);
    }
    if (!m.activity)
      return this.start(a, m);
    if (m.ended)
      return;
    if (cause === "lifecycle" && a.phase === "stale" && !m.stale)
      return;
    const options = this.options(a);
    if (alert && (alert.title || alert.body))
      options.alert = { title: alert.title ?? "", body: alert.body ?? "" };
    m.stale = false;
    await m.activity.update(this.content(a), options);
  }
  async start(a, m) {
    if (this.enabled === false) {
      this.refused.add(a.tag);
      this.changed();
      return;
    }
    const activity = this.create();
    const started = await activity.start(this.content(a), this.options(a));
    if (this.mirrored.get(a.tag) !== m)
      return;
    if (!started) {
      this.refused.add(a.tag);
      this.changed();
      return;
    }
    this.refused.delete(a.tag);
    m.activity = activity;
    activity.addUpdateListener(m.listener);
    if (activity.activityId !== void 0)
      this.ids.set(a.tag, { id: activity.activityId, started_at: a.attributes.started_at });
    this.changed();
  }
  async enabledChanged(enabled) {
    this.enabled = enabled;
    this.changed();
    if (!enabled)
      return;
    for (const tag of [...this.refused]) {
      const a = this.client.state.activities[tag];
      if (a && a.phase !== "ended")
        await this.show(a, "retry");
    }
  }
  async end(a) {
    let m = this.mirrored.get(a.tag);
    if (!m || !m.activity) {
      await this.show({ ...a, phase: "active" }, "start");
      m = this.mirrored.get(a.tag);
      if (!m || !m.activity)
        return;
    }
    const remaining = a.dismissal_date === void 0 ? void 0 : Math.max(0, Math.round(a.dismissal_date - this.now() / 1e3));
    m.ended = true;
    m.stale = false;
    if (remaining === 0)
      m.dismissing = true;
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
    await this.finish(tag, m, 0, this.content(last));
  }
  async finish(tag, m, dismissTimeInterval, content) {
    m.dismissing = true;
    if (m.activity)
      await m.activity.end(content ?? { tag, title: "", state: { message: "" }, phase: "ended" }, { dismissTimeInterval });
    this.forget(tag, m);
  }
  forget(tag, m) {
    m.activity?.removeUpdateListener(m.listener);
    if (this.mirrored.get(tag) !== m)
      return;
    this.mirrored.delete(tag);
    this.refused.delete(tag);
    this.cut.delete(tag);
    this.ids.delete(tag, m.activity?.activityId);
    this.changed();
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
function readPairing(input, given = {}) {
  const text = input.trim();
  if (text.includes("://")) {
    const read = pairingURL(text);
    if (typeof read === "string")
      throw new PairingError(read, null);
    return read;
  }
  if (!text)
    throw new PairingError("no pairing code: scan or paste the pairing URL, or type the short code", null);
  if (!given.address)
    throw new PairingError("a short code needs the gateway's address", null);
  const fingerprint2 = given.fingerprint ? hexFingerprint(given.fingerprint) : null;
  if (given.fingerprint && fingerprint2 === null) {
    throw new PairingError(`not a SHA-256 fingerprint (64 hex digits): ${given.fingerprint}`, null);
  }
  return { addresses: [hostPort(given.address)], code: text, fingerprint: fingerprint2 };
}
function hexFingerprint(fingerprint2) {
  const fp = fingerprint2.replace(/[\s:]/g, "").toLowerCase();
  return /^[0-9a-f]{64}$/.test(fp) ? fp : null;
}
function pairingURL(text) {
  const m = /^lanpush:\/\/([^/?#]*)\/pair\?([^#]*)$/i.exec(text);
  if (!m)
    return `not a pairing URL (lanpush://HOST:PORT/pair?code=…): ${text}`;
  if (!m[1])
    return "the pairing URL names no address";
  const params = m[2].split("&").filter((p) => p !== "").map((p) => {
    const i = p.indexOf("=");
    const decode = (s) => decodeURIComponent(s.replace(/\+/g, " "));
    return i < 0 ? [decode(p), ""] : [decode(p.slice(0, i)), decode(p.slice(i + 1))];
  });
  const get = (name) => params.find(([k]) => k === name)?.[1] ?? null;
  const code = get("code");
  if (!code)
    return "the pairing URL has no code";
  const fp = get("fp");
  const fingerprint2 = fp ? hexFingerprint(fp) : null;
  if (fp && fingerprint2 === null)
    return `the pairing URL's fp is not a SHA-256 fingerprint (64 hex digits): ${fp}`;
  const alternatives = params.filter(([k]) => k === "alt").flatMap(([, v]) => v.split(/\s+/));
  const addresses = [.../* @__PURE__ */ new Set([m[1], ...alternatives.filter((a) => a !== "")])];
  return { addresses, code, fingerprint: fingerprint2 };
}
async function redeemPairing(input, options) {
  const { addresses, code, fingerprint: fingerprint2 } = readPairing(input, options);
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
        fingerprint: typeof body.fingerprint === "string" ? body.fingerprint : fingerprint2
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
  const legacy = Storage.get(TOKEN_KEY);
  if (legacy !== null) {
    if (!Keychain.contains(TOKEN_KEY) && legacy !== "")
      Keychain.set(TOKEN_KEY, legacy);
    Storage.remove(TOKEN_KEY);
  }
  return { url: Storage.get(URL_KEY) ?? "", token: Keychain.get(TOKEN_KEY) ?? "" };
}
function saveSettings(settings) {
  Storage.set(URL_KEY, settings.url.trim());
  const token = settings.token.trim();
  if (token === "")
    Keychain.remove(TOKEN_KEY);
  else
    Keychain.set(TOKEN_KEY, token);
}
function maskedToken(token) {
  if (token === "")
    return "none";
  return `•••••• ${token.length > 12 ? token.slice(-4) : ""}`.trim();
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
var PHONE_KEEPALIVE = 120;
function fingerprint(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++)
    h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h.toString(16).padStart(8, "0");
}
var App = class {
  constructor(settings) {
    this.settings = settings;
    this.client = null;
    this.mirror = null;
    this.notes = null;
    this.listeners = /* @__PURE__ */ new Set();
    this.status = "not configured";
    this.detail = "";
    this.keeper = "not requested";
    /** The last pairing's outcome, for the page. */
    this.pairing = "";
    this.draft = { url: settings.url, token: "" };
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
    return this.notes?.delivered ?? true;
  }
  /** The gateway's ping interval granted for this session (seconds), or null (not connected, or an older gateway). */
  get keepalive() {
    return this.client?.keepalive ?? null;
  }
  get activitiesEnabled() {
    return this.mirror?.enabled ?? null;
  }
  /** Tags whose Live Activity iOS refused to start (tried again on their next update). */
  get refused() {
    return this.mirror ? [...this.mirror.refused] : [];
  }
  /** Tags whose content was shortened to fit ActivityKit's size limit, with the fields cut. */
  get cut() {
    return this.mirror ? [...this.mirror.cut] : [];
  }
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  changed() {
    for (const listener of [...this.listeners])
      listener();
  }
  /** Connects with the current settings and asks iOS to keep the script running in the background. */
  async start() {
    if (!this.configured)
      return;
    const client = new LanpushClient({
      url: streamURL(this.settings.url),
      token: this.settings.token,
      store: new ScriptingStorageStore(),
      storeKey: `lanpush.state.${fingerprint(`${this.settings.url}
${this.settings.token}`)}`,
      createSocket: (url) => new ScriptingSocket(url),
      keepalive: PHONE_KEEPALIVE,
      // The app's own timers: they stop with the script.
      timers: { setTimeout: (callback, ms) => setTimeout(callback, ms), clearTimeout: (handle) => clearTimeout(handle) }
    });
    const mirror = new Mirror(client, LanpushActivity, ACTIVITY_NAME, () => this.changed());
    const notes = new LocalNotifications(client);
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
    this.notes = notes;
    await mirror.attach();
    notes.attach();
    client.start();
    await this.keepAlive();
  }
  /** New settings (typed, or from pairing): kept, the old device's Live Activities end, the client starts over. */
  async use(settings) {
    saveSettings(settings);
    this.settings = loadSettings();
    this.draft = { url: this.settings.url, token: "" };
    await this.end();
    await this.start();
  }
  /** Pairs from a pairing URL or a short code (with the address typed beside it), then connects as that device. */
  async pair(input) {
    this.pairing = "Pairing…";
    this.changed();
    try {
      const paired = await pairDevice(input, this.draft.url);
      this.pairing = "";
      await this.use(paired);
      return true;
    } catch (e) {
      this.pairing = pairingFailure(e);
      this.changed();
      return false;
    }
  }
  /** Stop: every Live Activity ends and is dismissed, the client disconnects, the background request is released. */
  async shutdown() {
    await this.end();
    this.status = "stopped";
    await BackgroundKeeper.stopKeepAlive();
    this.keeper = "not requested";
    this.changed();
  }
  /** The page came back (a resume): whether iOS still keeps the script running; asks again if it stopped. */
  async resumed() {
    if (this.keeper === "active" && !await BackgroundKeeper.isActive)
      this.keeper = "ended";
    if (this.keeper === "ended" && this.client)
      await this.keepAlive();
    this.changed();
  }
  async keepAlive() {
    this.keeper = await BackgroundKeeper.keepAlive() ? "active" : "refused";
    this.changed();
  }
  /** Whether this user has Scripting Pro, which `BackgroundKeeper` needs (the app's docs mark it Pro). */
  get pro() {
    return Script2.hasFullAccess();
  }
  async end() {
    const client = this.client;
    const mirror = this.mirror;
    this.client = null;
    this.mirror = null;
    this.notes?.detach();
    this.notes = null;
    if (mirror)
      await mirror.endAll();
    if (client)
      await client.stop();
    if (client)
      this.status = "offline";
    this.changed();
  }
};

// src/page.tsx
import { Button, List, Navigation, NavigationStack, SecureField, Section, Text, TextField, useEffect, useState } from "scripting";
var PING_TIMEOUT = 10;
function statusText(app) {
  switch (app.status) {
    case "live":
      return "Live";
    case "auth_rejected":
      return "Token rejected";
    case "connecting":
      return "Connecting…";
    case "offline":
      return "Offline, retrying";
    case "stopped":
      return "Stopped";
    default:
      return "Pair this phone, or enter the gateway and a device token";
  }
}
function keeperText(app) {
  switch (app.keeper) {
    case "active":
      return { text: "Running in the background: updates reach the Lock Screen while Scripting is closed", warn: false };
    case "ended":
      return { text: "iOS ended the background time: updates froze until Scripting came back; asked again", warn: true };
    case "refused":
      return {
        text: `${app.pro ? "iOS refused background time" : "Background time needs Scripting Pro"}: once you leave Scripting, the Live Activities freeze (timers keep running) until you open it again, and lanpush counts the phone gone`,
        warn: true
      };
    default:
      return null;
  }
}
function Page({ app, onStop }) {
  const [, redraw] = useState(0);
  const [code, setCode] = useState("");
  const dismiss = Navigation.useDismiss();
  useEffect(() => app.subscribe(() => redraw((n) => n + 1)), []);
  const status = statusText(app);
  const keeper = keeperText(app);
  const stop = async () => {
    await app.shutdown();
    onStop();
    dismiss();
  };
  const scan = async () => {
    const scanned = await QRCode.scan();
    if (scanned && await app.pair(scanned))
      setCode("");
  };
  const typedPair = async () => {
    if (await app.pair(code))
      setCode("");
  };
  const editDraft = (change) => {
    app.draft = { ...app.draft, ...change };
    redraw((n) => n + 1);
  };
  return /* @__PURE__ */ createElement(NavigationStack, null, /* @__PURE__ */ createElement(List, { navigationTitle: "lanpush" }, /* @__PURE__ */ createElement(Section, { title: "Status" }, /* @__PURE__ */ createElement(Text, null, app.detail ? `${status} (${app.detail})` : status), app.keepalive !== null ? /* @__PURE__ */ createElement(Text, { foregroundStyle: "secondaryLabel" }, `Keepalive ${app.keepalive} s: lanpush counts this phone gone about ${app.keepalive + PING_TIMEOUT} s after it goes silent`) : null, keeper ? /* @__PURE__ */ createElement(Text, { foregroundStyle: keeper.warn ? "systemOrange" : "secondaryLabel" }, keeper.text) : null, app.activitiesEnabled === false ? /* @__PURE__ */ createElement(Text, { foregroundStyle: "systemRed" }, "Live Activities are off for Scripting: turn them on in iOS Settings → Scripting → Live Activities") : null, app.refused.length > 0 ? /* @__PURE__ */ createElement(Text, { foregroundStyle: "systemOrange" }, `Not on the Lock Screen yet (iOS refused to start it; tried again on its next update): ${app.refused.join(", ")}`) : null, app.cut.map(([tag, fields]) => /* @__PURE__ */ createElement(Text, { key: `cut-${tag}`, foregroundStyle: "systemOrange" }, `${tag}: shortened to fit a Live Activity's 4 KB (${fields.join(", ")})`))), /* @__PURE__ */ createElement(Section, { title: "Live Activities" }, app.activities.length === 0 ? /* @__PURE__ */ createElement(Text, { foregroundStyle: "secondaryLabel" }, "None") : null, app.activities.map((a) => /* @__PURE__ */ createElement(Text, { key: a.tag }, `${titleOf(a)}${a.state.message ? ` · ${a.state.message}` : ""}${a.phase === "ended" ? " (ended)" : ""}`))), /* @__PURE__ */ createElement(Section, { title: app.notificationsDelivered ? "Notifications (also delivered)" : "Notifications" }, app.notifications.map((n) => /* @__PURE__ */ createElement(Text, { key: n.seq }, [n.title, n.message].filter((s) => s).join(": ")))), /* @__PURE__ */ createElement(Section, { title: "Pair" }, /* @__PURE__ */ createElement(Button, { title: "Scan the pairing QR code", systemImage: "qrcode.viewfinder", action: () => void scan() }), /* @__PURE__ */ createElement(TextField, { title: "Pairing URL or short code", prompt: "lanpush://… or ABCD-EFGH (with the URL below)", value: code, onChanged: setCode }), /* @__PURE__ */ createElement(Button, { title: "Pair", systemImage: "link", action: () => void typedPair() }), app.pairing ? /* @__PURE__ */ createElement(Text, null, app.pairing) : null), /* @__PURE__ */ createElement(Section, { title: "Gateway" }, /* @__PURE__ */ createElement(TextField, { title: "URL", prompt: "192.168.1.5:8765", value: app.draft.url, onChanged: (url) => editDraft({ url }) }), /* @__PURE__ */ createElement(SecureField, { title: "Device token", prompt: `saved: ${maskedToken(app.settings.token)}`, value: app.draft.token, onChanged: (token) => editDraft({ token }) }), /* @__PURE__ */ createElement(Button, { title: "Connect", systemImage: "bolt.horizontal", action: () => void app.use({ url: app.draft.url, token: app.draft.token || app.settings.token }) })), /* @__PURE__ */ createElement(Section, { title: "Stop" }, /* @__PURE__ */ createElement(Text, { foregroundStyle: "secondaryLabel" }, "Swipe this page down to keep lanpush running; Stop ends its Live Activities and the script."), /* @__PURE__ */ createElement(Button, { title: "Stop", systemImage: "stop.circle", role: "destructive", action: () => void stop() }))));
}

// src/index.tsx
async function main() {
  if (Script3.env !== "index")
    return;
  const app = new App(loadSettings());
  let stopped = false;
  let shown = false;
  const present = async () => {
    shown = true;
    await Navigation2.present({ element: /* @__PURE__ */ createElement(Page, { app, onStop: () => stopped = true }) });
    shown = false;
    if (stopped)
      Script3.exit();
  };
  if (Script3.supportsMinimization())
    Script3.enableMinimize(true);
  Script3.onResume((details) => {
    const pairing2 = pairingFromQuery(details.queryParameters);
    if (pairing2)
      void app.pair(pairing2);
    void app.resumed();
    if (!shown && !stopped)
      void present();
  });
  const pairing = pairingFromQuery(Script3.queryParameters);
  if (pairing)
    void app.pair(pairing);
  else if (app.configured)
    await app.start();
  await present();
}
void main();
