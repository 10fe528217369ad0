/*
 * The part of the Scripting app's API (iOS, "Scripting" by thomfang) this script uses, copied from the app's
 * own published declarations and narrowed to what is used. Sources, each named again at the declarations:
 *
 *  [dts]   the app's declaration files as the app exports them into a script project (`dts/scripting.d.ts`,
 *          `dts/global.d.ts`), here as published in the public repository Honye/scripting-scripts (2026-08);
 *  [docs]  the app's documentation, public repository ScriptingApp/ScriptingApp.github.io (also exported with
 *          the declarations, `documentation/`), pages "LiveActivity", "WebScoket" (sic), "Storage", "Keychain",
 *          "BackgroundKeeper" (marked Pro in the docs' index, `doc.json`), "Notification", "Quick Start", "QRCode",
 *          "Script" and "Script / Minimize and resume".
 *
 * Nothing here is invented: a member missing from those sources is not used by the script.
 */

/* ---- Globals ([dts] global.d.ts, `declare global`) ---- */

/** [dts] global.d.ts `setTimeout` / `clearTimeout`: a number timer id. */
declare function setTimeout(callback: () => void, timeout?: number): number;
declare function clearTimeout(timerId: number): void;

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

/**
 * [dts] global.d.ts `namespace Keychain` (subset; `accessibility` defaults to `first_unlock_this_device`); [docs]
 * "Keychain": encrypted, scoped to the script that wrote it, removed with the script.
 */
declare namespace Keychain {
  function set(key: string, value: string, options?: { synchronizable?: boolean }): boolean;
  function get(key: string, options?: { synchronizable?: boolean }): string | null;
  function remove(key: string, options?: { synchronizable?: boolean }): boolean;
  function contains(key: string, options?: { synchronizable?: boolean }): boolean;
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
  foregroundStyle?: import("scripting").ForegroundStyle;
  /** [dts] `SymbolProps.symbolRenderingMode`. */
  symbolRenderingMode?: import("scripting").SymbolRenderingMode;
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
  /**
   * [dts] `ForeAndBackgroundProps.foregroundStyle` (subset of `ShapeStyle`): a color, a color's standard gradient
   * (`ColorWithGradientOrOpacity`), or the primary, secondary and tertiary levels.
   */
  export type ShapeStyle = Color | { color: Color; gradient: true };
  export type ForegroundStyle = ShapeStyle | { primary: ShapeStyle; secondary: ShapeStyle; tertiary?: ShapeStyle };
  /** [dts] `type SymbolRenderingMode`. */
  export type SymbolRenderingMode = "hierarchical" | "monochrome" | "multicolor" | "palette";
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
  /**
   * [dts] `ProgressViewProps`: `NormalProgressViewProps`, or `TimerIntervalProgressViewProps` (the system animates
   * the bar over the interval; `countsDown`, default true, empties it as time passes).
   */
  export const ProgressView: FunctionComponent<
    ({ value?: number; total?: number; title?: string } | { timerFrom: Date; timerTo: Date; countsDown?: boolean }) & CommonViewProps
  >;
  /** [dts] `DateLabelProps`: `style: "timer"` counts down to a future date and up from a past one. */
  export const DateLabel: FunctionComponent<{ date: Date; style: "date" | "time" | "timer" | "relative" | "offset" } & CommonViewProps>;
  /** [dts] `TimerIntervalLabelProps` (the `Date` form): a timer within `from`…`to`, counting down by default. */
  export const TimerIntervalLabel: FunctionComponent<{ from: Date; to: Date; pauseTime?: Date; countsDown?: boolean; showsHours?: boolean } & CommonViewProps>;
  /** [dts] `RoundedRectangleProps` (ShapeProps `fill`, `stroke`). */
  export const RoundedRectangle: FunctionComponent<{ cornerRadius: number; fill?: Color; stroke?: Color } & CommonViewProps>;
  /** [dts] `ListProps`, `SectionProps`, `NavigationStackProps`, `TextFieldProps`, `SecureFieldProps`, `ButtonProps` (`role`: `ButtonRole`). */
  export const List: FunctionComponent<{ children?: Children } & CommonViewProps>;
  export const Section: FunctionComponent<{ title?: string; children?: Children } & CommonViewProps>;
  export const NavigationStack: FunctionComponent<{ children: Children }>;
  export const TextField: FunctionComponent<{ title: string; value: string; onChanged: (value: string) => void; prompt?: string } & CommonViewProps>;
  export const SecureField: FunctionComponent<{ title: string; value: string; onChanged: (value: string) => void; prompt?: string } & CommonViewProps>;
  export const Button: FunctionComponent<{ title: string; action: () => void; systemImage?: string; role?: "destructive" | "cancel" | "close" | "confirm" } & CommonViewProps>;

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

  /**
   * [dts] `declare namespace Navigation`; [docs] "Quick Start" (present, then `Script.exit()`). `useDismiss` closes
   * the presented page from inside it (and resolves `present`).
   */
  export namespace Navigation {
    function present<T = any>(options: VirtualNode | { element: VirtualNode }): Promise<T>;
    function useDismiss(): (result?: any) => void;
  }

  /** [dts] `declare namespace Script` (subset); [docs] "Script", "Script / Minimize and resume". */
  export namespace Script {
    const env: "index" | "widget" | "intent" | "app_intents" | "notification" | "assistant_tool" | "keyboard" | "control_widget" | "live_activity" | "alarm_live_activity" | "translation_ui_provider" | "home_screen";
    const name: string;
    /** What the script was run with; from a `scripting://run/NAME?a=1` URL every value is a string. */
    const queryParameters: Record<string, any>;
    function exit(result?: any): void;
    /** `scripting://run/NAME?…`: runs the script, or resumes it (`onResume`) while an instance is alive. */
    function createRunURLScheme(scriptName: string, queryParameters?: Record<string, string>): string;
    /** Whether this environment can minimize a script (not in every extension, not in multiple windows mode). */
    function supportsMinimization(): boolean;
    /** Swiping the first presented page down minimizes the script instead of ending it; `present` stays pending. */
    function enableMinimize(enabled?: boolean): void;
    type ResumeEventDetails = {
      resumeFromMinimized: boolean;
      widgetParameter: string | null;
      controlWidgetParameter: string | null;
      queryParameters: Record<string, any> | null;
      notificationInfo: NotificationInfo | null;
    };
    /** A live instance is brought back (from minimized, by its run URL, a notification tap, `Script.run`). */
    function onResume(callback: (eventDetails: ResumeEventDetails) => void): () => void;
    /** Whether the user has Scripting Pro. */
    function hasFullAccess(): boolean;
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
      /** Without one, a tap opens Scripting and runs the script. */
      tapAction?: "none" | { type: "runScript"; scriptName: string } | { type: "openURL"; url: string };
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

  /**
   * [dts] `declare class LiveActivity<T>`; [docs] "LiveActivity" sections 5–7 and 9.3: register in
   * `live_activity.tsx`; Live Activities outlive the script, and `from` finds one again by its id after a re-run.
   */
  export class LiveActivity<T> {
    static register<T>(name: string, builder: LiveActivityUIBuilder<T>): () => LiveActivity<T>;
    readonly activityId: string | undefined;
    start(contentState: T, options?: LiveActivityOptions): Promise<boolean>;
    update(contentState: T, options?: LiveActivityUpdateOptions): Promise<boolean>;
    end(contentState: T, options?: LiveActivityEndOptions): Promise<boolean>;
    getActivityState(): Promise<LiveActivityState | null>;
    addUpdateListener(listener: (state: LiveActivityState) => void): void;
    removeUpdateListener(listener: (state: LiveActivityState) => void): void;
    static areActivitiesEnabled(): Promise<boolean>;
    static addActivitiesEnabledListener(listener: (enabled: boolean) => void): void;
    static removeActivitiesEnabledListener(listener: (enabled: boolean) => void): void;
    /** An existing Live Activity by its id, as an instance of the registered `name`; null when there is none. */
    static from<T>(activityId: string, name: string): Promise<LiveActivity<T> | null>;
    /** The ids of the Scripting app's current Live Activities (every script's). */
    static getAllActivitiesIds(): Promise<string[]>;
  }
}
