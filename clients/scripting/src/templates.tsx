import { Color, DateLabel, ForegroundStyle, HStack, Image, ProgressView, RoundedRectangle, Spacer, SymbolRenderingMode, Text, VStack, VirtualNode, ZStack } from "scripting";
import { percentText } from "../../typescript/src/liveActivityRules";
import { color } from "./colors";
import type { ActivityContent } from "./content";

/**
 * Aivi templates (Aivi template docs: `progress` simple and segmented, `monitor`, `generic`), travelling in the
 * state under `template`. Values are `{value, text_color?, formatter?}`; icons an SF Symbol name or an Icon
 * object; colors Aivi's named system colors.
 */
type Obj = { [key: string]: any };

/** Width the bars are laid out on: a Lock Screen card is about 340 pt wide less its padding. */
const BAR_WIDTH = 300;
const BAR_HEIGHT = 8;

export function hasTemplate(content: ActivityContent): boolean {
  const t = content.state.template;
  return typeof t === "object" && t !== null && typeof t.template === "string";
}

function template(content: ActivityContent): Obj {
  return content.state.template as Obj;
}

/** A Value object: its text, its color, and a live timer for `time_since` / `time_until` over an ISO 8601 time. */
function Value({ value, size, fallback }: { value: Obj | undefined; size: "headline" | "body" | "caption" | "title3"; fallback: Color }): VirtualNode | null {
  if (!value || value.value === undefined) return null;
  const tint = color(value.text_color) ?? fallback;
  const formatter = value.formatter;
  if (formatter === "time_since" || formatter === "time_until") {
    const at = Date.parse(String(value.value));
    if (!Number.isNaN(at)) return <DateLabel date={new Date(at)} style="timer" font={size} monospacedDigit={true} foregroundStyle={tint} />;
  }
  return <Text font={size} lineLimit={1} foregroundStyle={tint}>{String(value.value)}</Text>;
}

/**
 * An Aivi icon: an SF Symbol name (monochrome, the default color), or an Icon object (Aivi template docs, "Icon
 * object"): `rendering_mode` as the symbol rendering mode, `primary_color` for the symbol, `secondary_color` and
 * `tertiary_color` for the other layers in `palette` mode, `color_rendering: gradient` as the color's gradient.
 */
export function iconProps(icon: unknown): { systemName: string; symbolRenderingMode?: SymbolRenderingMode; foregroundStyle?: ForegroundStyle } {
  if (typeof icon === "string") return { systemName: icon, foregroundStyle: "white" };
  if (typeof icon !== "object" || icon === null) return { systemName: "circle.fill", foregroundStyle: "white" };
  const o = icon as Obj;
  const gradient = o.color_rendering === "gradient";
  const style = (c: Color): Color | { color: Color; gradient: true } => (gradient ? { color: c, gradient: true } : c);
  const primary = color(o.primary_color) ?? "white";
  const mode = ["monochrome", "hierarchical", "palette", "multicolor"].includes(o.rendering_mode) ? (o.rendering_mode as SymbolRenderingMode) : undefined;
  const props: ReturnType<typeof iconProps> = { systemName: String(o.name) };
  if (mode) props.symbolRenderingMode = mode;
  if (mode === "palette") {
    const secondary = color(o.secondary_color);
    const tertiary = color(o.tertiary_color);
    props.foregroundStyle = secondary
      ? { primary: style(primary), secondary: style(secondary), ...(tertiary ? { tertiary: style(tertiary) } : {}) }
      : style(primary);
  } else if (mode !== "multicolor" || o.primary_color !== undefined) {
    props.foregroundStyle = style(primary);
  }
  return props;
}

export function TemplateIcon({ content, size }: { content: ActivityContent; size: number }): VirtualNode {
  return <Image {...iconProps(template(content).icon)} font={size} />;
}

/** Segments side by side with gaps (`split`), or on one track (`layered`); hatched tracks drawn as outlines. */
function SegmentedBar({ bar }: { bar: Obj }): VirtualNode {
  const segments: Obj[] = Array.isArray(bar.segments) ? bar.segments : [];
  const value = Math.min(1, Math.max(0, Number(bar.value) || 0));
  const layered = bar.display === "layered";
  const gap = layered ? 0 : 3;
  let start = 0;
  const parts = segments.map((segment, i) => {
    const share = Math.max(0, Number(segment.value) || 0);
    const filled = share > 0 ? Math.min(1, Math.max(0, (value - start) / share)) : 0;
    start += share;
    const width = Math.max(2, share * BAR_WIDTH - gap);
    const track = color(segment.track_color) ?? "systemGray4";
    const hatched = segment.track_fill === "hatched";
    return (
      <VStack key={i} alignment="leading" spacing={3}>
        <ZStack alignment="leading" frame={{ width, height: BAR_HEIGHT }}>
          {hatched ? <RoundedRectangle cornerRadius={BAR_HEIGHT / 2} stroke={track} /> : <RoundedRectangle cornerRadius={BAR_HEIGHT / 2} fill={track} />}
          <RoundedRectangle cornerRadius={BAR_HEIGHT / 2} fill={color(segment.fill_color) ?? "systemBlue"} frame={{ width: width * filled, height: BAR_HEIGHT }} />
        </ZStack>
        {typeof segment.label === "string" ? <Text font="caption" foregroundStyle="secondaryLabel" frame={{ width }}>{segment.label}</Text> : null}
      </VStack>
    );
  });
  return <HStack spacing={gap} alignment="top">{parts}</HStack>;
}

function ProgressTemplate({ t, text }: { t: Obj; text: Color }): VirtualNode {
  const bar: Obj = t.progress ?? {};
  return (
    <VStack alignment="leading" spacing={6}>
      <HStack spacing={8}>
        <Image {...iconProps(t.icon)} font={18} />
        <Value value={t.header_left} size="headline" fallback={text} />
        <Spacer />
        <Value value={t.header_right} size="headline" fallback={text} />
      </HStack>
      {bar.style === "segmented" ? (
        <SegmentedBar bar={bar} />
      ) : (
        <ProgressView value={Math.min(1, Math.max(0, Number(bar.value) || 0))} total={1} tint={color(bar.color) ?? "systemBlue"} />
      )}
      <HStack>
        <Value value={t.footer_left} size="caption" fallback={text} />
        <Spacer />
        <Value value={t.footer_right} size="caption" fallback={text} />
      </HStack>
    </VStack>
  );
}

function Column({ column, primary, text }: { column: Obj | undefined; primary: boolean; text: Color }): VirtualNode | null {
  if (!column) return null;
  return (
    <VStack alignment="leading" spacing={2}>
      {typeof column.header === "string" ? <Text font="caption" foregroundStyle="secondaryLabel">{column.header}</Text> : null}
      <Value value={column.value} size={primary ? "title3" : "body"} fallback={text} />
      {typeof column.footer === "string" ? <Text font="caption" foregroundStyle="secondaryLabel">{column.footer}</Text> : null}
    </VStack>
  );
}

function MonitorTemplate({ t, text }: { t: Obj; text: Color }): VirtualNode {
  const primary = t.primary_column === "right" ? "right" : "left";
  return (
    <HStack spacing={12}>
      <Image {...iconProps(t.icon)} font={22} />
      <Column column={t.left_column} primary={primary === "left"} text={text} />
      <Spacer />
      <Column column={t.right_column} primary={primary === "right"} text={text} />
    </HStack>
  );
}

function GenericTemplate({ t, text, remainingUntil }: { t: Obj; text: Color; remainingUntil?: number }): VirtualNode {
  const value = Math.min(1, Math.max(0, Number(t.progress) || 0));
  return (
    <VStack alignment="leading" spacing={6}>
      <HStack spacing={8}>
        <Image {...iconProps(t.icon)} font={18} />
        {typeof t.state === "string" ? <Text font="headline" foregroundStyle={text}>{t.state}</Text> : null}
        <Spacer />
        <Text font="headline" monospacedDigit={true} foregroundStyle={text}>{percentText(value)}</Text>
      </HStack>
      <ProgressView value={value} total={1} tint="systemBlue" />
      {remainingUntil !== undefined ? <DateLabel date={new Date(remainingUntil)} style="timer" font="caption" foregroundStyle={text} /> : null}
    </VStack>
  );
}

export function TemplateBody({ content, text }: { content: ActivityContent; text: Color }): VirtualNode {
  const t = template(content);
  if (t.template === "monitor") return <MonitorTemplate t={t} text={text} />;
  if (t.template === "generic") return <GenericTemplate t={t} text={text} remainingUntil={content.remaining_until} />;
  return <ProgressTemplate t={t} text={text} />;
}

/** Dynamic Island compact trailing: the progress template's `compact_value`, the primary monitor value, or the percentage. */
export function TemplateCompactTrailing({ content }: { content: ActivityContent }): VirtualNode {
  const t = template(content);
  if (t.template === "progress" && t.compact_value) return <Value value={t.compact_value} size="caption" fallback="white" />;
  if (t.template === "monitor") {
    const column = t.primary_column === "right" ? t.right_column : t.left_column;
    return <Value value={column?.value} size="caption" fallback="white" />;
  }
  const v = t.template === "generic" ? Number(t.progress) : Number(t.progress?.value);
  return <Text font="caption" monospacedDigit={true}>{Number.isFinite(v) ? percentText(v) : ""}</Text>;
}
