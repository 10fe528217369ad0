/*
 * The part of the Scripting app's API (iOS, "Scripting" by thomfang) this script uses, copied from the app's
 * own published declarations and narrowed to what is used. Sources, each named again at the declarations:
 *
 *  [dts]   the app's declaration files as the app exports them into a script project (`dts/scripting.d.ts`,
 *          `dts/global.d.ts`), here as published in the public repository Honye/scripting-scripts (2026-08);
 *  [docs]  the app's documentation, public repository ScriptingApp/ScriptingApp.github.io, pages
 *          "LiveActivity", "WebScoket" (sic), "Storage", "BackgroundKeeper", "Notification", "Quick Start",
 *          "QRCode".
 *
 * Nothing here is invented: a member missing from those sources is not used by the script.
 */

/* ---- Globals ([dts] global.d.ts, `declare global`) ---- */

/** [dts] global.d.ts `setTimeout` / `clearTimeout`: a number timer id. */
declare function setTimeout(callback: () => void, timeout?: number): number;
declare function clearTimeout(timerId: number): void;

/** [dts] global.d.ts `console` (subset). */
declare const console: {
  log(...args: any[]): void;
  warn(...args: any[]): void;
  error(...args: any[]): void;
};

/** [dts] global.d.ts `class Data`: binary messages; the script only tells them apart from text. */
interface Data {}

/**
 * [dts] global.d.ts `class WebSocket`; [docs] "WebScoket". Not the WHATWG interface: no subprotocols, a message
 * handler that receives the text itself, and a close handler that receives only a reason, never the code.
 */
declare class WebSocket {
  constructor(url: string);
  readonly url: string;
  onopen?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: string | Data) => void;
  onclose?: (reason?: string) => void;
  send(message: string | Data): void;
  close(code?: 1000 | 1001 | 1002 | 1003, reason?: string): void;
}

/** [dts] global.d.ts `namespace Storage`; [docs] "Storage": private to the script unless `shared`. */
declare namespace Storage {
  function set<T>(key: string, value: T, options?: { shared: boolean }): boolean;
  function get<T>(key: string, options?: { shared: boolean }): T | null;
  function remove(key: string, options?: { shared: boolean }): void;
  function contains(key: string, options?: { shared: boolean }): boolean;
}

/** [dts] global.d.ts `namespace BackgroundKeeper`; [docs] "BackgroundKeeper" (main app only, `Script.env === "index"`). */
declare namespace BackgroundKeeper {
  const isActive: Promise<boolean>;
  function keepAlive(): Promise<boolean>;
  function stopKeepAlive(): Promise<void>;
}

/** [dts] global.d.ts `namespace QRCode`; [docs] "QRCode": `scan()` opens the app's scanner, null when cancelled. */
declare namespace QRCode {
  function scan(): Promise<string | null>;
}

/** [dts] scripting.d.ts: `createElement` and `Fragment` are globals; TSX compiles to them (jsxFactory createElement). */
declare const createElement: (type: (props: any) => ScriptingVirtualNode | null, props: any, ...children: any[]) => ScriptingVirtualNode;
declare const Fragment: (props: any) => ScriptingVirtualNode;

declare namespace JSX {
  /** [dts] scripting.d.ts `namespace JSX { interface Element extends VirtualNode }`. */
  interface Element extends ScriptingVirtualNode {}
  interface ElementChildrenAttribute {
    children: {};
  }
  interface IntrinsicAttributes extends ScriptingCommonViewProps {
    key?: string | number;
  }
}

/** [dts] scripting.d.ts `type VirtualNode`: what `createElement` returns (declared here so JSX can name it). */
type ScriptingVirtualNode = {
  isInternal: boolean;
  props: any;
  render: (props: any) => any;
};

/** [dts] `CommonViewProps` members used here (ForeAndBackgroundProps, PaddingAndBorderProps, FrameSizeProps,
 * TextViewProps, LiveActivityProps, WidgetProps, NavigationProps, ViewStyleProps). */
type ScriptingCommonViewProps = {
  foregroundStyle?: import("scripting").Color;
  background?: import("scripting").Color;
  padding?: true | number | { horizontal?: number | true; vertical?: number | true; top?: number | true; bottom?: number | true };
  frame?: { width?: number; height?: number; maxWidth?: number | "infinity"; alignment?: "leading" | "center" | "trailing" };
  font?: import("scripting").Font | number;
  fontWeight?: import("scripting").FontWeight;
  lineLimit?: number;
  monospacedDigit?: boolean;
  opacity?: number;
  tint?: import("scripting").Color;
  activityBackgroundTint?: import("scripting").Color | { light: import("scripting").Color; dark: import("scripting").Color };
  activitySystemActionForegroundColor?: import("scripting").Color | { light: import("scripting").Color; dark: import("scripting").Color };
  widgetURL?: string;
  navigationTitle?: string;
};

/* ---- The "scripting" module ([dts] scripting.d.ts) ---- */

declare module "scripting" {
  /** [dts] `type VirtualNode`. */
  export type VirtualNode = ScriptingVirtualNode;
  /** [dts] `type FunctionComponent<P>`. */
  export type FunctionComponent<P = {}> = (props: P) => VirtualNode;

  /** [dts] `type Color`: hex strings and keyword colors (subset of the keywords). */
  export type Color = `#${string}` | "black" | "white" | "clear" | "gray" | "red" | "green" | "blue" | "orange" | "yellow"
    | "purple" | "brown" | "cyan" | "systemGray" | "systemGray2" | "systemGray3" | "systemGray4" | "systemGray5" | "systemGray6"
    | "systemRed" | "systemGreen" | "systemBlue" | "systemOrange" | "systemYellow" | "systemPink" | "systemPurple"
    | "systemTeal" | "systemIndigo" | "systemBrown" | "systemMint" | "systemCyan" | "secondaryLabel" | "label";
  export type Font = "largeTitle" | "title" | "title2" | "title3" | "headline" | "subheadline" | "body" | "callout" | "footnote" | "caption" | "caption2";
  export type FontWeight = "ultraLight" | "thin" | "light" | "regular" | "medium" | "semibold" | "bold" | "heavy" | "black";
  export type HorizontalAlignment = "leading" | "center" | "trailing";
  export type VerticalAlignment = "top" | "center" | "bottom" | "firstTextBaseline" | "lastTextBaseline";
  type Child = VirtualNode | boolean | undefined | null;
  /** [dts] the children type of the container views: a node, or an array of nodes and arrays of nodes. */
  type Children = Child | (Child | Child[])[];

  export type CommonViewProps = ScriptingCommonViewProps;

  /** [dts] `VStackProps`, `HStackProps`, `ZStackProps`, `Spacer`. */
  export const VStack: FunctionComponent<{ alignment?: HorizontalAlignment; spacing?: number; children?: Children } & CommonViewProps>;
  export const HStack: FunctionComponent<{ alignment?: VerticalAlignment; spacing?: number; children?: Children } & CommonViewProps>;
  export const ZStack: FunctionComponent<{ alignment?: "leading" | "center" | "trailing"; children?: Children } & CommonViewProps>;
  export const Spacer: FunctionComponent<{ minLength?: number }>;
  /** [dts] `TextProps` (the children form). */
  export const Text: FunctionComponent<{ children: null | string | number | boolean | (string | number | boolean | undefined | null)[] } & CommonViewProps>;
  /** [dts] `SystemImageProps` of `Image`. */
  export const Image: FunctionComponent<{ systemName: string } & CommonViewProps>;
  /** [dts] `NormalProgressViewProps` of `ProgressView`. */
  export const ProgressView: FunctionComponent<{ value?: number; total?: number; title?: string } & CommonViewProps>;
  /** [dts] `DateLabelProps`: `style: "timer"` counts down to a future date and up from a past one. */
  export const DateLabel: FunctionComponent<{ date: Date; style: "date" | "time" | "timer" | "relative" | "offset" } & CommonViewProps>;
  /** [dts] `RoundedRectangleProps` (ShapeProps `fill`, `stroke`). */
  export const RoundedRectangle: FunctionComponent<{ cornerRadius: number; fill?: Color; stroke?: Color } & CommonViewProps>;
  /** [dts] `ListProps`, `SectionProps`, `NavigationStackProps`, `TextFieldProps`, `ButtonProps`. */
  export const List: FunctionComponent<{ children?: Children } & CommonViewProps>;
  export const Section: FunctionComponent<{ title?: string; children?: Children } & CommonViewProps>;
  export const NavigationStack: FunctionComponent<{ children: Children }>;
  export const TextField: FunctionComponent<{ title: string; value: string; onChanged: (value: string) => void; prompt?: string } & CommonViewProps>;
  export const Button: FunctionComponent<{ title: string; action: () => void; systemImage?: string } & CommonViewProps>;

  /**
   * [dts] scripting.d.ts `declare const fetch`, `type RequestInit` (subset: `timeout` is in seconds), `class
   * Response` (`status`, `json()`).
   */
  export interface Response {
    readonly status: number;
    json(): Promise<any>;
  }
  export type RequestInit = { method?: string; headers?: Record<string, string>; body?: string | null; timeout?: number };
  export const fetch: (url: string, init?: RequestInit) => Promise<Response>;

  /** [dts] `useState`, `useEffect`. */
  export function useState<T>(value: T | (() => T)): [T, (state: T | ((previous: T) => T)) => void];
  export function useEffect(setup: () => (() => void) | void, deps: any[]): void;

  /** [dts] `declare namespace Navigation`; [docs] "Quick Start" (present, then `Script.exit()`). */
  export namespace Navigation {
    function present<T = any>(options: VirtualNode | { element: VirtualNode }): Promise<T>;
  }

  /** [dts] `declare namespace Script` (subset). */
  export namespace Script {
    const env: "index" | "widget" | "intent" | "app_intents" | "notification" | "assistant_tool" | "keyboard" | "control_widget" | "live_activity" | "alarm_live_activity" | "translation_ui_provider" | "home_screen";
    const name: string;
    function exit(result?: any): void;
  }

  /** [dts] `interface NotificationRequest`, `interface NotificationInfo` (non-deprecated members). */
  export interface NotificationRequest {
    identifier: string;
    content: { title: string; subtitle: string; body: string; userInfo: Record<string, any>; threadIdentifier: string };
  }
  export interface NotificationInfo {
    date: Date;
    request: NotificationRequest;
  }
  /** [dts] `declare namespace Notification`; [docs] "Notification". No trigger = delivered now. */
  export namespace Notification {
    function schedule(options: {
      title: string;
      subtitle?: string;
      body?: string;
      silent?: boolean;
      interruptionLevel?: "active" | "passive" | "timeSensitive";
      userInfo?: Record<string, any>;
      threadIdentifier?: string;
      tapAction?: "none" | { type: "openURL"; url: string };
    }): Promise<boolean>;
    function getAllDeliveredsOfCurrentScript(): Promise<NotificationInfo[]>;
    function removeDelivereds(identifiers: string[]): Promise<void>;
  }

  /** [dts] `type LiveActivityState`; [docs] "LiveActivity" section 2. */
  export type LiveActivityState = "active" | "dismissed" | "ended" | "stale";
  /** [dts] `LiveActivityOptions`, `LiveActivityUpdateOptions`, `LiveActivityEndOptions` (`dismissTimeInterval` in seconds). */
  export type LiveActivityOptions = { staleDate?: number | Date; relevanceScore?: number };
  export type LiveActivityUpdateOptions = LiveActivityOptions & { alert?: { title: string; body: string } };
  export type LiveActivityEndOptions = LiveActivityOptions & { dismissTimeInterval?: number };
  /** [dts] `interface LiveActivityUIBuilder<T>`. */
  export interface LiveActivityUIBuilder<T> {
    (contentState: T): VirtualNode;
  }
  /** [dts] `LiveActivityUIProps`: Lock Screen `content`, the compact and minimal island, the expanded regions as children. */
  export function LiveActivityUI(props: {
    content: VirtualNode;
    compactLeading: VirtualNode;
    compactTrailing: VirtualNode;
    minimal: VirtualNode;
    children: VirtualNode | VirtualNode[];
  }): VirtualNode;
  export function LiveActivityUIExpandedLeading(props: { children: VirtualNode }): VirtualNode;
  export function LiveActivityUIExpandedTrailing(props: { children: VirtualNode }): VirtualNode;
  export function LiveActivityUIExpandedCenter(props: { children: VirtualNode }): VirtualNode;
  export function LiveActivityUIExpandedBottom(props: { children: VirtualNode }): VirtualNode;

  /** [dts] `declare class LiveActivity<T>`; [docs] "LiveActivity" sections 5–7: register in `live_activity.tsx`. */
  export class LiveActivity<T> {
    static register<T>(name: string, builder: LiveActivityUIBuilder<T>): () => LiveActivity<T>;
    readonly activityId: string | undefined;
    readonly started: boolean;
    start(contentState: T, options?: LiveActivityOptions): Promise<boolean>;
    update(contentState: T, options?: LiveActivityUpdateOptions): Promise<boolean>;
    end(contentState: T, options?: LiveActivityEndOptions): Promise<boolean>;
    getActivityState(): Promise<LiveActivityState | null>;
    addUpdateListener(listener: (state: LiveActivityState) => void): void;
    removeUpdateListener(listener: (state: LiveActivityState) => void): void;
    static areActivitiesEnabled(): Promise<boolean>;
    static endAllActivities(options?: LiveActivityEndOptions): Promise<boolean>;
  }
}
