import type * as S from "scripting";

/**
 * A stand-in for the Scripting app under Node: the `scripting` module and the app's globals, exactly the
 * surface `scripting.d.ts` declares (the `typeof S.*` annotations make tsc hold it to that), recording every
 * call and rendering element trees so the tests can look at what a phone would show.
 */

type Node = S.VirtualNode;

/** A rendered element: built-in views only, function components expanded. */
export interface Rendered {
  type: string;
  props: { [key: string]: any };
  children: (Rendered | string)[];
}

export const calls: { api: string; args: any[] }[] = [];
function record(api: string, ...args: any[]): void {
  calls.push({ api, args });
}

// ---- Elements and rendering ----

const BUILTIN = Symbol("builtin");

function builtin<P>(name: string): (props: P) => Node {
  const f = ((props: P) => ({ isInternal: true, props, render: f })) as ((props: P) => Node) & { [BUILTIN]?: string };
  Object.defineProperty(f, "name", { value: name });
  f[BUILTIN] = name;
  return f;
}

function flatten(children: any[]): any[] {
  const out: any[] = [];
  for (const c of children) {
    if (Array.isArray(c)) out.push(...flatten(c));
    else if (c !== null && c !== undefined && c !== false && c !== true) out.push(c);
  }
  return out;
}

export function createElement(type: (props: any) => Node | null, props: any, ...children: any[]): Node {
  const all = { ...(props ?? {}) };
  if (children.length > 0) all.children = children.length === 1 ? children[0] : children;
  return { isInternal: (type as any)[BUILTIN] !== undefined, props: all, render: type };
}

export const Fragment = builtin<{ children?: any }>("Fragment");

/** Hook state of one render root, by component path. */
class Root {
  states = new Map<string, any[]>();
  effects = new Map<string, { deps: any[]; cleanup?: () => void }>();
  pendingEffects: (() => void)[] = [];
  dirty = false;
  tree: Rendered | null = null;
  constructor(readonly element: Node) {}
}

let current: { root: Root; path: string; index: number } | null = null;

export function useState<T>(initial: T | (() => T)): [T, (next: T | ((previous: T) => T)) => void] {
  const ctx = current;
  if (!ctx) throw new Error("useState outside of a component");
  const slot = ctx.index++;
  const states = ctx.root.states.get(ctx.path) ?? [];
  ctx.root.states.set(ctx.path, states);
  if (states.length <= slot) states.push(typeof initial === "function" ? (initial as () => T)() : initial);
  const root = ctx.root;
  const setter = (next: T | ((previous: T) => T)) => {
    states[slot] = typeof next === "function" ? (next as (p: T) => T)(states[slot]) : next;
    root.dirty = true;
  };
  return [states[slot], setter];
}

export function useEffect(setup: () => (() => void) | void, deps: any[]): void {
  const ctx = current;
  if (!ctx) throw new Error("useEffect outside of a component");
  const key = `${ctx.path}#e${ctx.index++}`;
  const previous = ctx.root.effects.get(key);
  if (previous && previous.deps.length === deps.length && previous.deps.every((d, i) => d === deps[i])) return;
  const root = ctx.root;
  root.pendingEffects.push(() => {
    previous?.cleanup?.();
    const cleanup = setup();
    root.effects.set(key, { deps, cleanup: typeof cleanup === "function" ? cleanup : undefined });
  });
}

function expand(root: Root, node: any, path: string): (Rendered | string)[] {
  if (node === null || node === undefined || node === false || node === true) return [];
  if (Array.isArray(node)) return node.flatMap((n, i) => expand(root, n, `${path}.${i}`));
  if (typeof node === "string" || typeof node === "number") return [String(node)];
  const render = node.render as ((props: any) => any) & { [BUILTIN]?: string };
  if (node.isInternal) {
    const props: { [key: string]: any } = {};
    for (const [k, v] of Object.entries(node.props ?? {})) {
      if (k === "children") continue;
      // Views passed as props (Live Activity regions, section headers) are rendered too.
      props[k] = v && typeof v === "object" && "render" in (v as object) ? expand(root, v, `${path}.${k}`)[0] ?? null : v;
    }
    const children = flatten([node.props?.children]).flatMap((c, i) => expand(root, c, `${path}.${i}`));
    return [{ type: render[BUILTIN]!, props, children }];
  }
  const saved = current;
  current = { root, path: `${path}/${render.name}`, index: 0 };
  try {
    return expand(root, render(node.props ?? {}), `${path}/${render.name}`);
  } finally {
    current = saved;
  }
}

/** Renders an element tree once (no hooks outside a root). */
export function render(element: Node): Rendered {
  return renderRoot(new Root(element));
}

function renderRoot(root: Root): Rendered {
  root.dirty = false;
  root.tree = expand(root, root.element, "")[0] as Rendered;
  const effects = root.pendingEffects.splice(0);
  for (const effect of effects) effect();
  return root.tree;
}

// ---- Views ----

export const VStack: typeof S.VStack = builtin("VStack");
export const HStack: typeof S.HStack = builtin("HStack");
export const ZStack: typeof S.ZStack = builtin("ZStack");
export const Spacer: typeof S.Spacer = builtin("Spacer");
export const Text: typeof S.Text = builtin("Text");
export const Image: typeof S.Image = builtin("Image");
export const ProgressView: typeof S.ProgressView = builtin("ProgressView");
export const DateLabel: typeof S.DateLabel = builtin("DateLabel");
export const RoundedRectangle: typeof S.RoundedRectangle = builtin("RoundedRectangle");
export const List: typeof S.List = builtin("List");
export const Section: typeof S.Section = builtin("Section");
export const NavigationStack: typeof S.NavigationStack = builtin("NavigationStack");
export const TextField: typeof S.TextField = builtin("TextField");
export const Button: typeof S.Button = builtin("Button");
export const LiveActivityUI: typeof S.LiveActivityUI = builtin("LiveActivityUI");
export const LiveActivityUIExpandedLeading: typeof S.LiveActivityUIExpandedLeading = builtin("LiveActivityUIExpandedLeading");
export const LiveActivityUIExpandedTrailing: typeof S.LiveActivityUIExpandedTrailing = builtin("LiveActivityUIExpandedTrailing");
export const LiveActivityUIExpandedCenter: typeof S.LiveActivityUIExpandedCenter = builtin("LiveActivityUIExpandedCenter");
export const LiveActivityUIExpandedBottom: typeof S.LiveActivityUIExpandedBottom = builtin("LiveActivityUIExpandedBottom");

// ---- Navigation and Script ----

let page: { root: Root; close: () => void } | null = null;

export const Navigation: typeof S.Navigation = {
  present<T>(options: Node | { element: Node }): Promise<T> {
    const element = "element" in options ? options.element : options;
    record("Navigation.present");
    return new Promise<T>((resolve) => {
      page = { root: new Root(element), close: () => resolve(undefined as unknown as T) };
      renderRoot(page.root);
    });
  },
};

/** The page the script presented, rendered with its current state (re-rendered after state changes). */
export function currentPage(): Rendered | null {
  if (!page) return null;
  return renderRoot(page.root);
}

/** The user closes the page. */
export function closePage(): void {
  const p = page;
  page = null;
  p?.close();
}

export const Script: typeof S.Script = {
  env: "index",
  name: "lanpush",
  exit(result?: any) {
    record("Script.exit", result);
  },
};

// ---- Notifications ----

export const delivered: S.NotificationInfo[] = [];
let notificationId = 0;

export const Notification: typeof S.Notification = {
  async schedule(options) {
    record("Notification.schedule", options);
    delivered.push({
      date: new Date(),
      request: {
        identifier: `n${++notificationId}`,
        content: {
          title: options.title, subtitle: options.subtitle ?? "", body: options.body ?? "", userInfo: options.userInfo ?? {},
          threadIdentifier: options.threadIdentifier ?? "",
        },
      },
    });
    return true;
  },
  async getAllDeliveredsOfCurrentScript() {
    record("Notification.getAllDeliveredsOfCurrentScript");
    return [...delivered];
  },
  async removeDelivereds(identifiers) {
    record("Notification.removeDelivereds", identifiers);
    for (const id of identifiers) {
      const i = delivered.findIndex((d) => d.request.identifier === id);
      if (i >= 0) delivered.splice(i, 1);
    }
  },
};

// ---- Live Activities ----

export class FakeLiveActivity<T> {
  static builders = new Map<string, S.LiveActivityUIBuilder<any>>();
  static instances: FakeLiveActivity<any>[] = [];
  readonly calls: { method: "start" | "update" | "end"; contentState: any; options?: any }[] = [];
  private readonly listeners = new Set<(state: S.LiveActivityState) => void>();
  private state: S.LiveActivityState | null = null;
  private id: string | undefined;

  static register<T>(name: string, builder: S.LiveActivityUIBuilder<T>): () => FakeLiveActivity<T> {
    record("LiveActivity.register", name);
    FakeLiveActivity.builders.set(name, builder);
    return () => {
      const a = new FakeLiveActivity<T>(name);
      FakeLiveActivity.instances.push(a);
      return a;
    };
  }

  constructor(readonly name: string) {}

  get activityId(): string | undefined {
    return this.id;
  }
  get started(): boolean {
    return this.id !== undefined;
  }

  async start(contentState: T, options?: S.LiveActivityOptions): Promise<boolean> {
    this.calls.push({ method: "start", contentState: structuredJSON(contentState), options });
    this.id = `activity-${FakeLiveActivity.instances.indexOf(this) + 1}`;
    this.state = "active";
    return true;
  }

  async update(contentState: T, options?: S.LiveActivityUpdateOptions): Promise<boolean> {
    this.calls.push({ method: "update", contentState: structuredJSON(contentState), options });
    return this.state === "active" || this.state === "stale";
  }

  async end(contentState: T, options?: S.LiveActivityEndOptions): Promise<boolean> {
    this.calls.push({ method: "end", contentState: structuredJSON(contentState), options });
    const immediate = options?.dismissTimeInterval !== undefined && options.dismissTimeInterval <= 0;
    this.setState(immediate ? "dismissed" : "ended");
    return true;
  }

  async getActivityState(): Promise<S.LiveActivityState | null> {
    return this.state;
  }

  addUpdateListener(listener: (state: S.LiveActivityState) => void): void {
    this.listeners.add(listener);
  }

  removeUpdateListener(listener: (state: S.LiveActivityState) => void): void {
    this.listeners.delete(listener);
  }

  static async areActivitiesEnabled(): Promise<boolean> {
    return true;
  }

  static async endAllActivities(options?: S.LiveActivityEndOptions): Promise<boolean> {
    record("LiveActivity.endAllActivities", options);
    return true;
  }

  /** The user swipes the activity away on the Lock Screen. */
  userDismiss(): void {
    this.setState("dismissed");
  }

  private setState(state: S.LiveActivityState): void {
    this.state = state;
    // The system reports state changes asynchronously.
    setTimeout(() => {
      for (const l of [...this.listeners]) l(state);
    }, 0);
  }

  /** What the Live Activity shows now: the registered builder run on the last content state. */
  rendered(): Rendered {
    const last = this.calls[this.calls.length - 1];
    return render(FakeLiveActivity.builders.get(this.name)!(last.contentState));
  }
}

export const LiveActivity: typeof S.LiveActivity = FakeLiveActivity as unknown as typeof S.LiveActivity;
const _typeCheck: typeof S.LiveActivity.register = FakeLiveActivity.register;
void _typeCheck;

function structuredJSON<T>(value: T): T {
  // ActivityKit serializes the content state: anything that does not survive JSON would be lost on a phone.
  return JSON.parse(JSON.stringify(value));
}

// ---- Network: the app's fetch over Node's ----

/** Node's fetch behind the app's signature (`timeout` in seconds); every request is recorded. */
export const fetch: typeof S.fetch = async (url, init) => {
  record("fetch", url, init);
  const signal = init?.timeout ? (globalThis as any).AbortSignal.timeout(init.timeout * 1000) : undefined;
  const r = await (globalThis as any).fetch(url, { method: init?.method, headers: init?.headers, body: init?.body, signal });
  return { status: r.status, json: () => r.json() };
};

// ---- Globals: Storage, BackgroundKeeper, QRCode, WebSocket, createElement ----

/** What the next `QRCode.scan()` reads (null: the user cancelled). */
export const scans: (string | null)[] = [];

const QRCodeFake: typeof QRCode = {
  async scan() {
    record("QRCode.scan");
    return scans.shift() ?? null;
  },
};

export const storage = new Map<string, string>();

const StorageFake: typeof Storage = {
  set<T>(key: string, value: T): boolean {
    storage.set(key, JSON.stringify(value));
    return true;
  },
  get<T>(key: string): T | null {
    const v = storage.get(key);
    return v === undefined ? null : (JSON.parse(v) as T);
  },
  remove(key: string): void {
    storage.delete(key);
  },
  contains(key: string): boolean {
    return storage.has(key);
  },
};

const BackgroundKeeperFake: typeof BackgroundKeeper = {
  isActive: Promise.resolve(false),
  async keepAlive() {
    record("BackgroundKeeper.keepAlive");
    return true;
  },
  async stopKeepAlive() {
    record("BackgroundKeeper.stopKeepAlive");
  },
};

/** The app's WebSocket (reason-only close, text messages as strings) over Node's WHATWG one. */
class ScriptingWebSocketFake {
  static opened: ScriptingWebSocketFake[] = [];
  onopen?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: string | Data) => void;
  onclose?: (reason?: string) => void;
  /** What the script sent, and the texts it was handed. */
  readonly sent: string[] = [];
  readonly delivered: string[] = [];
  private readonly ws: any;

  constructor(readonly url: string) {
    ScriptingWebSocketFake.opened.push(this);
    const NodeWebSocket = (globalThis as any).NodeWebSocket;
    this.ws = new NodeWebSocket(url);
    this.ws.onopen = () => this.onopen?.();
    this.ws.onmessage = (e: { data: unknown }) => {
      const text = String(e.data);
      this.delivered.push(text);
      this.onmessage?.(text);
    };
    this.ws.onclose = (e: { reason: string }) => this.onclose?.(e.reason);
    this.ws.onerror = () => this.onerror?.(new Error("WebSocket error"));
  }

  send(message: string | Data): void {
    if (typeof message === "string") this.sent.push(message);
    this.ws.send(message);
  }

  close(code?: 1000 | 1001 | 1002 | 1003, reason?: string): void {
    this.ws.close(code, reason);
  }
}

const _socketCheck: typeof WebSocket = ScriptingWebSocketFake;
void _socketCheck;

/** Puts the app's globals in place (Node's own WebSocket is kept as `NodeWebSocket` for the fake to use). */
export function install(): void {
  const g = globalThis as any;
  if (!g.NodeWebSocket) g.NodeWebSocket = g.WebSocket;
  g.WebSocket = ScriptingWebSocketFake;
  g.Storage = StorageFake;
  g.BackgroundKeeper = BackgroundKeeperFake;
  g.QRCode = QRCodeFake;
  g.createElement = createElement;
  g.Fragment = Fragment;
}

/** Forgets everything recorded (between tests). */
export function reset(): void {
  calls.length = 0;
  delivered.length = 0;
  storage.clear();
  scans.length = 0;
  FakeLiveActivity.instances.length = 0;
  page = null;
}

export const sockets = ScriptingWebSocketFake.opened;
