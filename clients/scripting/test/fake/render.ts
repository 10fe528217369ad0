import type * as S from "scripting";
import { satisfies } from "./satisfies.js";

/**
 * The app's element model under Node: `createElement`, the hooks the script uses (`useState`, `useEffect`) and a
 * renderer that expands function components into the built-in views, so a test can read what a page or a Live
 * Activity shows. Each view is held to its declaration in `scripting.d.ts` with `satisfies`.
 */
type Node = S.VirtualNode;

/** A rendered element: built-in views only, function components expanded. */
export interface Rendered {
  type: string;
  props: { [key: string]: any };
  children: (Rendered | string)[];
}

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

/** Hook state of one render root (a presented page, a Live Activity), by component path. */
export class Root {
  states = new Map<string, any[]>();
  effects = new Map<string, { deps: any[]; cleanup?: () => void }>();
  pendingEffects: (() => void)[] = [];
  tree: Rendered | null = null;
  constructor(readonly element: Node) {}
}

let current: { root: Root; path: string; index: number } | null = null;

/** The root being rendered (the page a `Navigation.useDismiss` is called in). */
export function renderingRoot(): Root {
  if (!current) throw new Error("a hook outside of a component");
  return current.root;
}

export function useState<T>(initial: T | (() => T)): [T, (next: T | ((previous: T) => T)) => void] {
  const ctx = current;
  if (!ctx) throw new Error("useState outside of a component");
  const slot = ctx.index++;
  const states = ctx.root.states.get(ctx.path) ?? [];
  ctx.root.states.set(ctx.path, states);
  if (states.length <= slot) states.push(typeof initial === "function" ? (initial as () => T)() : initial);
  const setter = (next: T | ((previous: T) => T)) => {
    states[slot] = typeof next === "function" ? (next as (p: T) => T)(states[slot]) : next;
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

export function renderRoot(root: Root): Rendered {
  root.tree = expand(root, root.element, "")[0] as Rendered;
  const effects = root.pendingEffects.splice(0);
  for (const effect of effects) effect();
  return root.tree;
}

/** Runs the cleanups of a root's effects (its page was closed, or its script killed). */
export function unmount(root: Root): void {
  for (const e of root.effects.values()) e.cleanup?.();
  root.effects.clear();
}

// ---- Views ----

export const VStack = satisfies<typeof S.VStack>()(builtin("VStack"));
export const HStack = satisfies<typeof S.HStack>()(builtin("HStack"));
export const ZStack = satisfies<typeof S.ZStack>()(builtin("ZStack"));
export const Spacer = satisfies<typeof S.Spacer>()(builtin("Spacer"));
export const Text = satisfies<typeof S.Text>()(builtin("Text"));
export const Image = satisfies<typeof S.Image>()(builtin("Image"));
export const ProgressView = satisfies<typeof S.ProgressView>()(builtin("ProgressView"));
export const DateLabel = satisfies<typeof S.DateLabel>()(builtin("DateLabel"));
export const TimerIntervalLabel = satisfies<typeof S.TimerIntervalLabel>()(builtin("TimerIntervalLabel"));
export const RoundedRectangle = satisfies<typeof S.RoundedRectangle>()(builtin("RoundedRectangle"));
export const List = satisfies<typeof S.List>()(builtin("List"));
export const Section = satisfies<typeof S.Section>()(builtin("Section"));
export const NavigationStack = satisfies<typeof S.NavigationStack>()(builtin("NavigationStack"));
export const TextField = satisfies<typeof S.TextField>()(builtin("TextField"));
export const SecureField = satisfies<typeof S.SecureField>()(builtin("SecureField"));
export const Button = satisfies<typeof S.Button>()(builtin("Button"));
export const LiveActivityUI = satisfies<typeof S.LiveActivityUI>()(builtin("LiveActivityUI"));
export const LiveActivityUIExpandedLeading = satisfies<typeof S.LiveActivityUIExpandedLeading>()(builtin("LiveActivityUIExpandedLeading"));
export const LiveActivityUIExpandedTrailing = satisfies<typeof S.LiveActivityUIExpandedTrailing>()(builtin("LiveActivityUIExpandedTrailing"));
export const LiveActivityUIExpandedCenter = satisfies<typeof S.LiveActivityUIExpandedCenter>()(builtin("LiveActivityUIExpandedCenter"));
export const LiveActivityUIExpandedBottom = satisfies<typeof S.LiveActivityUIExpandedBottom>()(builtin("LiveActivityUIExpandedBottom"));
