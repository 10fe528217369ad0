import type * as S from "scripting";
import { forgetInstances } from "./liveActivity.js";
import { record } from "./record.js";
import { satisfies } from "./satisfies.js";
import { Root, renderingRoot, renderRoot, Rendered, unmount } from "./render.js";

/**
 * The Scripting app's script runtime: each run of the script is an instance with its own timers and sockets (the
 * hooks give the bundle its run's `setTimeout`, `clearTimeout` and `WebSocket`), `Script` and `Navigation` as
 * `scripting.d.ts` declares them (`satisfies`), and what the app's docs say happens around an instance ("Script /
 * Minimize and resume"): swiping the first page down minimizes the script when it enabled that (the page's
 * `present` stays pending) and closes the page otherwise; a run URL or a tap in the running scripts list resumes a
 * live instance (`onResume`) instead of running the entry file again; `kill` is iOS ending the app — the instance
 * stops mid-flight, its sockets drop without a word, its timers never fire, nothing of it is told.
 */
export interface Run {
  id: number;
  name: string;
  query: Record<string, any>;
  dead: boolean;
  minimizeEnabled: boolean;
  resume: Set<(details: S.Script.ResumeEventDetails) => void>;
  timers: Map<number, ReturnType<typeof globalThis.setTimeout>>;
  sockets: Set<ScriptingWebSocketFake>;
}

export const app = {
  /** Scripting's multiple windows mode (or an extension) makes minimizing unavailable. */
  minimization: true,
  /** Scripting Pro: `BackgroundKeeper` needs it. */
  pro: true,
};

let runs: Run[] = [];
let active: Run | null = null;
let nextRun = 1;
let nextTimer = 1;
/** Starts a new run of the script (the test imports the bundle): set by the test. */
let launcher: ((query: Record<string, any>) => Promise<void>) | null = null;
/** URLs opened that are not the app's own (a notification's `https://` link, `homeassistant://`). */
export const opened: string[] = [];

export function setLauncher(launch: (query: Record<string, any>) => Promise<void>): void {
  launcher = launch;
}

/** Scripting runs the script anew (a tap on a notification without a tap action). */
export async function launch(query: Record<string, any>): Promise<void> {
  await launcher!(query);
}

/** A new instance of the script; the test then imports the bundle, which asks for this run's context. */
export function beginRun(query: Record<string, any> = {}, name = "lanpush"): number {
  const run: Run = { id: nextRun++, name, query, dead: false, minimizeEnabled: false, resume: new Set(), timers: new Map(), sockets: new Set() };
  runs.push(run);
  active = run;
  return run.id;
}

/** The instance currently alive, if any. */
export function activeRun(): Run | null {
  return active && !active.dead ? active : null;
}

function end(run: Run): void {
  run.dead = true;
  for (const t of run.timers.values()) globalThis.clearTimeout(t);
  run.timers.clear();
  for (const s of run.sockets) s.drop();
  run.resume.clear();
  if (page?.run === run) {
    unmount(page.root);
    page = null;
  }
  if (active === run) active = null;
}

/** iOS ends the app: the instance stops where it is; its Live Activities stay on the Lock Screen. */
export function kill(): void {
  if (active) end(active);
  forgetInstances();
}

export function resetRuntime(): void {
  for (const r of runs) if (!r.dead) end(r);
  runs = [];
  active = null;
  page = null;
  opened.length = 0;
  app.minimization = true;
  app.pro = true;
}

/** The run's own `setTimeout`, `clearTimeout` and `WebSocket` (what the hooks hand the bundle). */
export function scriptContext(id: number) {
  const run = runs.find((r) => r.id === id)!;
  const setTimeoutInRun = (callback: () => void, timeout?: number): number => {
    if (run.dead) return 0;
    const handle = nextTimer++;
    run.timers.set(handle, globalThis.setTimeout(() => {
      run.timers.delete(handle);
      if (!run.dead) callback();
    }, timeout));
    return handle;
  };
  const clearTimeoutInRun = (handle: number): void => {
    const t = run.timers.get(handle);
    if (t !== undefined) globalThis.clearTimeout(t);
    run.timers.delete(handle);
  };
  class RunWebSocket extends ScriptingWebSocketFake {
    constructor(url: string) {
      super(url, run);
    }
  }
  return {
    setTimeout: satisfies<typeof setTimeout>()(setTimeoutInRun),
    clearTimeout: satisfies<typeof clearTimeout>()(clearTimeoutInRun),
    WebSocket: satisfies<typeof WebSocket>()(RunWebSocket),
  };
}

// ---- The app's WebSocket ----

/** The app's WebSocket (reason-only close, text messages as strings) over Node's WHATWG one. */
export class ScriptingWebSocketFake {
  static opened: ScriptingWebSocketFake[] = [];
  onopen?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: string | Data) => void;
  onclose?: (reason?: string) => void;
  /** What the script sent, and the texts it was handed. */
  readonly sent: string[] = [];
  readonly delivered: string[] = [];
  private readonly ws: any;
  private dropped = false;

  constructor(readonly url: string, private readonly run?: Run) {
    ScriptingWebSocketFake.opened.push(this);
    run?.sockets.add(this);
    const NodeWebSocket = (globalThis as any).NodeWebSocket;
    this.ws = new NodeWebSocket(url);
    this.ws.onopen = () => !this.dropped && this.onopen?.();
    this.ws.onmessage = (e: { data: unknown }) => {
      if (this.dropped) return;
      const text = String(e.data);
      this.delivered.push(text);
      this.onmessage?.(text);
    };
    this.ws.onclose = (e: { reason: string }) => {
      this.run?.sockets.delete(this);
      if (!this.dropped) this.onclose?.(e.reason);
    };
    this.ws.onerror = () => !this.dropped && this.onerror?.(new Error("WebSocket error"));
  }

  send(message: string | Data): void {
    if (this.dropped) return;
    if (typeof message === "string") this.sent.push(message);
    this.ws.send(message);
  }

  close(code?: 1000 | 1001 | 1002 | 1003, reason?: string): void {
    this.ws.close(code, reason);
  }

  /** The app is gone: the connection goes with it, and nothing of the script hears of it. */
  drop(): void {
    this.dropped = true;
    try {
      this.ws.close();
    } catch {
      // already closed
    }
  }
}

// ---- Pages ----

interface Page {
  run: Run;
  root: Root;
  resolve: (result: any) => void;
  minimized: boolean;
}

let page: Page | null = null;

function close(p: Page, result?: any): void {
  if (page !== p) return;
  unmount(p.root);
  page = null;
  p.resolve(result);
}

export const Navigation = satisfies<typeof S.Navigation>()({
  present<T>(options: S.VirtualNode | { element: S.VirtualNode }): Promise<T> {
    const element = "element" in options ? options.element : options;
    record("Navigation.present");
    const run = active!;
    return new Promise<T>((resolve) => {
      page = { run, root: new Root(element), resolve, minimized: false };
      renderRoot(page.root);
    });
  },
  useDismiss(): (result?: any) => void {
    const root = renderingRoot();
    return (result?: any) => {
      if (page && page.root === root) close(page, result);
    };
  },
});

/** The page the script presented as it looks now (null while minimized or when none is shown). */
export function currentPage(): Rendered | null {
  if (!page || page.minimized) return null;
  return renderRoot(page.root);
}

export function pageState(): "shown" | "minimized" | "none" {
  return !page ? "none" : page.minimized ? "minimized" : "shown";
}

/** The user swipes the page down. */
export function swipeDown(): void {
  if (!page) return;
  if (page.run.minimizeEnabled && app.minimization) {
    record("minimized");
    page.minimized = true;
  } else {
    close(page);
  }
}

function resume(run: Run, details: Partial<S.Script.ResumeEventDetails>): void {
  const full: S.Script.ResumeEventDetails = {
    resumeFromMinimized: page?.run === run && page.minimized,
    widgetParameter: null, controlWidgetParameter: null, queryParameters: null, notificationInfo: null, ...details,
  };
  if (page?.run === run) page.minimized = false;
  for (const cb of [...run.resume]) cb(full);
}

/** The user taps the script in Scripting (its running scripts list, or its entry): a live one resumes. */
export async function openScript(): Promise<void> {
  const run = activeRun();
  if (run) resume(run, {});
  else await launch({});
}

/** `scripting://run/NAME?a=b` read as the app reads a URL: the query percent-decoded, `+` kept. */
export function parseRunURL(url: string): { name: string; query: Record<string, string> } | null {
  const m = /^scripting:\/\/run\/([^?#]*)(?:\?([^#]*))?$/.exec(url);
  if (!m) return null;
  const query: Record<string, string> = {};
  for (const part of (m[2] ?? "").split("&").filter((p) => p !== "")) {
    const i = part.indexOf("=");
    query[decodeURIComponent(i < 0 ? part : part.slice(0, i))] = i < 0 ? "" : decodeURIComponent(part.slice(i + 1));
  }
  return { name: decodeURIComponent(m[1]), query };
}

/** The system opens a URL (the Camera's QR code, a notification's tap action). */
export async function openURL(url: string): Promise<void> {
  record("openURL", url);
  const runURL = parseRunURL(url);
  if (!runURL) {
    opened.push(url);
    return;
  }
  const run = activeRun();
  if (run && run.name === runURL.name) resume(run, { queryParameters: runURL.query });
  else await launch(runURL.query);
}

export const Script = satisfies<typeof S.Script>()({
  env: "index",
  get name(): string {
    return active?.name ?? "lanpush";
  },
  get queryParameters(): Record<string, any> {
    return active?.query ?? {};
  },
  exit(result?: any): void {
    record("Script.exit", result);
    if (active) end(active);
  },
  createRunURLScheme(scriptName: string, queryParameters?: Record<string, string>): string {
    const query = Object.entries(queryParameters ?? {}).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
    return `scripting://run/${encodeURIComponent(scriptName)}${query ? `?${query}` : ""}`;
  },
  supportsMinimization(): boolean {
    return app.minimization;
  },
  enableMinimize(enabled = true): void {
    record("Script.enableMinimize", enabled);
    if (active) active.minimizeEnabled = enabled;
  },
  onResume(callback: (eventDetails: S.Script.ResumeEventDetails) => void): () => void {
    const run = active!;
    run.resume.add(callback);
    return () => run.resume.delete(callback);
  },
  hasFullAccess(): boolean {
    return app.pro;
  },
});
